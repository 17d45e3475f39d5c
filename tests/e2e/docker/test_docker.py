#!/usr/bin/env python3
"""test-docker: the image and the docker sandbox backend, end to end.

Where a Docker engine answers: the base (the pinned Ubuntu if it is already local, else the
local debootstrap base), the image on it (both cached: rebuilt only when their inputs
changed), the image's identity, `make pin-base` refusing cleanly without a registry, then
each runtime started in its own container through runner/sandbox/sandbox_docker.c (the probe),
checked against the contract's bytes and headers on both comparison routes, its limits read
back from the container's cgroup compared with the contract's, and the container gone after
stop -- also when the runner is interrupted, and when a runner died and left one behind.
gray-static's /db runs against the image's own PostgreSQL, in a container of its own on a
declared cpuset (read back), through the probe and through one short curve point; its
container and volume are gone after stop, after an interrupt, and after a failed start.
Last, a small curve with --backend docker --image (two runtimes, both routes, two low
rates) whose run.json carries the image's identity and the image's runtime versions, whose
fixture identity is the image ID (a changed host build/ is no change, a re-tagged image is),
and whose report names the backend, the image and, on a local base, the note saying so.
Where no engine answers, every test is skipped with the reason. Stdlib only.

    KB_DOCKER_BASE=IMG        build on IMG instead (e.g. kneebench-base:noble from
                              `docker/base-image.sh kneebench-base:noble noble`)
    KB_DOCKER_TEST_IMAGE=TAG  the tag the suite builds and tests (default kneebench:test)
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, COMPARISON_RUNTIMES, CONTRACT, KB, ROOT
import kbtest
from kbtest import skip, test

# Whichever test first needs the image builds it: the base (up to 15 min) and the image (up
# to 20) inside that one test's limit.
kbtest.TIMEOUT_S = 2400

PROBE = os.path.join(BUILD, "tests", "e2e", "docker", "sandbox-probe")
LOCAL_BASE = os.environ.get("KB_DOCKER_LOCAL_BASE", "kneebench-base:bookworm")
IMAGE = os.environ.get("KB_DOCKER_TEST_IMAGE", "kneebench:test")
LIMITS = CONTRACT["limits"]
RUNTIMES = COMPARISON_RUNTIMES
ROUTES = {r["name"]: r for r in CONTRACT["routes"]}
LABEL = "org.kneebench.runner-pid"

# Each runtime needs its folder (its contract entry's sources) before the image can hold it.
FOLDERS = {rt["name"]: [s for s in rt["sources"] if not os.path.isabs(s)]
           for rt in CONTRACT["runtimes"]}

state = {}


def sh(argv, timeout=120, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def engine():
    """None when an engine answers, else why not."""
    if "engine" not in state:
        if not shutil.which("docker"):
            state["engine"] = "no docker CLI on PATH"
        else:
            try:
                p = sh(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30)
                state["engine"] = None if p.returncode == 0 and p.stdout.strip() else \
                    f"no Docker engine answers: {(p.stderr or p.stdout).strip()[:200]}"
            except subprocess.TimeoutExpired:
                state["engine"] = "no Docker engine answers (docker info timed out)"
    if state["engine"]:
        skip(state["engine"])


def present():
    return [rt for rt in RUNTIMES
            if all(os.path.exists(os.path.join(ROOT, d)) for d in FOLDERS[rt])]


def image():
    """Build (or find up to date) the base and the image once; the image tag."""
    engine()
    if "image_error" in state:
        raise AssertionError(state["image_error"])
    if "image" in state:
        return state["image"]
    pinned = os.environ.get("KB_DOCKER_PINNED_BASE") or \
        sh(["sed", "-n", "s/^ARG BASE_IMAGE=//p", os.path.join(ROOT, "docker", "Dockerfile")]).stdout.strip()
    forced = os.environ.get("KB_DOCKER_BASE")    # e.g. kneebench-base:noble, to check Ubuntu
    if forced and forced != LOCAL_BASE:
        if sh(["docker", "image", "inspect", forced]).returncode != 0:
            state["image_error"] = f"KB_DOCKER_BASE={forced} is not a local image"
            raise AssertionError(state["image_error"])
        base = forced
        state["base_seconds"] = 0.0
    elif not forced and sh(["docker", "image", "inspect", pinned]).returncode == 0:
        base = pinned
        state["base_seconds"] = 0.0
    else:
        base = LOCAL_BASE
        t0 = time.monotonic()
        p = sh([os.path.join(ROOT, "docker", "base-image.sh"), base], timeout=900)
        state["base_seconds"] = time.monotonic() - t0
        print(p.stdout.strip())
        if p.returncode != 0:
            state["image_error"] = f"base-image.sh failed: {p.stderr.strip()[-800:]}"
            raise AssertionError(state["image_error"])
    t0 = time.monotonic()
    p = sh([os.path.join(ROOT, "docker", "build-image.sh"), "--base", base, "--tag", IMAGE,
            "--targets", targets()], timeout=1200)
    state["image_seconds"] = time.monotonic() - t0
    if p.returncode != 0:
        state["image_error"] = f"build-image.sh failed: {(p.stderr + p.stdout).strip()[-1500:]}"
        raise AssertionError(state["image_error"])
    print(p.stdout.strip().splitlines()[-1])
    print(f"base {state['base_seconds']:.1f} s, image {state['image_seconds']:.1f} s")
    state["image"], state["base"], state["pinned"] = IMAGE, base, pinned
    return IMAGE


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ours():
    """Names of every container carrying our label (any runner)."""
    p = sh(["docker", "ps", "-a", "--filter", f"label={LABEL}", "--format", "{{.Names}}"])
    return set(p.stdout.split())


def volumes():
    """Names of every volume carrying our label (the db route's, any runner)."""
    p = sh(["docker", "volume", "ls", "--filter", f"label={LABEL}", "--format", "{{.Name}}"])
    return set(p.stdout.split())


def db_cpus():
    """The CPU declared for PostgreSQL in these tests: this host's last (the contract puts
    the server on the first); on one CPU they share it, which the cpuset still shows."""
    return str(max(os.sched_getaffinity(0)))


class Probe:
    """runner/sandbox/sandbox_docker.c holding one runtime in a container, via sandbox-probe
    (with db: the sandbox's PostgreSQL first, on that cpuset)."""

    def __init__(self, runtime, db=None):
        self.runtime, self.port = runtime, free_port()
        env = dict(os.environ, KB_DOCKER_IMAGE=image())
        self.log = tempfile.NamedTemporaryFile(prefix=f"kb-docker-{runtime}-", suffix=".log")
        env["KB_PROBE_LOG"] = self.log.name
        self.p = subprocess.Popen([PROBE, runtime, str(self.port)] + (["--db", db] if db else []),
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        line = self.p.stdout.readline()
        if not line:
            self.p.wait(30)
            raise AssertionError(f"probe for {runtime} said nothing (exit {self.p.returncode})")
        self.state = json.loads(line)
        if not self.state.get("started"):
            self.p.wait(30)
            raise AssertionError(f"{runtime}: start failed: {self.state.get('error')}")
        self.container = self.state["paths"].split()[1]

    def stop(self, how="stdin"):
        if how == "stdin":
            self.p.stdin.write("stop\n")
            self.p.stdin.flush()
        else:
            self.p.send_signal(how)
        out = self.p.stdout.readline()
        self.p.wait(60)
        self.log.seek(0)
        return json.loads(out) if out else {"stopped": False, "error": "no answer"}, self.p.returncode

    def logs(self):
        with open(self.log.name) as f:
            return f.read()[-2000:]


def container_exists(cid):
    return sh(["docker", "inspect", "--format", "{{.Id}}", cid]).returncode == 0


def check_route(conn, runtime, route):
    want = ROUTES[route]
    conn.request("GET", want["path"], headers={"Host": "127.0.0.1"})
    r = conn.getresponse()
    body = r.read()
    where = f"{runtime} {want['path']}"
    assert r.status == want["status"], f"{where}: status {r.status}, want {want['status']}"
    assert r.getheader("Content-Type") == want["content_type"], \
        f"{where}: Content-Type {r.getheader('Content-Type')!r}, want {want['content_type']!r}"
    if "body_regex" in want:
        assert re.search(want["body_regex"], body.decode()), f"{where}: body {body!r}"
    else:
        assert body == want["body"].encode(), f"{where}: body {body!r}, want {want['body']!r}"
    for h in CONTRACT["headers"]["required"]:
        assert len(r.msg.get_all(h) or []) == 1, f"{where}: header {h} missing or repeated"
    assert r.getheader("Content-Length") == str(len(body)), f"{where}: Content-Length"
    assert (r.getheader("Connection") or "").lower() != "close", f"{where}: Connection: close"
    assert not r.will_close, f"{where}: the server would close a keep-alive connection"


def check_limits(st):
    runtime = st.get("runtime", "")
    assert st["limits_ok"], f"{runtime}: limits not read back: {st['limits_err']}"
    assert st["backend"] == "docker"
    assert abs(st["cpus"] - LIMITS["cpus"]) < 1e-9, f"cpus read back {st['cpus']}, contract {LIMITS['cpus']}"
    assert st["cpuset"] == LIMITS["server_cpus"], f"cpuset {st['cpuset']!r}, contract {LIMITS['server_cpus']!r}"
    assert st["memory_bytes"] == LIMITS["memory_bytes"], f"memory {st['memory_bytes']}"
    # v1: memory+swap equals memory (no swap); v2: swap.max is 0.
    want_sw = LIMITS["memory_bytes"] if st["cgroup_version"] == 1 else 0
    if st["memsw_bytes"] != -1 or st["cgroup_version"] == 2:
        assert st["memsw_bytes"] == want_sw, f"memsw {st['memsw_bytes']}, want {want_sw}"
    assert st["pids_max"] == LIMITS["pids"], f"pids.max {st['pids_max']}, contract {LIMITS['pids']}"


def each_runtime(runtime):
    engine()
    if runtime not in present():
        skip(f"{runtime} is not in the tree yet (its folder {FOLDERS[runtime]} is missing)")
    if not os.access(PROBE, os.X_OK):
        raise AssertionError(f"{PROBE} not built (make test-docker builds it)")
    before = ours()
    probe = Probe(runtime)
    try:
        st = probe.state
        assert st["listening"], f"{runtime}: never listened on {probe.port}: {probe.logs()}"
        assert st["alive"] == 1, f"{runtime}: exited: {st['exit_reason']}"
        check_limits(st)
        assert st["nprocs"] >= 2, f"{runtime}: processes from the cgroup: {st['pids']}"
        # Every process the backend reports is one of the container's (docker top agrees).
        top = sh(["docker", "top", probe.container, "-eo", "pid"]).stdout.split()[1:]
        assert sorted(map(int, top)) == sorted(st["pids"]), f"cgroup {st['pids']} vs docker top {top}"
        conn = http.client.HTTPConnection("127.0.0.1", probe.port, timeout=10)
        for _ in range(3):                      # the same connection, kept alive throughout
            for route in CONTRACT["comparison"]["routes"]:
                check_route(conn, runtime, route)
        conn.close()
    finally:
        res, rc = probe.stop()
    assert res["stopped"] and rc == 0, f"{runtime}: stop: {res} (exit {rc})"
    assert not container_exists(probe.container), f"{runtime}: container {probe.container} left behind"
    assert ours() <= before, f"containers left: {ours() - before}"


def targets():
    """The image's own targets (every {build}/ program of the contract's runtimes), so the
    suite and `make image` share one cache."""
    return ""


@test
def test_image_builds_and_is_cached():
    img = image()
    check = [os.path.join(ROOT, "docker", "build-image.sh"), "--base", state["base"], "--tag", img,
             "--targets", targets(), "--check"]
    t0 = time.monotonic()
    p = sh(check)
    if p.returncode != 0:
        # Others edit the tree while this runs: a changed context is not a cache failure.
        # Rebuild once (its layers are cached) and the check must then hold.
        print(f"tree changed during the test ({p.stdout.strip()}); rebuilding once")
        state.pop("image")
        image()
        t0 = time.monotonic()
        p = sh(check)
    assert p.returncode == 0 and "up to date" in p.stdout, f"not up to date after a build: {p.stdout}"
    size = int(sh(["docker", "image", "inspect", "--format", "{{.Size}}", img]).stdout)
    print(f"image {img}: {size / 1e6:.0f} MB; up-to-date check {time.monotonic() - t0:.1f} s")


@test
def test_image_identity_names_the_base():
    img = image()
    p = sh([os.path.join(ROOT, "docker", "image-identity.py"), img])
    assert p.returncode == 0, p.stderr
    ident = json.loads(p.stdout)
    real_id = sh(["docker", "image", "inspect", "--format", "{{.Id}}", img]).stdout.strip()
    assert ident["id"] == real_id
    assert ident["base"] == state["base"] and ident["pinned_base"] == state["pinned"]
    assert ident["base_is_pinned"] == (state["base"] == state["pinned"])
    if not ident["base_is_pinned"]:
        assert "not the pinned Ubuntu" in ident["note"] and state["base"] in ident["note"], ident["note"]
    osr = sh(["docker", "run", "--rm", "--entrypoint", "cat", img, "/etc/os-release"]).stdout
    assert f'PRETTY_NAME="{ident["base_os"]}"' in osr, (ident["base_os"], osr)
    for rt in present():
        v = ident["inside"]["versions"].get(rt, "")
        assert v and not v.startswith("unavailable"), f"{rt} version: {v!r}"


@test
def test_image_runs_as_non_root_without_build_tools():
    img = image()
    p = sh(["docker", "run", "--rm", "--entrypoint", "sh", img, "-c",
            "id -u; for t in cc gcc go make; do command -v $t || true; done"])
    lines = p.stdout.split()
    assert lines and lines[0] != "0", f"image user is root: {p.stdout}"
    assert lines[1:] == [], f"build tools left in the runtime image: {lines[1:]}"


@test
def test_pin_base_without_registry_changes_nothing():
    engine()
    d = tempfile.mkdtemp(prefix="kb-pin-")
    try:
        for f in ("pin-base.sh", "Dockerfile"):
            shutil.copy2(os.path.join(ROOT, "docker", f), d)
        before = open(os.path.join(d, "Dockerfile")).read()
        p = sh([os.path.join(d, "pin-base.sh")], timeout=300, env=dict(os.environ, KB_PIN_TIMEOUT="60"))
        after = open(os.path.join(d, "Dockerfile")).read()
        if p.returncode == 0:       # a registry answered: the pin must be a well-formed digest
            line = [ln for ln in after.splitlines() if ln.startswith("ARG BASE_IMAGE=")][0]
            assert line.startswith("ARG BASE_IMAGE=ubuntu:24.04@sha256:") and len(line) == 15 + 20 + 64, line
        else:
            assert after == before, "pin-base changed the Dockerfile though it failed"
            assert "unchanged" in p.stderr and "registry" in p.stderr, p.stderr
    finally:
        shutil.rmtree(d)


FAKE_DOCKER = """#!/bin/sh
# A registry that answers, for pin-base's rewrite path: pull succeeds, RepoDigests names a digest.
case "$1 $2" in
    "buildx version") exit 1 ;;
    "pull -q") echo "docker.io/library/$3"; exit 0 ;;
    "image inspect") echo "ubuntu@sha256:%s"; exit 0 ;;
esac
exit 1
"""


@test
def test_pin_base_rewrites_the_pin_when_a_registry_answers():
    d = tempfile.mkdtemp(prefix="kb-pin-")
    try:
        for f in ("pin-base.sh", "Dockerfile"):
            shutil.copy2(os.path.join(ROOT, "docker", f), d)
        digest = "0123456789abcdef" * 4
        os.mkdir(os.path.join(d, "bin"))
        with open(os.path.join(d, "bin", "docker"), "w") as f:
            f.write(FAKE_DOCKER % digest)
        os.chmod(os.path.join(d, "bin", "docker"), 0o755)
        before = open(os.path.join(d, "Dockerfile")).read().splitlines()
        env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"])
        p = sh([os.path.join(d, "pin-base.sh")], env=env)
        assert p.returncode == 0, p.stderr
        after = open(os.path.join(d, "Dockerfile")).read().splitlines()
        changed = [(a, b) for a, b in zip(before, after) if a != b]
        assert len(before) == len(after) and len(changed) == 1, changed
        assert changed[0][1] == f"ARG BASE_IMAGE=ubuntu:24.04@sha256:{digest}", changed
        p = sh([os.path.join(d, "pin-base.sh")], env=env)     # same answer: nothing to do
        assert p.returncode == 0 and "nothing to change" in p.stdout, p.stdout + p.stderr
    finally:
        shutil.rmtree(d)


@test
def test_php_fpm_in_container():
    each_runtime("php-fpm")


@test
def test_node_in_container():
    each_runtime("node")


@test
def test_go_in_container():
    each_runtime("go")


@test
def test_gray_static_in_container():
    each_runtime("gray-static")


def db_answers(port):
    """Wait (15 s at most) until /db stops answering 503: the pool connects after the port
    opens, as the curve's preflight allows."""
    deadline = time.monotonic() + 15
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/db")
        r = conn.getresponse()
        r.read()
        conn.close()
        if r.status != 503 or time.monotonic() > deadline:
            return
        time.sleep(0.2)


@test
def test_gray_static_db_with_the_images_postgresql():
    engine()
    if "gray-static" not in present():
        skip("gray-static is not in the tree yet")
    before, vols, cpus = ours(), volumes(), db_cpus()
    probe = Probe("gray-static", db=cpus)
    db_container = None
    try:
        st = probe.state
        assert st["listening"], f"gray-static never listened: {probe.logs()}"
        check_limits(st)    # the server's container keeps the contract's limits, alone
        with open(os.path.join(st["db_dir"], "limits.json")) as f:
            la = json.load(f)
        assert la["backend"] == "docker" and la["cpuset"] == cpus, la
        db_container = la["paths"].split()[1]
        assert db_container != probe.container and container_exists(db_container), la
        assert st["conninfo"].startswith("host=/var/lib/kneebench-db/sock "), st["conninfo"]
        db_answers(probe.port)
        conn = http.client.HTTPConnection("127.0.0.1", probe.port, timeout=10)
        for _ in range(5):
            check_route(conn, "gray-static", "db")
        conn.close()
    finally:
        res, rc = probe.stop(signal.SIGINT)     # Ctrl-C: both containers and the volume go
    assert res["stopped"] and rc == 0, f"stop: {res} (exit {rc})"
    assert not container_exists(probe.container), "the fixture's container survived"
    assert not container_exists(db_container), "PostgreSQL's container survived"
    assert ours() <= before and volumes() <= vols, (ours() - before, volumes() - vols)
    with open(os.path.join(st["db_dir"], "postgres.log")) as f:
        log = f.read()
    # the cluster was made in the image and shut down by the stop, not only killed
    assert "kneebench-db: ready" in log and "database system is shut down" in log, log[-1500:]
    shutil.rmtree(st["db_dir"], ignore_errors=True)


@test
def test_failed_db_start_leaves_nothing():
    engine()
    image()
    if "gray-static" not in present():
        skip("gray-static is not in the tree yet")
    before, vols = ours(), volumes()
    bad = str(max(os.sched_getaffinity(0)) + 4096)      # a CPU no engine has
    p = subprocess.run([PROBE, "gray-static", str(free_port()), "--db", bad], input="",
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, KB_DOCKER_IMAGE=image()))
    st = json.loads(p.stdout.splitlines()[0])
    assert not st["started"] and p.returncode != 0, st
    assert "docker run" in st["error"], st["error"]
    assert ours() <= before and volumes() <= vols, (ours() - before, volumes() - vols)
    shutil.rmtree(st["db_dir"], ignore_errors=True)


@test
def test_db_point_with_docker_backend():
    """One short /db point: preflight (exact response) passes, PostgreSQL's limits are
    recorded beside the fixture's, the point has its evidence, nothing is left running."""
    img = image()
    if "gray-static" not in present():
        skip("gray-static is not in the tree yet")
    run = tempfile.mkdtemp(prefix="kb-docker-db-")
    try:
        before, vols = ours(), volumes()
        p = sh([KB, "curve", "--run", run, "--backend", "docker", "--image", img,
                "--profile", "quick", "--confirm", "1", "--runtimes", "gray-static", "--routes", "db",
                "--rates", "500", "--duration", "2", "--warmup", "1", "--drain", "1",
                "--threads", "1", "--connections", "16", "--free-ports"], timeout=300)
        print(p.stdout[-800:])
        assert p.returncode == 0, f"curve failed ({p.returncode}): {p.stderr[-1500:]}"
        assert ours() <= before and volumes() <= vols, (ours() - before, volumes() - vols)
        fx = os.path.join(run, "fixtures", "gray-static")
        with open(os.path.join(fx, "preflight.json")) as f:
            pre = json.load(f)
        assert pre["db"]["ok"] and not pre["failed"], pre
        with open(os.path.join(fx, "pg", "limits.json")) as f:
            la = json.load(f)
        assert la["backend"] == "docker" and re.fullmatch(r"[0-9,-]+", la["cpuset"]), la
        with open(os.path.join(fx, "limits.json")) as f:
            assert json.load(f)["paths"].split()[1] != la["paths"].split()[1]
        with open(os.path.join(fx, "pg", "postgres.log")) as f:
            assert "database system is shut down" in f.read()
        pt = os.path.join(run, "points", "gray-static-db-500")
        with open(os.path.join(pt, "verdict.json")) as f:
            v = json.load(f)
        with open(os.path.join(pt, "load.json")) as f:
            load = json.load(f)
        print(f"db point: {v['verdict']}: {v['reason']}; completed {load['completed']} of "
              f"{load['scheduled']}, p99 {load['corrected_us']['p99']} us")
        assert v["verdict"] != "failed", v
        # every response checked against the contract's /db pattern during the load too
        assert load["completed"] > 0 and load["mismatches"]["total"] == 0, load["mismatches"]
    finally:
        shutil.rmtree(run, ignore_errors=True)


@test
def test_interrupted_runner_removes_its_container():
    engine()
    rt = "go" if "go" in present() else skip("needs the go fixture")
    probe = Probe(rt)
    assert container_exists(probe.container)
    res, rc = probe.stop(signal.SIGINT)         # what Ctrl-C in the curve does
    assert res["stopped"], res
    assert not container_exists(probe.container), "container survived SIGINT"


@test
def test_container_of_dead_runner_is_swept():
    engine()
    rt = "go" if "go" in present() else skip("needs the go fixture")
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"kneebench-{dead.pid}-{rt}-stale"
    p = sh(["docker", "run", "-d", "--name", name, f"--label={LABEL}={dead.pid}", "--network=host",
            image(), rt, "--port", str(free_port())])
    assert p.returncode == 0, p.stderr
    try:
        probe = Probe(rt)
        res, rc = probe.stop()
        assert res["stopped"], res
        assert not container_exists(name), "the dead runner's container was not swept"
    finally:
        sh(["docker", "rm", "-f", name])


@test
def test_small_curve_with_docker_backend():
    img = image()
    p = sh([KB, "curve", "--help"])
    if "--backend" not in p.stdout + p.stderr:
        skip(f"kneebench curve is not built yet ({(p.stderr or p.stdout).strip()[:120]})")
    rts = [rt for rt in ("go", "node") if rt in present()]
    if len(rts) < 2:
        skip("needs the go and node fixtures")
    # Two low rates, not the contract's: the machine is shared and knees are not the point
    # here, only that every point runs in its container under the contract's limits.
    rates = ["500", "1000"]
    run = tempfile.mkdtemp(prefix="kb-docker-curve-")
    try:
        env = dict(os.environ)
        env.pop("KB_DOCKER_IMAGE", None)        # --image alone names it
        before = ours()
        p = sh([KB, "curve", "--run", run, "--backend", "docker", "--image", img,
                "--profile", "quick", "--confirm", "1",
                "--runtimes", ",".join(rts), "--routes", ",".join(CONTRACT["comparison"]["routes"]),
                "--rates", ",".join(rates), "--duration", "1", "--warmup", "1", "--drain", "1",
                "--threads", "1", "--connections", "16", "--free-ports"], timeout=600, env=env)
        print(p.stdout[-1500:])
        assert p.returncode == 0, f"curve failed ({p.returncode}): {p.stderr[-1500:]}"
        assert ours() <= before, f"containers left after the curve: {ours() - before}"
        verdicts = []
        for dirpath, _, files in os.walk(run):
            if "verdict.json" in files:
                verdicts.append(dirpath)
        want = len(rts) * len(CONTRACT["comparison"]["routes"]) * len(rates)
        assert len(verdicts) == want, f"{len(verdicts)} points with a verdict, want {want}"
        # the host's floor is measured in the image too: kb-control is one of its programs
        with open(os.path.join(run, "floor", "f1", "floor.json")) as f:
            fl = json.load(f)
        assert fl["error"] is None and fl["cpu_us_per_response"] > 0, (fl, p.stdout[-800:])
        for rt in rts:
            with open(os.path.join(run, "fixtures", rt, "limits.json")) as f:
                la = json.load(f)
            la["runtime"] = rt
            la.setdefault("limits_ok", True)
            la.setdefault("limits_err", "")
            assert la.get("backend") == "docker", f"{rt} not run in docker: {la}"
            check_limits(la)
        check_image_evidence(run, img, rts)
    finally:
        shutil.rmtree(run, ignore_errors=True)


def check_image_evidence(run, img, rts):
    """run.json, identity.json, report.md and report.json of a docker run on img."""
    real_id = sh(["docker", "image", "inspect", "--format", "{{.Id}}", img]).stdout.strip()
    want = json.loads(sh([os.path.join(ROOT, "docker", "image-identity.py"), img]).stdout)
    with open(os.path.join(run, "run.json")) as f:
        rj = json.load(f)
    im = rj.get("image")
    assert rj["backend"] == "docker" and im, f"run.json has no image identity: {sorted(rj)}"
    assert im["image"] == img and im["id"] == real_id, (im["image"], im["id"], real_id)
    for k in ("repo_digests", "base", "base_is_pinned", "note", "pinned_base"):
        assert im[k] == want[k], f"run.json image {k}: {im[k]!r}, image-identity says {want[k]!r}"
    for rt in rts:      # the image's versions, not the host's `node --version`
        assert rj["runtime_versions"][rt] == want["inside"]["versions"][rt], \
            (rt, rj["runtime_versions"][rt], want["inside"]["versions"][rt])
        with open(os.path.join(run, "fixtures", rt, "identity.json")) as f:
            ident = json.load(f)
        assert ident["image_id"] == real_id and "files" not in ident, ident
    p = sh([KB, "report", run])
    assert p.returncode == 0, p.stderr
    with open(os.path.join(run, "report.md")) as f:
        md = f.read()
    with open(os.path.join(run, "report.json")) as f:
        rep = json.load(f)
    assert "- backend: `docker`" in md and real_id in md, md[-3000:]
    assert rep["backend"] == "docker" and rep["image"]["id"] == real_id, rep.get("image")
    assert rep["image"]["repo_digests"] == im["repo_digests"]
    if im["repo_digests"]:
        assert im["repo_digests"][0] in md
    else:
        assert "digest none" in md, md[-3000:]
    if not im["base_is_pinned"]:    # this machine: the local Debian base
        assert im["note"] and "not the pinned Ubuntu" in im["note"], im["note"]
        # wrapped at the report's 100 columns, like all its prose
        assert f"> **BASE NOT PINNED**: {im['note']}" in " ".join(md.split()), md[:1500]
        assert rep["image"]["note"] == im["note"]
    else:
        assert "BASE NOT PINNED" not in md


@test
def test_docker_identity_is_the_image_not_host_builds():
    """A host build/ that changes between points is no change for a docker run; a re-tagged
    image is: the point redone on it fails with "changed fixture identity"."""
    img = image()
    rt = "go" if "go" in present() else skip("needs the go fixture")
    run, build = tempfile.mkdtemp(prefix="kb-docker-id-"), tempfile.mkdtemp(prefix="kb-docker-build-")
    tag = f"kneebench-idtest:{os.getpid()}"
    exe = os.path.join(build, "go-server")

    def curve():
        return sh([KB, "curve", "--run", run, "--backend", "docker", "--image", tag,
                   "--profile", "quick", "--confirm", "1", "--runtimes", rt, "--routes", "plaintext", "--rates", "500",
                   "--duration", "1", "--warmup", "1", "--drain", "1", "--threads", "1",
                   "--connections", "8", "--free-ports", "--build", build], timeout=300)

    def redo():
        os.unlink(os.path.join(run, "points", f"{rt}-plaintext-500", "DONE"))
        p = curve()
        assert p.returncode == 0, p.stderr[-1500:]
        with open(os.path.join(run, "points", f"{rt}-plaintext-500", "verdict.json")) as f:
            return json.load(f)

    try:
        assert sh(["docker", "tag", img, tag]).returncode == 0
        with open(exe, "w") as f:
            f.write("host build one\n")
        p = curve()
        assert p.returncode == 0, p.stderr[-1500:]
        with open(exe, "w") as f:       # a host rebuild while the run is on
            f.write("host build two\n")
        v = redo()
        assert "changed fixture identity" not in v["reason"], v
        assert v["verdict"] != "failed", v
        # the same tag on another image (a label more: a new ID, nothing rebuilt)
        p = subprocess.run(["docker", "build", "-q", "-t", tag, "-"], capture_output=True, text=True,
                           input=f"FROM {img}\nLABEL org.kneebench.idtest={os.getpid()}\n", timeout=120)
        assert p.returncode == 0, p.stderr
        v = redo()
        assert v["verdict"] == "failed" and "changed fixture identity" in v["reason"], v
    finally:
        sh(["docker", "rmi", tag])
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(build, ignore_errors=True)


@test
def test_image_option_refused_with_native_backend():
    if not os.access(KB, os.X_OK):
        raise AssertionError(f"{KB} not built")
    run = tempfile.mkdtemp(prefix="kb-docker-native-")
    try:
        p = sh([KB, "curve", "--run", run, "--backend", "native", "--image", "x:y"])
        assert p.returncode == 2 and "--image is for --backend docker" in p.stderr, (p.returncode, p.stderr)
        assert not os.path.exists(os.path.join(run, "plan.json")), "refused, yet a plan was written"
    finally:
        shutil.rmtree(run, ignore_errors=True)


if __name__ == "__main__":
    kbtest.exit_with("docker", sys.argv[1:] or None)
