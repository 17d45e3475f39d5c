"""End-to-end tests of `kneebench load --dispatch`: the same stall of one connection, at the
same rate, costs one request when a due request takes any free connection, and every request
scheduled on that connection meanwhile when each connection has its own share of the
schedule (wrk2's model). The assertions compare the two models side by side in one run;
the stall (1.2 s) dwarfs what a noisy host adds."""
import json
import os
import shutil
import subprocess
import sys
import time

from kbenv import KB, need
from kbtest import run, test
from loadlib import CONTROL, HERE, TMP, Proc, load

RATE, CONNS, SECONDS, STALL = 200, 4, 3, 1.2


def stalled_load(dispatch):
    srv = Proc([sys.executable, os.path.join(HERE, "uneven_server.py"), "--after", "1",
                "--stall", str(STALL)])
    out = os.path.join(TMP, f"dispatch-{dispatch}-{time.monotonic_ns()}.json")
    try:
        p = subprocess.run([KB, "load", f"http://127.0.0.1:{srv.port}/", "-R", str(RATE),
                            "-d", str(SECONDS), "-t", "1", "-c", str(CONNS), "--drain", "3",
                            "--dispatch", dispatch, "--json", out, "--quiet",
                            # the trial requests would take the connection the server stalls
                            "--no-preflight"],
                           capture_output=True, text=True, timeout=60)
    finally:
        srv.stop()
    assert p.returncode == 0, (p.returncode, p.stderr)
    with open(out) as f:
        return json.load(f)


@test
def one_stalled_connection_delays_only_its_own_requests_per_connection():
    need(KB)
    anyc, own = stalled_load("any"), stalled_load("per-connection")
    assert anyc["dispatch"] == "any" and own["dispatch"] == "per-connection"
    for j in (anyc, own):
        assert j["errors"]["total"] == 0 and j["completed"] == j["scheduled"], j["errors"]
        # the stall happened in both: the request it held took about STALL seconds
        assert j["corrected_us"]["max"] >= STALL * 0.9e6, j["corrected_us"]
    p99_any, p99_own = anyc["corrected_us"]["p99"], own["corrected_us"]["p99"]
    # per-connection: a quarter of the requests due during the stall waited behind it, about
    # RATE / CONNS * STALL = 60 of 600, 10 %: p99 lands deep in the stall
    assert p99_own >= 0.3e6, p99_own
    # any: the other connections took them, only the one held request is slow
    assert p99_own > 5 * p99_any, (p99_any, p99_own)
    # the waits behind the stall are the server's (conn_wait), not the client's lateness
    assert own["conn_wait_us"]["p99"] > 0.1e6 >= anyc["conn_wait_us"]["p99"], \
        (own["conn_wait_us"], anyc["conn_wait_us"])


def phases(*extra):
    """The measured requests' intended times within one connection's period (10 ms: 400/s on
    4 connections), as the requests log gives them, in 100 us bins; and the JSON."""
    s = Proc([CONTROL, "--port", "0"])
    log = os.path.join(TMP, f"phases-{time.monotonic_ns()}.log")
    try:
        j, _ = load(s.port, "--requests-log", log, *extra, rate=400, duration=1, warmup=0.5,
                    threads=1, connections=4)
    finally:
        s.stop()
    with open(log) as f:
        rows = [ln.split() for ln in f if not ln.startswith("#")]
    assert len(rows) == 400, len(rows)
    return sorted({round(int(r[0]) % 10000 / 100) % 100 for r in rows}), j


@test
def per_connection_sends_at_wrk2s_staggered_phases():
    need(KB)
    # wrk2 starts connection i 5 ms after connection i - 1 and each keeps its own schedule:
    # with a 10 ms period the four fall into two phases, 5 ms apart, two requests at each
    wrk2, j = phases("--dispatch", "per-connection")
    assert j["dispatch"] == "per-connection" and j["stagger_ms"] == 5, j["stagger_ms"]
    assert len(wrk2) == 2 and (wrk2[1] - wrk2[0]) == 50, wrk2
    # spread evenly, the phases are the plain schedule's: four, 2.5 ms apart, as `any` sends
    even, j = phases("--dispatch", "per-connection", "--stagger", "even")
    assert j["stagger_ms"] == "even" and len(even) == 4, even
    plain, j = phases("--dispatch", "any")
    assert j["stagger_ms"] is None and even == plain, (even, plain)
    # another stagger: 2.5 ms puts each connection a quarter period after the last
    quarter, j = phases("--dispatch", "per-connection", "--stagger", "2.5")
    assert j["stagger_ms"] == 2.5 and len(quarter) == 4, quarter


@test
def stagger_refuses_what_is_not_a_time():
    need(KB)
    for bad in ("0", "-1", "soon", "2000"):
        p = subprocess.run([KB, "load", "http://127.0.0.1:9/", "-R", "10", "-d", "1",
                            "--stagger", bad], capture_output=True, text=True, timeout=10)
        assert p.returncode == 2 and "--stagger is milliseconds" in p.stderr, (bad, p.stderr)


@test
def dispatch_refuses_an_unknown_model():
    need(KB)
    p = subprocess.run([KB, "load", "http://127.0.0.1:9/", "-R", "10", "-d", "1",
                        "--dispatch", "round-robin"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and "--dispatch is any or per-connection" in p.stderr, p.stderr


if __name__ == "__main__":
    try:
        rc = run("e2e-dispatch" + os.environ.get("KB_TEST_SUFFIX", ""), sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)
