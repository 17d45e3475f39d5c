"""End-to-end tests of `kneebench load --requests-log`: one line per measured request whose
counts agree with the JSON, each line's latency is received - intended, errors carry their
kind, and --requests-log-max truncates and says so. Low rates, a second or two each."""
import os
import shutil
import subprocess
import sys

from kbenv import KB, need
from kbtest import run, test
from loadlib import CONTROL, TMP, Proc, hostile, load


KINDS = {"connect", "read", "write", "timeout", "peer_close", "malformed"}


def read_log(path):
    with open(path) as f:
        lines = f.read().splitlines()
    head = [ln for ln in lines if ln.startswith("#")]
    rows = [ln.split(" ") for ln in lines if not ln.startswith("#")]
    assert len(head) == 2 and head[1] == "# intended_us sent_us received_us status latency_us error", head
    for r in rows:
        assert len(r) == 6, r
    return head, rows


def check_rows(rows):
    prev = -1
    for intended, sent, received, status, latency, err in rows:
        i = int(intended)
        assert i >= 0 and i >= prev, (i, prev)   # measured interval only, intended-time order
        prev = i
        if received == "-":
            assert status == "-" and latency == "-" and err in KINDS, (intended, sent, received, status, err)
        else:
            assert err == "-" and int(status) >= 100, (received, status, err)
            assert int(latency) == int(received) - i, (intended, received, latency)
            assert int(sent) >= i and int(received) >= int(sent), (intended, sent, received)
        if sent != "-":
            assert int(sent) >= i


@test
def counts_match_json_and_latency_is_received_minus_intended():
    need(KB)
    need(CONTROL)
    s = Proc([CONTROL, "--port", "0"])
    log = os.path.join(TMP, "req.log")
    try:
        j, _ = load(s.port, "--requests-log", log, rate=400, duration=1, warmup=0.5, threads=2,
                    connections=4)
    finally:
        s.stop()
    head, rows = read_log(log)
    assert j["requests_log"] == log and j["requests_log_max"] == 1_000_000, j
    assert j["requests_log_truncated"] is False, j
    assert j["requests_logged"] == j["scheduled"] == len(rows) == 400, (j["requests_logged"], len(rows))
    assert f"{len(rows)} records" in head[0] and "TRUNCATED" not in head[0], head
    check_rows(rows)
    done = [r for r in rows if r[2] != "-"]
    assert len(done) == j["completed"], (len(done), j["completed"])
    assert sum(1 for r in rows if r[5] != "-") == j["errors"]["total"]
    # the lines' latencies are the histogram's, to the microsecond of rounding
    lat = sorted(int(r[4]) for r in done)
    assert abs(lat[-1] - j["corrected_us"]["max"]) <= max(2, j["corrected_us"]["max"] // 500), (lat[-1], j["corrected_us"])
    assert not [p for p in os.listdir(TMP) if ".tmp." in p]


@test
def off_by_default():
    need(KB)
    need(CONTROL)
    s = Proc([CONTROL, "--port", "0"])
    before = set(os.listdir(TMP))
    try:
        j, _ = load(s.port, rate=100, duration=0.5)
    finally:
        s.stop()
    assert j["requests_log"] is None and j["requests_log_max"] is None, j
    assert j["requests_logged"] == 0 and j["requests_log_truncated"] is False, j
    assert not [p for p in set(os.listdir(TMP)) - before if not p.endswith(".json")]


@test
def errors_logged_with_their_kind():
    need(KB)
    h = hostile("close_mid", every=5)
    log = os.path.join(TMP, "req-err.log")
    try:
        j, _ = load(h.port, "--requests-log", log, rate=200, duration=1)
    finally:
        h.stop()
    _, rows = read_log(log)
    assert j["errors"]["peer_close"] > 0, j["errors"]
    assert len(rows) == j["requests_logged"] == j["scheduled"], (len(rows), j["scheduled"])
    check_rows(rows)
    for kind in KINDS:
        assert sum(1 for r in rows if r[5] == kind) == j["errors"][kind], (kind, j["errors"])


@test
def bound_truncates_and_says_so():
    need(KB)
    need(CONTROL)
    s = Proc([CONTROL, "--port", "0"])
    log = os.path.join(TMP, "req-trunc.log")
    try:
        j, _ = load(s.port, "--requests-log", log, "--requests-log-max", "50", rate=300, duration=1,
                    threads=2, connections=4)
    finally:
        s.stop()
    head, rows = read_log(log)
    assert j["scheduled"] == 300 and j["requests_log_max"] == 50, j
    assert j["requests_log_truncated"] is True, j
    assert j["requests_logged"] == len(rows) == 50, (j["requests_logged"], len(rows))
    assert "50 records, TRUNCATED" in head[0], head
    check_rows(rows)


@test
def max_needs_a_file_and_a_writable_one():
    need(KB)
    p = subprocess.run([KB, "load", "--url", "http://127.0.0.1:9/", "--route", "plaintext", "--rate", "1",
                        "--duration", "1", "--warmup", "0", "--requests-log-max", "5"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "--requests-log-max needs --requests-log" in p.stderr, p.stderr
    p = subprocess.run([KB, "load", "--url", "http://127.0.0.1:9/", "--route", "plaintext", "--rate", "1",
                        "--duration", "1", "--warmup", "0", "--requests-log", "/nonexistent-dir/x.log"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "cannot write output" in p.stderr, p.stderr


def main():
    try:
        rc = run("e2e-load-reqlog" + os.environ.get("KB_TEST_SUFFIX", ""), sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
