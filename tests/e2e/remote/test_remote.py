#!/usr/bin/env python3
"""test_remote -- client and server on different hosts: two network namespaces this test
creates (kb-<pid>-a for the server host, kb-<pid>-b for the client host), joined by a veth
pair with 10.77.0.1/24 and 10.77.0.2/24 inside them only, and removed on every exit path.

The agent (`kneebench serve-agent --bind 10.77.0.1 --serve-bind 10.77.0.1 --token FILE`) runs
in a, starts gray-static under the contract's limits on its side; `kneebench load` in b drives
it across the veth; the agent samples and stops it. `kneebench curve --backend remote` does
the same for a tiny matrix (one runtime, one route, one low rate, 1 s) and its evidence names
the target and the agent. Also: refusals over the wire, an agent started without --bind is
not reachable from the other host and its fixtures bind loopback unless --serve-bind says
otherwise; on this host's loopback, a local user without the token drives nothing, one
session cannot touch another's fixture, idle or unread connections evict or stall no
session, and the agent leaves no directory of its own behind.
"""
import hashlib
import hmac
import atexit
import glob
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from kbenv import BUILD, CONTRACT, KB, need
from kbtest import test, skip, exit_with

PID = os.getpid()
NS_A, NS_B = f"kb-{PID}-a", f"kb-{PID}-b"
VETH_A, VETH_B = f"kb{PID % 1000000}a", f"kb{PID % 1000000}b"
ADDR_A, ADDR_B = "10.77.0.1", "10.77.0.2"
BOUND_S = 30
TOKDIR = tempfile.mkdtemp(prefix="kb-remote-token-")
TOKEN_SECRET = os.urandom(24).hex()
TOKEN = os.path.join(TOKDIR, "token")
with open(os.open(TOKEN, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as _f:
    _f.write(TOKEN_SECRET + "\n")
atexit.register(shutil.rmtree, TOKDIR, True)


def sh(*argv, check=True):
    p = subprocess.run(list(argv), capture_output=True, text=True, timeout=BOUND_S)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
    return p


def in_ns(ns):
    """Enter only the network namespace: `ip netns exec` would also remount /sys, hiding the
    cgroup controllers the agent's sandbox needs on its host."""
    return ["nsenter", f"--net=/run/netns/{ns}", "--"]


class Hosts:
    """The two namespaces and the veth between them; torn down exactly once."""

    def __init__(self):
        self.up = False
        self.procs = []

    def __enter__(self):
        if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("nsenter"):
            skip("needs root, iproute2 and nsenter to make network namespaces")
        self.up = True
        atexit.register(self.down)
        for ns in (NS_A, NS_B):
            sh("ip", "netns", "add", ns)
        sh("ip", "link", "add", VETH_A, "type", "veth", "peer", "name", VETH_B)
        for ns, dev, addr in ((NS_A, VETH_A, ADDR_A), (NS_B, VETH_B, ADDR_B)):
            sh("ip", "link", "set", dev, "netns", ns)
            sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        return self

    def spawn(self, ns, *argv):
        p = subprocess.Popen([*in_ns(ns), *argv], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        self.procs.append(p)
        return p

    def run(self, ns, *argv, timeout=BOUND_S):
        return subprocess.run([*in_ns(ns), *argv], capture_output=True,
                              text=True, timeout=timeout)

    def down(self):
        if not self.up:
            return
        self.up = False
        for p in self.procs:          # our own processes, by PID
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for ns in (NS_A, NS_B):       # deleting a namespace deletes its veth end
            sh("ip", "netns", "del", ns, check=False)

    def __exit__(self, *exc):
        self.down()


def start_agent(hosts, *args):
    """The agent in host a and its address. Lines before "listening on" (the sweep of cgroups
    a dead agent or runner left, which other runs on this host may leave) are passed over;
    never a read to EOF from an agent that runs on (it would wait for ever)."""
    p = hosts.spawn(NS_A, KB, "serve-agent", "--port", "0", "--token", TOKEN, *args)
    seen = []
    # the agent says where it listens before it serves, or exits (EOF) when it cannot
    for line in iter(p.stdout.readline, ""):
        if "listening on " in line:
            return p, line.rsplit("listening on ", 1)[1].strip()
        seen.append(line)
        if len(seen) > 20:
            break
    raise AssertionError(f"serve-agent did not start: {''.join(seen)[-2000:]!r}")


def stop_agent(p):
    """SIGTERM by PID: the agent must stop its fixture and exit 0 (under ASan: no report)."""
    p.send_signal(signal.SIGTERM)
    rest = p.communicate(timeout=15)[0]
    assert p.returncode == 0, f"serve-agent exited {p.returncode}:\n{rest[-3000:]}"
    assert "Sanitizer" not in rest, rest[-3000:]


def call(hosts, addr, *cmds):
    p = hosts.run(NS_B, KB, "serve-agent", "--token", TOKEN, "--call", addr, *cmds)
    lines = p.stdout.splitlines()
    return p.returncode, lines, p.stderr


def ok_json(line):
    assert line.startswith("ok "), f"agent answered: {line}"
    return json.loads(line[3:])


class Session:
    """One `serve-agent --call` session kept open (commands on its standard input), as a
    runner holds one for the fixture it started: the fixture is the session's."""

    def __init__(self, argv_prefix, addr, token=TOKEN):
        self.p = subprocess.Popen([*argv_prefix, KB, "serve-agent", "--token", token,
                                   "--call", addr], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  bufsize=1)

    def ask(self, cmd, timeout=BOUND_S):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        ready, _, _ = select.select([self.p.stdout], [], [], timeout)
        assert ready, f"no answer to {cmd!r}"
        return self.p.stdout.readline().rstrip("\n")

    def close(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(BOUND_S)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def authed_socket(port, secret=TOKEN_SECRET):
    """A connection to the agent on this host's loopback, past its greeting and proof."""
    sk = socket.create_connection(("127.0.0.1", port), timeout=BOUND_S)
    f = sk.makefile("rb")
    hello = f.readline().decode().rstrip("\n")
    assert hello.startswith("hello kneebench-agent 2 "), hello
    proof = hmac.new(secret.encode(), hello.encode(), hashlib.sha256).hexdigest()
    sk.sendall(f"auth {proof}\n".encode())
    answer = f.readline().decode()
    assert answer.startswith("ok "), answer
    return sk, f


def free_port():
    with socket.socket() as s:   # any port free here is free in the fresh namespace
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need_builds():
    for b in ("kneebench", "gray-static"):
        need(os.path.join(BUILD, b))


@test
def load_across_hosts_through_the_agent():
    need_builds()
    port = free_port()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--serve-bind", ADDR_A, "--rundir",
                                  os.path.join(d, "run"))
        assert addr == f"{ADDR_A}:{addr.split(':')[1]}"
        with Session(in_ns(NS_B), addr) as sess:
            ident = ok_json(sess.ask("identity"))
            started = ok_json(sess.ask(f"start gray-static {port}"))
            limits = ok_json(sess.ask("limits"))
            assert ident["protocol"] == 2 and "gray-static" in ident["runtimes"]
            assert ident["serve_bind"] == ADDR_A, ident
            assert started == {"started": "gray-static", "port": port, "bind": ADDR_A}
            lim = CONTRACT["limits"]
            assert limits["cpus"] == lim["cpus"] and limits["memory_bytes"] == lim["memory_bytes"]
            assert limits["pids_max"] == lim["pids"], limits

            out = os.path.join(d, "load.json")
            p = hosts.run(NS_B, KB, "load", "--url", f"http://{ADDR_A}:{port}/plaintext",
                          "--route", "plaintext", "--rate", "300", "--duration", "1", "--warmup",
                          "0.5", "--drain", "1", "--threads", "1", "--connections", "4", "--quiet",
                          "--json", out)
            assert p.returncode == 0, f"load across the veth: exit {p.returncode}: {p.stderr}"
            with open(out) as f:
                j = json.load(f)
            assert j["scheduled"] > 0 and j["completed"] == j["scheduled"], j
            assert j["errors"]["total"] == 0 and j["mismatches"]["total"] == 0, j

            sample = ok_json(sess.ask("sample"))
            assert sample["alive"] is True and sample["processes"] >= 1
            assert sample["rss_bytes"] > 0
            # CPU time comes in 10 ms ticks: a few hundred requests may read as 0, never negative.
            assert isinstance(sample["cpu_seconds"], float) and sample["cpu_seconds"] >= 0
            assert sample["fds"] > 0 and sample["threads"] >= 1, sample
            assert ok_json(sess.ask("stop")) == {"stopped": "gray-static"}
            assert sess.ask("sample").startswith("err ")
        # The fixture is gone: nothing answers on its port any more.
        p = hosts.run(NS_B, "python3", "-c", "import socket,sys; s=socket.socket(); "
                      f"sys.exit(s.connect_ex(('{ADDR_A}', {port})) == 0)")
        assert p.returncode == 0, "the stopped fixture's port still accepts"
        stop_agent(agent)


@test
def fixtures_bind_loopback_unless_told():
    """An agent bound to the network starts fixtures on its loopback unless --serve-bind
    names an address: the other host cannot reach them."""
    need_builds()
    port = free_port()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--rundir", os.path.join(d, "run"))
        with Session(in_ns(NS_B), addr) as sess:
            started = ok_json(sess.ask(f"start gray-static {port}"))
            assert started["bind"] == "127.0.0.1", started
            p = hosts.run(NS_B, "python3", "-c", "import socket,sys; s=socket.socket(); "
                          "s.settimeout(3); "
                          f"sys.exit(s.connect_ex(('{ADDR_A}', {port})) == 0)")
            assert p.returncode == 0, "a fixture of an agent bound to the network was reachable"
        stop_agent(agent)


def read_json(path):
    with open(path) as f:
        return json.load(f)


@test
def curve_across_hosts_through_the_agent():
    need_builds()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        os.chmod(d, 0o755)
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--serve-bind", ADDR_A, "--rundir",
                                  os.path.join(d, "agent"))
        run = os.path.join(d, "run")
        p = hosts.spawn(NS_B, KB, "curve", "--run", run, "--backend", "remote",
                        "--agent", addr, "--agent-token", TOKEN, "--target", ADDR_A,
                        "--runtimes", "gray-static",
                        "--routes", "plaintext", "--rates", "200", "--duration", "1",
                        "--warmup", "0.5", "--drain", "1", "--threads", "1", "--connections",
                        "4", "--free-ports", "--client-sched", "other")
        out = p.communicate(timeout=120)[0]      # on a timeout, down() ends it by its PID
        assert p.returncode == 0, f"curve exited {p.returncode}:\n{out[-3000:]}"
        assert f"target {ADDR_A}" in out and f"agent {addr}" in out, out

        rj = read_json(os.path.join(run, "run.json"))
        assert rj["backend"] == "remote", rj
        assert rj["target"]["host"] == ADDR_A and rj["target"]["agent"] == addr, rj["target"]
        assert rj["target"]["agent_identity"]["protocol"] == 2, rj["target"]
        assert rj["runtime_versions"]["gray-static"].startswith("unknown (remote"), rj
        plan = read_json(os.path.join(run, "plan.json"))
        assert plan["target"] == {"host": ADDR_A, "agent": addr}, plan

        fix = os.path.join(run, "fixtures", "gray-static")
        lim = read_json(os.path.join(fix, "limits.json"))
        want = CONTRACT["limits"]
        assert lim["backend"] == "remote" and lim["paths"].startswith(addr + ": "), lim
        assert lim["cpus"] == want["cpus"] and lim["memory_bytes"] == want["memory_bytes"], lim
        assert lim["pids_max"] == want["pids"], lim
        pre = read_json(os.path.join(fix, "preflight.json"))
        assert pre["failed"] is False and pre["plaintext"]["ok"] is True, pre
        ident = read_json(os.path.join(fix, "identity.json"))
        assert ident["agent"] == addr and ident["target"] == ADDR_A and len(ident["sha256"]) == 64
        assert ident["agent_host"]["hostname"] == rj["target"]["agent_identity"]["hostname"]

        points = glob.glob(os.path.join(run, "points", "*"))
        assert len(points) == 1, points
        pt = points[0]
        assert os.path.exists(os.path.join(pt, "DONE")), os.listdir(pt)
        cmd = read_json(os.path.join(pt, "command.json"))
        assert cmd["target"] == ADDR_A, cmd
        lj = read_json(os.path.join(pt, "load.json"))
        assert lj["url"].startswith(f"http://{ADDR_A}:{cmd['port']}/"), lj["url"]
        assert lj["scheduled"] == 200 and lj["completed"] == 200, lj
        assert lj["errors"]["total"] == 0 and lj["mismatches"]["total"] == 0, lj
        v = read_json(os.path.join(pt, "verdict.json"))
        assert v["verdict"] != "failed", v
        assert v["identity_sha256"] == ident["sha256"], v
        # the server's samples came from the agent: its processes on the other host
        assert v["server"]["samples"] >= 1 and v["server"]["rss_max_bytes"] > 0, v["server"]
        assert v["server"]["procs_max"] >= 1 and v["server"]["fds_max"] > 0, v["server"]
        with open(os.path.join(pt, "samples.csv")) as f:
            rows = f.read().splitlines()[1:]
        assert rows and all(int(r.split(",")[3]) > 0 for r in rows), rows

        # the curve stopped its fixture on the agent's host when it ended
        rc, lines, err = call(hosts, addr, "identity")
        assert rc == 0 and ok_json(lines[0])["running"] is None, lines
        stop_agent(agent)


@test
def curve_refuses_remote_without_its_parts():
    need(KB)
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        run = os.path.join(d, "run")
        for args, want in ((["--backend", "remote"], "needs --agent"),
                           (["--backend", "remote", "--agent", "127.0.0.1:1"],
                            "--agent-token FILE"),
                           (["--agent", "127.0.0.1:1"], "are for --backend remote"),
                           (["--backend", "remote", "--agent", "127.0.0.1:1", "--agent-token",
                             TOKEN, "--target", "not-an-address", "--routes", "plaintext"],
                            "IPv4"),
                           (["--backend", "remote", "--agent", "127.0.0.1:1", "--agent-token",
                             TOKEN, "--routes", "plaintext", "--no-limits"],
                            "--no-limits is the agent's")):
            p = subprocess.run([KB, "curve", "--run", run, *args], capture_output=True,
                               text=True, timeout=BOUND_S)
            assert p.returncode == 2 and want in p.stderr, (args, p.returncode, p.stderr)
        # an agent that does not answer: refused before anything runs
        p = subprocess.run([KB, "curve", "--run", run, "--backend", "remote", "--agent",
                            f"127.0.0.1:{free_port()}", "--agent-token", TOKEN, "--routes",
                            "plaintext"],
                           capture_output=True, text=True, timeout=BOUND_S)
        assert p.returncode == 2 and not os.path.exists(os.path.join(run, "run.json")), p.stderr


@test
def agent_exit_stops_a_running_fixture():
    need_builds()
    port = free_port()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--serve-bind", ADDR_A, "--rundir",
                                  os.path.join(d, "run"))
        with Session(in_ns(NS_B), addr) as sess:
            ok_json(sess.ask(f"start gray-static {port}"))
            cgroups = ok_json(sess.ask("limits"))["paths"].split()
            assert cgroups and all(os.path.isdir(c) for c in cgroups), cgroups
            stop_agent(agent)
        left = [c for c in cgroups if os.path.exists(c)]
        assert not left, f"cgroups left after the agent exited: {left}"
        p = hosts.run(NS_B, "python3", "-c", "import socket,sys; s=socket.socket(); "
                      f"sys.exit(s.connect_ex(('{ADDR_A}', {port})) == 0)")
        assert p.returncode == 0, "the fixture outlived its agent"


@test
def refuses_anything_but_its_commands():
    need_builds()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--rundir", os.path.join(d, "run"))
        bad = ["rm -rf /", "start /bin/sh 8080", "start gray-static 0", "start go 80 extra",
               "sample now", "GET / HTTP/1.1", "start", ""]
        rc, lines, err = call(hosts, addr, *bad)
        assert rc == 1 and len(lines) == len(bad), f"{rc} {lines} {err}"
        for cmd, line in zip(bad, lines):
            assert line.startswith("err ") and "refused" in line, f"{cmd!r} -> {line}"
        rc, lines, err = call(hosts, addr, "x" * 400)
        assert rc == 1 and lines and lines[0].startswith("err "), lines
        rc, lines, err = call(hosts, addr, "identity")   # still serving after all that
        assert rc == 0 and ok_json(lines[0])["running"] is None
        stop_agent(agent)


@test
def loopback_only_unless_told():
    need_builds()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--rundir", os.path.join(d, "run"))
        host, port = addr.split(":")
        assert host == "127.0.0.1", addr
        rc, lines, err = call(hosts, f"{ADDR_A}:{port}", "identity")
        assert rc == 2, f"an agent with no --bind answered from the other host: {lines}"
        p = hosts.run(NS_A, KB, "serve-agent", "--token", TOKEN, "--call", addr,
                      "identity")
        assert p.returncode == 0, f"not reachable on its own loopback: {p.stdout}{p.stderr}"


# ---- the agent on this host's loopback: ports, connections, its run directory ----------

class LocalAgent:
    """`kneebench serve-agent` on 127.0.0.1 of this host, in a with block that ends it by
    its own PID whatever the test's outcome."""

    def __init__(self, *args, pre_exec=None, own_token=False):
        # through sh so that the agent's PID (sh execs it) is known before it starts;
        # unbuffered, so that select() sees what readline() has not taken yet. own_token:
        # no --token, the agent makes one in its run directory
        self.own_token = own_token
        tok = [] if own_token else ["--token", TOKEN]
        self.p = subprocess.Popen(["sh", "-c", 'read go; exec "$0" "$@"', KB,
                                   "serve-agent", "--port", "0", *tok, *args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, bufsize=0)
        self._rundir = None
        try:
            if pre_exec:
                pre_exec(self.p.pid)
            self.p.stdin.write(b"go\n")
            self.p.stdin.close()
            self.p.stdin = None         # communicate() must not touch it again
            seen, line = [], ""
            # lines before it (a sweep of what a dead agent or runner left) are passed over
            for raw in iter(self.p.stdout.readline, b""):
                line = raw.decode(errors="replace")
                if "listening on " in line or len(seen) > 20:
                    break
                seen.append(line)
            if "listening on " not in line:
                raise AssertionError(f"serve-agent did not start: {''.join(seen)[-2000:]}")
        except BaseException:
            self.end()
            raise
        self.addr = line.rsplit("listening on ", 1)[1].strip()
        self.port = int(self.addr.rsplit(":", 1)[1])
        # its log (a line per command) read as it comes: a full pipe would stall the agent
        self.lines, self._got = [], threading.Condition()
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()

    def _read_log(self):
        for raw in iter(self.p.stdout.readline, b""):
            with self._got:
                self.lines.append(raw.decode(errors="replace"))
                self._got.notify_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.end()

    @property
    def rundir(self):
        """Where its fixtures run, as its second line says (5 s at most)."""
        if self._rundir is None:
            with self._got:
                self._got.wait_for(lambda: self.lines, timeout=5)
            line = self.lines[0] if self.lines else ""
            assert "fixtures run under " in line, f"no run directory named: {line!r}"
            self._rundir = line.rsplit("fixtures run under ", 1)[1].strip()
        return self._rundir

    def call(self, *cmds, timeout=BOUND_S):
        token = f"{self.rundir}/token" if self.own_token else TOKEN
        p = subprocess.run([KB, "serve-agent", "--token", token, "--call", self.addr,
                            *cmds],
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout.splitlines()

    def stop(self):
        """The clean stop the test expects (exit 0, no sanitizer report)."""
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(15)
        self._reader.join(15)
        rest = "".join(self.lines)
        assert self.p.returncode == 0, f"serve-agent exited {self.p.returncode}:\n{rest[-3000:]}"
        assert "Sanitizer" not in rest, rest[-3000:]

    def end(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def local_agent_or_skip():
    need_builds()
    if os.geteuid() != 0:
        skip("needs root: the agent's sandbox, and files owned by another user")


def busy_port():
    """A listener this test holds (as a leftover fixture would), and its port."""
    sk = socket.socket()
    sk.bind(("127.0.0.1", 0))
    sk.listen(4)
    return sk, sk.getsockname()[1]


@test
def start_on_a_busy_port_is_refused():
    local_agent_or_skip()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "run")) as agent:
        sk, port = busy_port()
        try:
            rc, lines = agent.call(f"start gray-static {port}", "identity")
        finally:
            sk.close()
        assert rc == 1 and lines[0].startswith("err agent: harness: "), lines
        assert f"port {port} is held by pid {os.getpid()}" in lines[0], lines
        assert ok_json(lines[1])["running"] is None, lines
        rc, lines = agent.call(f"start gray-static {port}", "stop")   # free now: it starts
        assert rc == 0, lines
        agent.stop()


@test
def privileged_ports_only_when_asked():
    local_agent_or_skip()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        with LocalAgent("--rundir", os.path.join(d, "run")) as agent:
            rc, lines = agent.call("start gray-static 99", "start gray-static 1023", "identity")
            assert rc == 1 and all("privileged" in x for x in lines[:2]), lines
            assert ok_json(lines[2])["running"] is None, lines
            agent.stop()
        with socket.socket() as sk:
            if sk.connect_ex(("127.0.0.1", 99)) == 0:
                skip("something listens on port 99 of this host")
        with LocalAgent("--rundir", os.path.join(d, "run2"), "--allow-privileged-ports") as agent:
            rc, lines = agent.call("start gray-static 99", "stop")
            assert rc == 0 and ok_json(lines[0])["port"] == 99, lines
            agent.stop()


def at_eof(sk, seconds):
    """True when the agent closes sk within seconds (after its greeting, if it sent one)."""
    sk.settimeout(seconds)
    data = b""
    try:
        while True:
            chunk = sk.recv(4096)
            if not chunk:
                return True
            data += chunk
    except socket.timeout:
        return False


@test
def an_idle_connection_blocks_no_one():
    local_agent_or_skip()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "run"), "--idle-timeout", "2") as agent:
        idle = socket.create_connection(("127.0.0.1", agent.port))
        half = socket.create_connection(("127.0.0.1", agent.port))
        half.sendall(b"iden")                   # a line begun and never finished
        t0 = time.monotonic()
        rc, lines = agent.call("identity", timeout=10)
        assert rc == 0 and ok_json(lines[0])["protocol"] == 2, lines
        assert time.monotonic() - t0 < 5, "the answer waited on the idle connection"
        # the ones that never authenticate are closed once the proof is overdue (5 s)
        assert at_eof(idle, 9) and at_eof(half, 9), "unauthenticated connections kept open"
        assert time.monotonic() - t0 >= 1.5, "closed before their time"
        # an authenticated session idle past --idle-timeout (2 s) is closed too, not before
        sk, f = authed_socket(agent.port)
        t1 = time.monotonic()
        assert at_eof(sk, 8), "an idle session kept open"
        assert time.monotonic() - t1 >= 1.5, "an idle session closed before --idle-timeout"
        # more connections than the agent keeps: the one waiting longest makes room
        crowd = [socket.create_connection(("127.0.0.1", agent.port)) for _ in range(10)]
        rc, lines = agent.call("identity", timeout=10)
        assert rc == 0, lines
        assert at_eof(crowd[0], 1), "the connection waiting longest was not the one closed"
        for x in (idle, half, sk, *crowd):
            x.close()
        agent.stop()


