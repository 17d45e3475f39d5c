"""End-to-end tests of `kneebench load --send-quantum-us`: sends closer together than the
quantum share one wake-up on a CLOCK_MONOTONIC grid, sparser sends keep their exact wake-up,
and the JSON says which quantum a run used. The send times come from the requests log; the
assertions compare shapes (how many separate send moments, the median lateness), which hold
on a loaded machine, not absolute timings."""
import os
import shutil
import statistics
import subprocess
import sys
import time

from kbenv import CONTRACT, KB, need
from kbtest import run, test
from loadlib import CONTROL, TMP, Proc, load

Q_US = 1000   # the largest quantum the option takes: bursts a millisecond apart


def load_logged(port, *extra, rate, duration=1.0, threads=1, connections=32):
    """A run with --requests-log: its JSON, each sent request's send time and its lateness."""
    log = os.path.join(TMP, f"q-{time.monotonic_ns()}.log")
    j, _ = load(port, "--requests-log", log, *extra, rate=rate, duration=duration, warmup=0.2,
                threads=threads, connections=connections)
    with open(log) as f:
        rows = [ln.split(" ") for ln in f.read().splitlines() if not ln.startswith("#")]
    intended = [int(r[0]) for r in rows if r[1] != "-"]
    sent = [int(r[1]) for r in rows if r[1] != "-"]
    assert j["errors"]["total"] == 0 and len(sent) == j["scheduled"], (j["errors"], len(sent))
    assert all(s >= i for s, i in zip(sent, intended)), "a request went out before its time"
    return j, sent, [s - i for s, i in zip(sent, intended)]


def send_moments(sent, gap_us):
    """Sends separated by less than gap_us belong to one wake-up."""
    s = sorted(sent)
    return 1 + sum(1 for a, b in zip(s, s[1:]) if b - a >= gap_us)


@test
def close_sends_share_a_wake_up_on_the_grid():
    need(KB)
    need(CONTROL)
    srv = Proc([CONTROL, "--port", "0"])
    try:
        # 10k/s from one thread: a send every 100 us, ten per 1 ms quantum
        jq, sent_q, lag_q = load_logged(srv.port, "--send-quantum-us", str(Q_US), rate=10000)
        j0, sent_0, lag_0 = load_logged(srv.port, "--send-quantum-us", "0", rate=10000)
    finally:
        srv.stop()
    assert jq["send_quantum_us"] == Q_US and j0["send_quantum_us"] == 0, (jq["send_quantum_us"], j0["send_quantum_us"])
    grid = int(jq["duration_s"] * 1e6 / Q_US)          # wake-ups the grid allows in the interval
    bursts = send_moments(sent_q, Q_US // 2)
    # never more wake-ups than grid points (a stalled machine only merges them) ...
    assert grid // 3 <= bursts <= grid + 5, (bursts, grid)
    # ... while without the quantum the sends are spread evenly, 100 us apart
    assert send_moments(sent_0, Q_US // 2) < bursts // 4, (send_moments(sent_0, Q_US // 2), bursts)
    # waiting for the grid is the client's lateness, bounded by the quantum at the median
    assert statistics.median(lag_0) < statistics.median(lag_q) <= Q_US, (statistics.median(lag_0), statistics.median(lag_q))
    assert jq["lag_us"]["p50"] <= Q_US + 100, jq["lag_us"]


@test
def sparse_sends_keep_their_own_wake_up():
    need(KB)
    need(CONTROL)
    srv = Proc([CONTROL, "--port", "0"])
    try:
        # 400/s: a send every 2.5 ms, farther apart than the quantum
        j, sent, lag = load_logged(srv.port, "--send-quantum-us", str(Q_US), rate=400, connections=4)
    finally:
        srv.stop()
    # on the grid, lateness would be spread over the whole quantum (median near 500 us)
    assert statistics.median(lag) < Q_US / 4, statistics.median(lag)
    assert send_moments(sent, Q_US // 2) >= len(sent) * 0.9, (send_moments(sent, Q_US // 2), len(sent))


@test
def default_comes_from_the_contract_and_bad_values_are_refused():
    need(KB)
    need(CONTROL)
    srv = Proc([CONTROL, "--port", "0"])
    try:
        j, _, _ = load_logged(srv.port, rate=200, duration=0.5, connections=4)
    finally:
        srv.stop()
    assert j["send_quantum_us"] == CONTRACT["comparison"].get("send_quantum_us", 0), j["send_quantum_us"]
    for bad in ("1001", "-1", "x"):
        p = subprocess.run([KB, "load", "--url", "http://127.0.0.1:1/plaintext", "--route", "plaintext",
                            "--rate", "10", "--duration", "1", "--warmup", "0", "--send-quantum-us", bad],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2 and "--send-quantum-us must be a whole number in 0..1000" in p.stderr, (bad, p.returncode, p.stderr)


def main():
    try:
        rc = run("e2e-load-quantum" + os.environ.get("KB_TEST_SUFFIX", ""), sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
