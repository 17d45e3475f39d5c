#!/usr/bin/env python3
"""test_remote -- client and server on different hosts: two network namespaces this test
creates (kb-<pid>-a for the server host, kb-<pid>-b for the client host), joined by a veth
pair with 10.77.0.1/24 and 10.77.0.2/24 inside them only, and removed on every exit path.

The agent (`kneebench serve-agent --bind 10.77.0.1`) runs in a, starts gray-static under the
contract's limits on its side; `kneebench load` in b drives it across the veth; the agent
samples and stops it. `kneebench curve --backend remote` does the same for a tiny matrix (one
runtime, one route, one low rate, 1 s) and its evidence names the target and the agent. Also:
refusals over the wire, and an agent started without --bind is not reachable from the other
host.
"""
import atexit
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from kbtest import test, skip, exit_with  # noqa: E402

BUILD = os.environ.get("KB_BUILD", os.path.join(ROOT, "build"))
KNEEBENCH = os.path.join(BUILD, "kneebench")
PID = os.getpid()
NS_A, NS_B = f"kb-{PID}-a", f"kb-{PID}-b"
VETH_A, VETH_B = f"kb{PID % 1000000}a", f"kb{PID % 1000000}b"
ADDR_A, ADDR_B = "10.77.0.1", "10.77.0.2"
BOUND_S = 30


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
    p = hosts.spawn(NS_A, KNEEBENCH, "serve-agent", "--port", "0", *args)
    line = p.stdout.readline()
    if "listening on " not in line:
        raise AssertionError(f"serve-agent did not start: {line}{p.stdout.read()}")
    return p, line.rsplit("listening on ", 1)[1].strip()


def stop_agent(p):
    """SIGTERM by PID: the agent must stop its fixture and exit 0 (under ASan: no report)."""
    p.send_signal(signal.SIGTERM)
    rest = p.communicate(timeout=15)[0]
    assert p.returncode == 0, f"serve-agent exited {p.returncode}:\n{rest[-3000:]}"
    assert "Sanitizer" not in rest, rest[-3000:]


def call(hosts, addr, *cmds):
    p = hosts.run(NS_B, KNEEBENCH, "serve-agent", "--call", addr, *cmds)
    lines = p.stdout.splitlines()
    return p.returncode, lines, p.stderr


def ok_json(line):
    assert line.startswith("ok "), f"agent answered: {line}"
    return json.loads(line[3:])


def free_port():
    with socket.socket() as s:   # any port free here is free in the fresh namespace
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need_builds():
    for b in ("kneebench", "gray-static"):
        if not os.access(os.path.join(BUILD, b), os.X_OK):
            skip(f"build/{b} is not built")


@test
def load_across_hosts_through_the_agent():
    need_builds()
    port = free_port()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--rundir", os.path.join(d, "run"))
        assert addr == f"{ADDR_A}:{addr.split(':')[1]}"
        rc, lines, err = call(hosts, addr, "identity", f"start gray-static {port}", "limits")
        assert rc == 0, f"agent calls failed: {lines} {err}"
        ident, started, limits = (ok_json(x) for x in lines)
        assert ident["protocol"] == 1 and "gray-static" in ident["runtimes"]
        assert started == {"started": "gray-static", "port": port, "bind": ADDR_A}
        with open(os.path.join(ROOT, "fixtures", "contract.json")) as f:
            lim = json.load(f)["limits"]
        assert limits["cpus"] == lim["cpus"] and limits["memory_bytes"] == lim["memory_bytes"]
        assert limits["pids_max"] == lim["pids"], limits

        out = os.path.join(d, "load.json")
        p = hosts.run(NS_B, KNEEBENCH, "load", "--url", f"http://{ADDR_A}:{port}/plaintext",
                      "--route", "plaintext", "--rate", "300", "--duration", "1", "--warmup",
                      "0.5", "--drain", "1", "--threads", "1", "--connections", "4", "--quiet",
                      "--json", out)
        assert p.returncode == 0, f"load across the veth: exit {p.returncode}: {p.stderr}"
        with open(out) as f:
            j = json.load(f)
        assert j["scheduled"] > 0 and j["completed"] == j["scheduled"], j
        assert j["errors"]["total"] == 0 and j["mismatches"]["total"] == 0, j

        rc, lines, err = call(hosts, addr, "sample", "stop", "sample")
        sample = ok_json(lines[0])
        assert sample["alive"] is True and sample["processes"] >= 1 and sample["rss_bytes"] > 0
        # CPU time comes in 10 ms ticks: a few hundred requests may read as 0, never negative.
        assert isinstance(sample["cpu_seconds"], float) and sample["cpu_seconds"] >= 0
        assert sample["fds"] > 0 and sample["threads"] >= 1, sample
        assert ok_json(lines[1]) == {"stopped": "gray-static"}
        assert lines[2].startswith("err "), lines[2]
        # The fixture is gone: nothing answers on its port any more.
        p = hosts.run(NS_B, KNEEBENCH, "serve-agent", "--call", f"{ADDR_A}:{port}", "identity")
        assert p.returncode == 2, "the stopped fixture's port still accepts"
        stop_agent(agent)