@test
def idle_connections_never_evict_a_session():
    """Issue 27: eight idle connections evicted the runner's own session, and its fixture
    was left running. Connections that never authenticate now make room only among
    themselves: the session keeps its fixture and its answers."""
    local_agent_or_skip()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "run")) as agent, \
            Session([], agent.addr) as sess:
        assert ok_json(sess.ask(f"start gray-static {port}"))["port"] == port
        crowd = [socket.create_connection(("127.0.0.1", agent.port)) for _ in range(12)]
        try:
            sample = ok_json(sess.ask("sample"))
            assert sample["alive"] is True, sample
        finally:
            for x in crowd:
                x.close()
        assert ok_json(sess.ask("stop")) == {"stopped": "gray-static"}
        sess.close()
        agent.stop()


@test
def a_curve_survives_idle_connections_to_its_agent():
    """The runner's side of the same: a remote curve whose agent is crowded by idle
    connections while it runs completes every point, none failed."""
    local_agent_or_skip()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "agent")) as agent:
        os.chmod(d, 0o755)
        run = os.path.join(d, "run")
        p = subprocess.Popen([KB, "curve", "--run", run, "--backend", "remote", "--agent",
                              agent.addr, "--agent-token", TOKEN, "--runtimes", "gray-static",
                              "--routes", "plaintext", "--rates", "100,200", "--duration", "1",
                              "--warmup", "0.5", "--drain", "0.5", "--threads", "1",
                              "--connections", "4", "--free-ports", "--client-sched", "other"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        crowd = []
        try:
            deadline = time.monotonic() + 60
            while p.poll() is None and time.monotonic() < deadline:
                if len(crowd) < 24:
                    crowd.append(socket.create_connection(("127.0.0.1", agent.port)))
                time.sleep(0.1)
            out = p.communicate(timeout=120)[0]
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            for x in crowd:
                x.close()
        assert p.returncode == 0, out[-3000:]
        for pt in glob.glob(os.path.join(run, "points", "*")):
            assert os.path.exists(os.path.join(pt, "DONE")), (pt, out[-3000:])
            assert read_json(os.path.join(pt, "verdict.json"))["verdict"] != "failed", out
        assert len(glob.glob(os.path.join(run, "points", "*"))) == 2
        agent.stop()


@test
def a_client_that_never_reads_stalls_no_one():
    """Issue 27: a client that pipelined commands without reading stalled the agent for 5 s
    per connection. Its answers now wait in its own buffer; everyone else is answered."""
    local_agent_or_skip()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "run")) as agent:
        greedy = []
        for _ in range(3):
            sk, _f = authed_socket(agent.port)
            sk.setblocking(False)
            try:
                for _ in range(20000):       # until the agent stops taking them
                    sk.send(b"identity\n" * 64)
            except BlockingIOError:
                pass
            greedy.append(sk)
        t0 = time.monotonic()
        rc, lines = agent.call("identity", timeout=20)
        took = time.monotonic() - t0
        for sk in greedy:
            sk.close()
        assert rc == 0 and ok_json(lines[0])["protocol"] == 2, lines
        # the old agent waited 5 s on each of the three; a host's stall is far below 4 s
        assert took < 4, f"answered after {took:.1f} s behind clients that do not read"
        agent.stop()


