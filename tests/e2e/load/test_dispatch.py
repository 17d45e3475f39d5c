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
from loadlib import HERE, TMP, Proc

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
