"""test_stopped -- a client stopped mid-measurement is the client's delay, never the server's.

Issue 38: a runner stopped (SIGSTOP) with its load through the end of the drain came back
to requests never sent and answers never read, counted with no client delay, and the sample
was judged `uncontrolled` with the client trusted. Here the whole client is stopped --
`load` with its threads, `knee` (its load runs in its own process), `curve` with its load
child -- for 2.5 s inside a short measured interval against kb-control or gray-static, and
the sample must come out client-limited: `load` warns and exits 5, `knee` retakes it, and
`curve` keeps the point flagged client-limited. The server stopped the same way instead stays `uncontrolled`, the client trusted.
Every process stopped here is one this suite started, signalled by its PID or group.
"""
import glob
import json
import os
import signal
import subprocess
import tempfile
import time

from kbenv import BUILD, KB, need
from kbtest import exit_with, skip, test
from kbcontrol import Control

TMP = tempfile.mkdtemp(prefix="kb-stopped-e2e-")
STOP_S = 2.5
SHORT = ["--duration", "1", "--warmup", "0.5", "--drain", "0.5"]
WARNING = "warning: the client's own lateness"


def stopped(signal_to, seconds=STOP_S):
    """Stop, wait, continue: signal_to(sig) sends sig to whatever is being stopped."""
    signal_to(signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        signal_to(signal.SIGCONT)


def group_of(p):
    """The process group of p, started with start_new_session: p and every child of it."""
    return lambda sig: os.killpg(p.pid, sig)


def start(argv):
    # its own session, so that the group stopped is this client and nothing else
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def finish(p, timeout=120):
    out, err = p.communicate(timeout=timeout)
    assert "Sanitizer" not in err, err
    return p.returncode, out, err


def load_argv(url, json_out):
    return [KB, "load", "-R", "1000", "-d", "2", "--warmup", "0.5", "--drain", "0.5", "-t1",
            "-c8", "--json", json_out, url]


@test
def a_stopped_load_is_client_limited_with_a_warning_and_exit_5():
    """Stopped from inside the measured interval until past the drain's end: the requests it
    never sent or read are its own (unfinished_client), it warns, and it exits 5."""
    need(KB)
    with Control() as s:
        out = os.path.join(TMP, "load-client.json")
        p = start(load_argv(s.url, out))
        time.sleep(1.2)             # the probe, the connections, 0.5 s of warmup: measuring
        stopped(group_of(p))
        rc, so, se = finish(p)
    j = json.load(open(out))
    assert rc == 5, (rc, se)
    assert WARNING in se and "not running when the drain ended" in se, se
    assert j["unfinished_client"] == j["unfinished_at_drain_end"] > 0, j
    assert j["client_late_at_drain_end_us"] > 50000, j


@test
def a_load_stopped_and_resumed_before_the_drain_ends_is_client_limited():
    """Sent late, not never: a stop of 1 s inside a 2 s interval leaves a backlog the client
    sends once it runs again; that lateness is its own (send lag), so exit 5 as well."""
    need(KB)
    with Control() as s:
        out = os.path.join(TMP, "load-late.json")
        p = start(load_argv(s.url, out) + ["--drain", "2"])
        time.sleep(1.0)
        stopped(group_of(p), 1.0)
        rc, so, se = finish(p)
    j = json.load(open(out))
    assert rc == 5 and WARNING in se, (rc, se)
    assert j["unfinished_client"] == 0, j


@test
def a_stopped_server_leaves_the_load_trusted_and_exit_0():
    """The same stop on the server: its unanswered requests are its own, the client is
    trusted, and load exits 0 with no warning."""
    need(KB)
    with Control() as s:
        out = os.path.join(TMP, "load-server.json")
        p = start(load_argv(s.url, out))
        time.sleep(1.2)
        stopped(lambda sig: os.kill(s.p.pid, sig))
        rc, so, se = finish(p)
    j = json.load(open(out))
    assert rc == 0 and WARNING not in se, (rc, se)
    assert j["unfinished_at_drain_end"] > 0 and j["unfinished_client"] == 0, j


def knee_argv(url, run):
    return [KB, "knee", "--run", run, "--start-rate", "500", "--max-rate", "1000", *SHORT,
            "--confirm", "1", "-c", "8", "-t", "1", url]


def knee_samples(run):
    """(rate, verdict) of every sample knee kept, in order."""
    out = []
    for v in sorted(glob.glob(os.path.join(run, "points", "*", "verdict.json"))):
        d = json.load(open(v))
        out.append((d.get("rate") or d["load"]["requested_rps"], d["verdict"]))
    return out


@test
def a_stopped_knee_retakes_its_sample_as_client_limited():
    need(KB)
    with Control() as s:
        run = os.path.join(TMP, "knee-client")
        p = start(knee_argv(s.url, run))
        time.sleep(1.6)             # the first sample's measured interval
        stopped(group_of(p))
        rc, so, se = finish(p, 300)
    text = so + se                  # the progress lines go to stderr off a terminal
    first = [ln for ln in text.splitlines() if "sample 1" in ln][0]
    assert "client-limited" in first, text
    assert "(retake)" in text, text
    assert "uncontrolled" not in text, text


@test
def a_stopped_server_under_knee_stays_uncontrolled():
    need(KB)
    with Control() as s:
        run = os.path.join(TMP, "knee-server")
        p = start(knee_argv(s.url, run))
        time.sleep(1.6)
        stopped(lambda sig: os.kill(s.p.pid, sig))
        rc, so, se = finish(p, 300)
    text = so + se
    first = [ln for ln in text.splitlines() if "sample 1" in ln][0]
    assert "uncontrolled" in first, text


def stat_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return rest[0], int(rest[1])
    except (OSError, IndexError):
        return None


def descendant(root, want, seconds=60):
    """The PID of a descendant of root whose command line want(argv) accepts, once there is
    one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        parents = {}
        for d in os.listdir("/proc"):
            st = d.isdigit() and stat_of(int(d))
            if st:
                parents[int(d)] = st[1]
        for pid in parents:
            up = pid
            while up in parents and up != root and up > 1:
                up = parents[up]
            if up != root or pid == root:
                continue
            try:
                argv = open(f"/proc/{pid}/cmdline").read().split("\0")
            except OSError:
                continue
            if want(argv):
                return pid
        time.sleep(0.02)
    raise AssertionError(f"no descendant of {root} as wanted")


def the_points_load(argv):
    """The point's own load, not the floor's nor a priming one: its JSON goes to points/."""
    return "load" in argv and any("/points/" in a for a in argv)


def need_root():
    if os.geteuid() != 0 or not os.access("/sys/fs/cgroup/pids", os.W_OK) and \
            not os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        skip("the native sandbox needs root and writable cgroups")
    need(KB, os.path.join(BUILD, "gray-static"))


def curve_argv(run):
    return [KB, "curve", "--run", run, "--runtimes", "gray-static", "--routes", "plaintext",
            "--rates", "1000", *SHORT, "--free-ports", "--confirm", "1", "--build", BUILD]


def curve_samples(run):
    v = json.load(open(os.path.join(run, "points", "gray-static-plaintext-1000", "verdict.json")))
    return v


def pids_in_load(p):
    """The runner and its point's load child, once the load has warmed up into its
    interval."""
    loader = descendant(p.pid, the_points_load)
    time.sleep(1.0)             # the probe, 0.5 s of warmup: measuring
    return [p.pid, loader]


@test
def a_stopped_curve_runner_and_load_are_client_limited():
    """The curve keeps a client-limited point flagged, never as the server's (protocol.md,
    "Point verdicts")."""
    need_root()
    run = os.path.join(TMP, "curve-client")
    p = start(curve_argv(run))
    pids = pids_in_load(p)
    stopped(lambda sig: [os.kill(x, sig) for x in pids])
    rc, so, se = finish(p, 300)
    assert rc == 0, (rc, so, se)
    assert "client-limited" in so + se, (so, se)
    v = curve_samples(run)
    assert v["verdict"] == "client-limited", v
    assert "not running when the drain ended" in v["reason"], v


@test
def a_stopped_curve_server_stays_uncontrolled():
    need_root()
    run = os.path.join(TMP, "curve-server")
    p = start(curve_argv(run))
    server = descendant(p.pid, lambda argv: argv[0].endswith("/gray-static"))
    descendant(p.pid, the_points_load)
    time.sleep(1.0)
    stopped(lambda sig: os.kill(server, sig))
    rc, so, se = finish(p, 300)
    v = curve_samples(run)
    assert v["verdict"] == "uncontrolled", v


if __name__ == "__main__":
    exit_with("e2e-stopped")