@test
def a_local_user_without_the_token_drives_nothing():
    """Issue 27: user nobody made the root agent start gray-static on a port of its choice.
    Without the token (a file only root may read) nobody's calls are refused, and a raw
    connection that skips the proof learns nothing (no identity) and starts nothing."""
    local_agent_or_skip()
    if not shutil.which("setpriv"):
        skip("needs setpriv to act as another user")
    port = free_port()
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "run")) as agent:
        os.chmod(d, 0o755)
        p = subprocess.run([*nobody, KB, "serve-agent", "--token", TOKEN, "--call",
                            agent.addr, f"start gray-static {port}"], capture_output=True,
                           text=True, timeout=BOUND_S)
        assert p.returncode == 2 and "token file" in p.stderr, (p.returncode, p.stderr)
        guess = os.path.join(d, "guess")
        with open(os.open(guess, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write("a guess at the secret, long enough\n")
        os.chown(guess, 65534, 65534)
        p = subprocess.run([*nobody, KB, "serve-agent", "--token", guess, "--call",
                            agent.addr, f"start gray-static {port}"], capture_output=True,
                           text=True, timeout=BOUND_S)
        assert p.returncode == 2 and "authentication failed" in p.stderr, (p.returncode,
                                                                            p.stderr)
        raw = subprocess.run([*nobody, "python3", "-c", f"""
import socket
s = socket.create_connection(("127.0.0.1", {agent.port}), timeout=10)
s.sendall(b"identity\\nstart gray-static {port}\\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode())
"""], capture_output=True, text=True, timeout=BOUND_S)
        assert "authenticate first" in raw.stdout, raw.stdout + raw.stderr
        assert "hostname" not in raw.stdout and "cpu_model" not in raw.stdout, raw.stdout
        with socket.socket() as sk:
            assert sk.connect_ex(("127.0.0.1", port)) != 0, "a fixture was started"
        rc, lines = agent.call("identity")
        assert rc == 0 and ok_json(lines[0])["running"] is None, lines
        agent.stop()


@test
def one_session_cannot_touch_anothers_fixture():
    """Issue 27: any client could stop another client's fixture. A fixture is its starting
    session's: another session's stop, sample and start are refused, and the fixture is
    stopped when its own session ends."""
    local_agent_or_skip()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d, \
            LocalAgent("--rundir", os.path.join(d, "run")) as agent:
        with Session([], agent.addr) as mine, Session([], agent.addr) as theirs:
            ok_json(mine.ask(f"start gray-static {port}"))
            for cmd in ("stop", "sample", "limits"):
                line = theirs.ask(cmd)
                assert line.startswith("err ") and "another session" in line, (cmd, line)
            line = theirs.ask(f"start go {free_port()}")
            assert line.startswith("err agent: harness: busy"), line
            assert ok_json(mine.ask("sample"))["alive"] is True
        # both sessions ended: the fixture went with the one that started it
        rc, lines = agent.call("identity")
        assert rc == 0 and ok_json(lines[0])["running"] is None, lines
        with socket.socket() as sk:
            assert sk.connect_ex(("127.0.0.1", port)) != 0, "the fixture outlived its session"
        agent.stop()


NOBODY = (65534, 65534)


@test
def default_run_directory_is_private_and_symlinks_are_not_followed():
    """Another user pre-creates the directory the agent would once have used
    (/tmp/kneebench-agent-<pid>) with fixture.log a symlink to a file of root's: the agent
    must neither use that directory nor write through the link."""
    local_agent_or_skip()
    planted, rundirs = [], []

    def plant(pid):
        trap = f"/tmp/kneebench-agent-{pid}"
        planted.append(trap)
        os.makedirs(f"{trap}/gray-static")
        os.symlink(target, f"{trap}/gray-static/fixture.log")
        for path in (trap, f"{trap}/gray-static"):
            os.chown(path, *NOBODY)
        os.lchown(f"{trap}/gray-static/fixture.log", *NOBODY)
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        os.chmod(d, 0o755)
        target = os.path.join(d, "roots-file")
        with open(target, "w") as f:
            f.write("root's own\n")
        try:
            with LocalAgent(pre_exec=plant, own_token=True) as agent:
                rc, lines = agent.call(f"start gray-static {free_port()}", "stop")
                assert rc == 0, lines
                with open(target) as f:
                    assert f.read() == "root's own\n", "the agent wrote through the symlink"
                rundirs.append(agent.rundir)
                assert os.path.isfile(f"{agent.rundir}/gray-static/fixture.log")
                st = os.lstat(agent.rundir)
                assert st.st_uid == os.geteuid() and (st.st_mode & 0o7777) == 0o711, \
                    oct(st.st_mode)
                assert (os.lstat(f"{agent.rundir}/token").st_mode & 0o777) == 0o600
                agent.stop()
            assert agent.rundir != planted[0], agent.rundir
            assert re.fullmatch(r"/tmp/kneebench-agent-\w{6}", agent.rundir), agent.rundir
            # its own fresh directory goes with it (issue 27); the planted one is not its own
            assert not os.path.exists(agent.rundir), os.listdir(agent.rundir)
            assert os.path.islink(f"{planted[0]}/gray-static/fixture.log")
        finally:
            for path in planted + rundirs:
                shutil.rmtree(path, ignore_errors=True)


@test
def given_run_directory_must_be_its_own():
    local_agent_or_skip()
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        theirs, shared, link = (os.path.join(d, x) for x in ("theirs", "shared", "link"))
        os.mkdir(theirs)
        os.chown(theirs, *NOBODY)
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        os.symlink(d, link)
        for rundir in (theirs, shared, link):
            try:
                p = subprocess.run([KB, "serve-agent", "--port", "0", "--rundir", rundir],
                                   capture_output=True, text=True, timeout=5)
            except subprocess.TimeoutExpired:
                raise AssertionError(f"--rundir {rundir} accepted: the agent is serving")
            assert p.returncode == 2 and "--rundir" in p.stderr, (rundir, p.returncode, p.stderr)


@test
def namespaces_are_gone_afterwards():
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    if os.geteuid() != 0:
        skip("needs root")
    assert NS_A not in names and NS_B not in names, names


if __name__ == "__main__":
    exit_with("e2e-remote" + os.environ.get("KB_TEST_SUFFIX", ""), sys.argv[1:])