def read_json(path):
    with open(path) as f:
        return json.load(f)


@test
def curve_across_hosts_through_the_agent():
    need_builds()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        os.chmod(d, 0o755)
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--rundir", os.path.join(d, "agent"))
        run = os.path.join(d, "run")
        p = hosts.spawn(NS_B, KNEEBENCH, "curve", "--run", run, "--backend", "remote",
                        "--agent", addr, "--target", ADDR_A, "--runtimes", "gray-static",
                        "--routes", "plaintext", "--rates", "200", "--duration", "1",
                        "--warmup", "0.5", "--drain", "1", "--threads", "1", "--connections",
                        "4", "--free-ports", "--client-sched", "other")
        out = p.communicate(timeout=120)[0]      # on a timeout, down() ends it by its PID
        assert p.returncode == 0, f"curve exited {p.returncode}:\n{out[-3000:]}"
        assert f"target {ADDR_A}" in out and f"agent {addr}" in out, out

        rj = read_json(os.path.join(run, "run.json"))
        assert rj["backend"] == "remote", rj
        assert rj["target"]["host"] == ADDR_A and rj["target"]["agent"] == addr, rj["target"]
        assert rj["target"]["agent_identity"]["protocol"] == 1, rj["target"]
        assert rj["runtime_versions"]["gray-static"].startswith("unknown (remote"), rj
        plan = read_json(os.path.join(run, "plan.json"))
        assert plan["target"] == {"host": ADDR_A, "agent": addr}, plan

        fix = os.path.join(run, "fixtures", "gray-static")
        lim = read_json(os.path.join(fix, "limits.json"))
        with open(os.path.join(ROOT, "fixtures", "contract.json")) as f:
            want = json.load(f)["limits"]
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
    if not os.access(KNEEBENCH, os.X_OK):
        skip("build/kneebench is not built")
    with tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        run = os.path.join(d, "run")
        for args, want in ((["--backend", "remote"], "needs --agent"),
                           (["--agent", "127.0.0.1:1"], "are for --backend remote"),
                           (["--backend", "remote", "--agent", "127.0.0.1:1", "--target",
                             "not-an-address", "--routes", "plaintext"], "IPv4"),
                           (["--backend", "remote", "--agent", "127.0.0.1:1", "--routes",
                             "plaintext", "--no-limits"], "--no-limits is the agent's")):
            p = subprocess.run([KNEEBENCH, "curve", "--run", run, *args], capture_output=True,
                               text=True, timeout=BOUND_S)
            assert p.returncode == 2 and want in p.stderr, (args, p.returncode, p.stderr)
        # an agent that does not answer: refused before anything runs
        p = subprocess.run([KNEEBENCH, "curve", "--run", run, "--backend", "remote", "--agent",
                            f"127.0.0.1:{free_port()}", "--routes", "plaintext"],
                           capture_output=True, text=True, timeout=BOUND_S)
        assert p.returncode == 2 and not os.path.exists(os.path.join(run, "run.json")), p.stderr


@test
def agent_exit_stops_a_running_fixture():
    need_builds()
    port = free_port()
    with Hosts() as hosts, tempfile.TemporaryDirectory(prefix="kb-remote-") as d:
        agent, addr = start_agent(hosts, "--bind", ADDR_A, "--rundir", os.path.join(d, "run"))
        rc, lines, err = call(hosts, addr, f"start gray-static {port}", "limits")
        assert rc == 0, f"{lines} {err}"
        cgroups = ok_json(lines[1])["paths"].split()
        assert cgroups and all(os.path.isdir(c) for c in cgroups), cgroups
        stop_agent(agent)
        left = [c for c in cgroups if os.path.exists(c)]
        assert not left, f"cgroups left after the agent exited: {left}"
        p = hosts.run(NS_B, KNEEBENCH, "serve-agent", "--call", f"{ADDR_A}:{port}", "identity")
        assert p.returncode == 2, "the fixture outlived its agent"


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
        p = hosts.run(NS_A, KNEEBENCH, "serve-agent", "--call", addr, "identity")
        assert p.returncode == 0, f"not reachable on its own loopback: {p.stdout}{p.stderr}"


@test
def namespaces_are_gone_afterwards():
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    if os.geteuid() != 0:
        skip("needs root")
    assert NS_A not in names and NS_B not in names, names


if __name__ == "__main__":
    exit_with("e2e-remote" + os.environ.get("KB_TEST_SUFFIX", ""), sys.argv[1:])
