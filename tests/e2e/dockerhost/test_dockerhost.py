#!/usr/bin/env python3
"""test_dockerhost -- the docker backend on another host's Docker engine, reached over SSH.

The other host exists only in this test: a network namespace (kb-<pid>-eng) joined to this
one by a veth pair (10.78.0.2 here, 10.78.0.1 there), a second dockerd in it with its own
--data-root, --exec-root, socket, cgroup parent and config, and Debian's sshd in it with a
host key and a client key this test makes. The client reaches it only as
ssh://root@10.78.0.1: the docker CLI's own transport, through an `ssh` on PATH that reads
this test's ssh_config (its key, its known_hosts), never root's ~/.ssh. The session gets
DOCKER_HOST from the key's authorized_keys line.

Checked: `kneebench curve --backend docker --docker-host ssh://root@10.78.0.1` carries the
image there itself (docker save | docker load over the same transport, its ID checked), runs
one runtime, one route, one low rate, and its run.json names that engine, its limits are
read back from that engine's cgroups, and its point has the same evidence files as a local
docker point; `kneebench load` from here drives a fixture there; an SSH transport lost in
the middle of a point is the harness's failure (the point left to redo, no verdict), and a
second run redoes it. Everything made is removed on every exit path; the suite skips with
the reason where root, network namespaces, dockerd, sshd or the image are missing.
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kbenv import CONTRACT, KB, need
from kbtest import test, skip, exit_with
from procstat import children

PID = os.getpid()
NS = f"kb-{PID}-eng"
VETH_HERE, VETH_THERE = f"kb{PID % 1000000}h", f"kb{PID % 1000000}e"
ADDR_THERE, ADDR_HERE = "10.78.0.1", "10.78.0.2"
URL = f"ssh://root@{ADDR_THERE}"
BOUND_S = 60
CURVE = ["--profile", "quick", "--confirm", "1", "--runtimes", "gray-static", "--routes",
         "plaintext", "--rates", "500", "--warmup", "1", "--drain", "1", "--threads", "1",
         "--connections", "8", "--free-ports"]


def sh(argv, check=True, timeout=BOUND_S, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()[-800:]}")
    return p


def image():
    """The image test-docker built (kneebench:test), else kneebench:latest, on this host."""
    for img in (os.environ.get("KB_DOCKER_TEST_IMAGE") or "kneebench:test", "kneebench:latest"):
        if sh(["docker", "image", "inspect", img], check=False).returncode == 0:
            return img
    skip("no kneebench image on this host's engine (make test-docker or make image builds it)")


class EngineHost:
    """The namespace, its dockerd and sshd, the veth, the keys; torn down exactly once."""

    def __init__(self):
        self.up = False
        self.dir = None
        self.dockerd = self.sshd = None
        self.made_run_sshd = False

    def __enter__(self):
        if os.geteuid() != 0:
            skip("needs root to make a network namespace and a second dockerd")
        for tool in ("ip", "nsenter", "dockerd", "docker", "ssh-keygen"):
            if not shutil.which(tool):
                skip(f"needs {tool}")
        if not os.path.exists("/usr/sbin/sshd"):
            skip("needs /usr/sbin/sshd (openssh-server; make deps installs it)")
        info = sh(["docker", "info", "--format", "{{.Driver}}"], check=False)
        if info.returncode != 0:
            skip(f"no Docker engine answers here: {info.stderr.strip()[:200]}")
        self.driver = info.stdout.strip()
        self.image = image()
        self.up = True
        atexit.register(self.down)
        self.dir = tempfile.mkdtemp(prefix="kb-dockerhost-")
        if sh(["ip", "netns", "add", NS], check=False).returncode != 0:
            skip("network namespaces are unavailable here")
        sh(["ip", "link", "add", VETH_HERE, "type", "veth", "peer", "name", VETH_THERE])
        sh(["ip", "link", "set", VETH_THERE, "netns", NS])
        sh(["ip", "addr", "add", f"{ADDR_HERE}/24", "dev", VETH_HERE])
        sh(["ip", "link", "set", VETH_HERE, "up"])
        sh(["ip", "-n", NS, "addr", "add", f"{ADDR_THERE}/24", "dev", VETH_THERE])
        sh(["ip", "-n", NS, "link", "set", VETH_THERE, "up"])
        sh(["ip", "-n", NS, "link", "set", "lo", "up"])
        self.start_dockerd()
        self.keys()
        self.start_sshd()
        self.env = dict(os.environ, PATH=f"{self.path('bin')}:{os.environ['PATH']}")
        for k in ("DOCKER_HOST", "DOCKER_CONTEXT", "KB_DOCKER_IMAGE"):
            self.env.pop(k, None)
        return self

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def in_ns(self, *argv):
        """Only the network namespace: `ip netns exec` would remount /sys and hide the
        cgroup tree the engine needs."""
        return ["nsenter", f"--net=/run/netns/{NS}", "--", *argv]

    def there(self, *argv, check=True, timeout=BOUND_S):
        """docker on the other engine, through its socket (the test's view, not SSH)."""
        return sh(["docker", "-H", f"unix://{self.path('docker.sock')}", *argv], check=check,
                  timeout=timeout)

    def start_dockerd(self):
        with open(self.path("daemon.json"), "w") as f:
            f.write("{}\n")
        argv = ["dockerd", "--config-file", self.path("daemon.json"),
                "--data-root", self.path("data"), "--exec-root", self.path("exec"),
                "--pidfile", self.path("dockerd.pid"), "-H", f"unix://{self.path('docker.sock')}",
                "--bridge=none", "--iptables=false", "--ip-masq=false",
                f"--cgroup-parent=/kbtest-{PID}", f"--containerd-namespace=kbtest-{PID}",
                f"--containerd-plugins-namespace=kbtest-{PID}-plugins"]
        if self.driver:
            argv.append(f"--storage-driver={self.driver}")
        self.dockerd_log = open(self.path("dockerd.log"), "w")
        self.dockerd = subprocess.Popen(self.in_ns(*argv), stdout=self.dockerd_log,
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            if self.dockerd.poll() is not None:
                break
            if self.there("version", "--format", "{{.Server.Version}}", check=False,
                          timeout=10).returncode == 0:
                return
            time.sleep(0.5)
        with open(self.path("dockerd.log")) as f:
            skip(f"the second dockerd did not start: {f.read()[-600:]}")

    def keys(self):
        for name in ("host_key", "client_key"):
            sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", self.path(name)])
        with open(self.path("host_key.pub")) as f:
            host_pub = f.read().split()
        with open(self.path("client_key.pub")) as f:
            client_pub = f.read().strip()
        with open(self.path("known_hosts"), "w") as f:
            f.write(f"{ADDR_THERE} {host_pub[0]} {host_pub[1]}\n")
        with open(self.path("authorized_keys"), "w") as f:
            f.write(f'environment="DOCKER_HOST=unix://{self.path("docker.sock")}" {client_pub}\n')
        with open(self.path("sshd_config"), "w") as f:
            f.write(f"ListenAddress {ADDR_THERE}\nPort 22\nHostKey {self.path('host_key')}\n"
                    f"AuthorizedKeysFile {self.path('authorized_keys')}\n"
                    "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                    "PermitUserEnvironment DOCKER_HOST\nMaxStartups 100\n"
                    f"PidFile {self.path('sshd.pid')}\n")
        with open(self.path("ssh_config"), "w") as f:
            f.write(f"Host *\n  IdentityFile {self.path('client_key')}\n  IdentitiesOnly yes\n"
                    f"  UserKnownHostsFile {self.path('known_hosts')}\n"
                    "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
                    "  BatchMode yes\n  ConnectTimeout 10\n")
        os.makedirs(self.path("bin"))
        with open(self.path("bin", "ssh"), "w") as f:
            f.write(f"#!/bin/sh\nexec /usr/bin/ssh -F {self.path('ssh_config')} \"$@\"\n")
        os.chmod(self.path("bin", "ssh"), 0o755)

    def start_sshd(self):
        if not os.path.isdir("/run/sshd"):
            os.makedirs("/run/sshd", mode=0o755)
            self.made_run_sshd = True
        self.sshd = subprocess.Popen(self.in_ns("/usr/sbin/sshd", "-D", "-e", "-f",
                                                self.path("sshd_config")),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection((ADDR_THERE, 22), timeout=2).close()
                return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("sshd in the namespace does not accept")

    def kill_sshd(self):
        """The listener and every session it started, by PID: the transport is lost."""
        if self.sshd and self.sshd.poll() is None:
            sessions = children(self.sshd.pid)
            self.sshd.kill()
            self.sshd.wait()
            for pid in sessions:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def docker_ssh(self, *argv, check=True, timeout=BOUND_S):
        """docker through the SSH transport, as a user would."""
        return sh(["docker", "-H", URL, *argv], check=check, timeout=timeout, env=self.env)

    def down(self):
        if not self.up:
            return
        self.up = False
        if self.dockerd and self.dockerd.poll() is None:
            ids = self.there("ps", "-aq", check=False).stdout.split()
            if ids:
                self.there("rm", "-f", "-v", *ids, check=False, timeout=120)
        self.kill_sshd()
        if self.dockerd and self.dockerd.poll() is None:
            self.dockerd.send_signal(signal.SIGTERM)
            try:
                self.dockerd.wait(30)
            except subprocess.TimeoutExpired:
                self.dockerd.kill()
                self.dockerd.wait()
            self.dockerd_log.close()
        sh(["ip", "link", "del", VETH_HERE], check=False)
        sh(["ip", "netns", "del", NS], check=False)
        # what that engine left: its mounts, its cgroups, its directory
        with open("/proc/self/mounts") as f:
            mounts = [ln.split()[1] for ln in f if self.dir and self.dir in ln.split()[1]]
        for m in sorted(mounts, key=len, reverse=True):
            sh(["umount", "-l", m], check=False)
        for root, dirs, _ in os.walk("/sys/fs/cgroup", topdown=False):
            for d in dirs:
                if d == f"kbtest-{PID}":
                    for sub, subdirs, _ in os.walk(os.path.join(root, d), topdown=False):
                        for s in subdirs:
                            try:
                                os.rmdir(os.path.join(sub, s))
                            except OSError:
                                pass
                    try:
                        os.rmdir(os.path.join(root, d))
                    except OSError:
                        pass
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        if self.made_run_sshd:
            shutil.rmtree("/run/sshd", ignore_errors=True)

    def __exit__(self, *exc):
        self.down()


HOST = None


def host():
    global HOST
    if HOST is None:
        HOST = EngineHost().__enter__()
    return HOST


def evidence_files(run):
    """Each point's files (names relative to its directory), by point."""
    out = {}
    pts = os.path.join(run, "points")
    for p in sorted(os.listdir(pts)):
        names = set()
        for dirpath, _, files in os.walk(os.path.join(pts, p)):
            for f in files:
                names.add(os.path.relpath(os.path.join(dirpath, f), os.path.join(pts, p)))
        out[p] = names
    return out


def curve(run, *extra, env, timeout=580):
    return sh([KB, "curve", "--run", run, "--backend", "docker", *CURVE, *extra], check=False,
              timeout=timeout, env=env)


RESULTS = {}


@test
def curve_on_another_engine_over_ssh():
    need(KB)
    h = host()
    assert h.there("image", "inspect", h.image, check=False).returncode != 0, \
        "the other engine has the image before the run"
    run = tempfile.mkdtemp(prefix="kb-dockerhost-run-")
    atexit.register(shutil.rmtree, run, True)
    p = curve(run, "--docker-host", URL, "--image", h.image, "--duration", "2", env=h.env)
    print(p.stdout[-1200:])
    assert p.returncode == 0, f"curve exited {p.returncode}: {p.stderr[-2000:]}"
    with open(os.path.join(run, "run.json")) as f:
        rj = json.load(f)
    eng = rj["engine"]
    want = h.there("version", "--format", "{{.Server.Version}}").stdout.strip()
    assert eng["host"] == URL and eng["elsewhere"] is True and eng["version"] == want, eng
    assert eng["chosen_by"] == "--docker-host", eng
    assert "loaded from this host's engine" in eng["image"], eng
    here_id = sh(["docker", "image", "inspect", "--format", "{{.Id}}", h.image]).stdout.strip()
    there_id = h.there("image", "inspect", "--format", "{{.Id}}", h.image).stdout.strip()
    assert here_id == there_id == rj["image"]["id"], (here_id, there_id, rj["image"]["id"])
    with open(os.path.join(run, "fixtures", "gray-static", "limits.json")) as f:
        la = json.load(f)
    # read back from the other engine's cgroups: its container, its cgroup files
    assert la["backend"] == "docker" and f"engine {URL}" in la["paths"], la
    lim = CONTRACT["limits"]
    assert abs(la["cpus"] - lim["cpus"]) < 1e-9 and la["cpuset"] == lim["server_cpus"], la
    assert la["memory_bytes"] == lim["memory_bytes"] and la["pids_max"] == lim["pids"], la
    # its cgroup directories are the other engine's (its --cgroup-parent), not this one's
    assert f"kbtest-{PID}" in la["paths"], la["paths"]
    # CPU and steal of the server from the engine's host, not null
    pts = evidence_files(run)
    assert len(pts) == 1, pts
    pt = os.path.join(run, "points", next(iter(pts)))
    with open(os.path.join(pt, "verdict.json")) as f:
        vj = json.load(f)
    print("verdict:", vj.get("verdict"), "server:", json.dumps(vj.get("server"))[:300])
    print("host:", json.dumps(vj.get("host"))[:400])
    # the server's steal from the engine host's /proc/stat, its CPU from that host's cgroup
    assert vj["host"]["server_cpus"]["steal_fraction"] is not None, vj["host"]
    assert (vj["server"]["cpu_us_per_response"] or 0) > 0, vj["server"]
    assert vj["server"]["pss_max_bytes"] > 0 and vj["server"]["rss_max_bytes"] > 0, vj["server"]
    # nothing of this runner's left on either engine
    left = h.there("ps", "-a", "--filter", "label=org.kneebench.runner-pid", "-q").stdout.split()
    assert not left, f"containers left on the other engine: {left}"
    RESULTS["remote"] = (run, pts)


@test
def same_evidence_files_as_a_local_docker_point():
    need(KB)
    h = host()
    if "remote" not in RESULTS:
        skip("the curve on the other engine did not run")
    run = tempfile.mkdtemp(prefix="kb-dockerhost-local-")
    atexit.register(shutil.rmtree, run, True)
    p = curve(run, "--image", h.image, "--duration", "2", env=h.env)
    assert p.returncode == 0, f"local curve exited {p.returncode}: {p.stderr[-2000:]}"
    local = evidence_files(run)
    remote = RESULTS["remote"][1]
    assert list(local) == list(remote), (list(local), list(remote))
    for k in local:
        assert local[k] == remote[k], (k, local[k] ^ remote[k])
    with open(os.path.join(run, "run.json")) as f:
        eng = json.load(f)["engine"]
    assert eng["elsewhere"] is False and eng["host"].startswith("unix://"), eng


@test
def load_from_here_against_a_fixture_there():
    need(KB)
    h = host()
    if h.there("image", "inspect", h.image, check=False).returncode != 0:
        skip("the image is not on the other engine (the curve test carries it there)")
    port = 18080
    name = f"kb-dockerhost-{PID}-load"
    h.docker_ssh("run", "--detach", "--name", name, "--network=host", h.image, "gray-static",
                 "--port", str(port), "--bind", ADDR_THERE, "--cpus", "1")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection((ADDR_THERE, port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        out = os.path.join(h.dir, "load.json")
        p = sh([KB, "load", "-t1", "-c8", "-d2s", "-R500", "--json", out,
                f"http://{ADDR_THERE}:{port}/plaintext"], check=False, timeout=60)
        assert p.returncode == 0, p.stderr[-1500:]
        with open(out) as f:
            lj = json.load(f)
        print("load:", json.dumps({k: lj.get(k) for k in ("completed", "errors", "status_errors")}))
        assert lj.get("completed", 0) > 0, lj
    finally:
        h.docker_ssh("rm", "-f", name, check=False)


@test
def lost_ssh_in_a_point_is_the_harness_failure_and_redone():
    need(KB)
    h = host()
    run = tempfile.mkdtemp(prefix="kb-dockerhost-lost-")
    atexit.register(shutil.rmtree, run, True)
    argv = [KB, "curve", "--run", run, "--backend", "docker", *CURVE, "--docker-host", URL,
            "--image", h.image, "--duration", "8"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=h.env)
    try:
        # the point's load runs once the fixture's container runs there
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            ps = h.there("ps", "--filter", "label=org.kneebench.runner-pid", "--format",
                         "{{.Names}}", check=False).stdout.split()
            if any("-gray-static-" in n for n in ps) and os.path.isdir(os.path.join(run, "points")):
                break
            time.sleep(0.3)
        time.sleep(2)
        h.kill_sshd()
        out, err = p.communicate(timeout=180)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        h.start_sshd()
    print(out[-800:], err[-800:])
    assert p.returncode == 1, f"curve exited {p.returncode}: {err[-1500:]}"
    # lost in the point, or at its start: either way the harness's, never the server's
    assert "left to redo" in err and ("stopped answering" in err or "lost the engine" in err
                                      or "harness: " in err), err[-1500:]
    verdicts = [d for d, _, fs in os.walk(os.path.join(run, "points")) if "verdict.json" in fs]
    assert not verdicts, f"a lost transport judged the server: {verdicts}"
    # the same run again: the point redone, the lost runner's container swept
    p2 = curve(run, "--docker-host", URL, "--image", h.image, "--duration", "8", env=h.env)
    assert p2.returncode == 0, f"rerun exited {p2.returncode}: {p2.stderr[-1500:]}"
    verdicts = [d for d, _, fs in os.walk(os.path.join(run, "points")) if "verdict.json" in fs]
    assert len(verdicts) == 1, verdicts
    left = h.there("ps", "-a", "--filter", "label=org.kneebench.runner-pid", "-q").stdout.split()
    assert not left, f"containers left on the other engine: {left}"


if __name__ == "__main__":
    try:
        exit_with("dockerhost", sys.argv[1:])
    finally:
        if HOST is not None:
            HOST.down()
