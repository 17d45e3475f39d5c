"""End-to-end tests of `kneebench knee` against limiter.go, a server whose knee is known.

limiter.go answers 503 for requests past --limit a second (a token bucket), so its knee is
the limit: a sample above it fails on non-2xx responses, one below it holds. The samples
are short (1 s measured) and the rates a few thousand a second on loopback; a sample the
host disturbs is retaken or outvoted by the search itself, so the tests assert what the
search must find on any host: a bracket around the limit within the resolution, not how
many samples it took.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, KB, here, need
from kbtest import exit_with, test
from lineserver import LineServer

HERE = here(__file__)
LIMITER = os.path.join(BUILD, "tests", "knee-limiter")
TMP = tempfile.mkdtemp(prefix="kb-knee-e2e-")
SHORT = ["--duration", "1", "--warmup", "0.5", "--drain", "0.5", "-c", "32"]


class Limiter(LineServer):
    def __init__(self, limit):
        need(LIMITER)
        super().__init__([LIMITER, "--limit", str(limit)], r"listening on (\S+)")
        self.url = f"http://{self.m.group(1)}/limited"


def knee(*args, timeout=600):
    p = subprocess.run([KB, "knee", *args], capture_output=True, text=True, timeout=timeout)
    assert "Sanitizer" not in p.stderr, p.stderr
    return p


def bracket(line):
    m = re.match(r"knee between ([\d,]+) and ([\d,]+) req/s \(resolution 5 %", line)
    assert m, line
    return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))


@test
def a_503_limit_is_found_below_it_within_the_resolution():
    """Past 3,000 req/s the server answers 503: the knee's bracket lies below 3,000 at its
    low end and within 5 % of it; the report says the same as the first line, with the
    server's CPU per response from --pid."""
    run = os.path.join(TMP, "limit")
    with Limiter(3000) as s:
        p = knee(s.url, "--pid", str(s.p.pid), "--run", run, "--hold", "2", *SHORT)
    first = p.stdout.splitlines()[0]
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    lo, hi = bracket(first)
    assert lo < 3000 and hi <= 3000 * 1.05 and hi / lo - 1 <= 0.05 + 1e-9, (lo, hi)
    with open(os.path.join(run, "report.md")) as f:
        md = f.read()
    assert md.splitlines()[2].startswith("**" + first[:60]), md[:300]
    rep = json.load(open(os.path.join(run, "report.json")))
    assert rep["exit"] == 0 and rep["lo_rps"] == lo and rep["hi_rps"] == hi, rep
    kj = json.load(open(os.path.join(run, "knee.json")))
    steps = kj["steps"]
    assert kj["outcome"]["step"] == "located" and len(steps) == len(rep["samples"]), kj["outcome"]
    # every sample kept whole, its verdict's rate its own
    for st in steps:
        d = os.path.join(run, st["dir"])
        assert os.path.exists(os.path.join(d, "DONE")), d
        v = json.load(open(os.path.join(d, "verdict.json")))
        assert v["rate"] == st["rate"] and v["verdict"] == st["verdict"], (v["rate"], st)
    # the held end, once located, held a long sample too, the last step of the search
    hold = [st for st in steps if st["hold"]]
    assert len(hold) == 1 and hold[-1] is steps[-1], steps[-3:]
    assert hold[0]["rate"] == lo and hold[0]["dir"] == f"points/{lo}-hold1", hold
    assert hold[0]["verdict"] == "controlled" and hold[0]["why"] == "hold lo", hold
    held = json.load(open(os.path.join(run, hold[0]["dir"], "load.json")))
    assert held["duration_s"] == 2 and held["warmup_s"] == 5, (held["duration_s"], held["warmup_s"])
    assert "the held end held for 2 s" in first, first
    assert [w for w in rep["rows"] if w["rate_rps"] == lo][0]["hold_held"], rep["rows"]
    # above the limit the responses are 503s: failed, never controlled
    assert all(st["verdict"] == "failed" for st in steps if st["rate"] > 3000 * 1.06), steps
    assert any(st["verdict"] == "failed" and st["rate"] == hi for st in steps), steps
    # --pid: the server's CPU per response is measured
    assert any(x["server_cpu_us_per_response"] for x in rep["samples"]), rep["samples"][:2]
    svg = open(os.path.join(run, "charts", "knee.svg")).read()
    assert svg.count('class="mark ') == 2 * len(steps), svg.count('class="mark ')
    # `kneebench report` reads it all back and says the same
    r = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == first, (r.stdout, r.stderr)


@test
def a_server_that_never_refuses_ends_on_max_rate():
    """Within --max-rate 2,000 the unlimited server holds every rate: exit 1, naming the
    bound."""
    run = os.path.join(TMP, "never")
    with Limiter(0) as s:
        p = knee(s.url, "--max-rate", "2000", "--run", run, *SHORT)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert p.stdout.startswith("no knee up to 2,000 req/s: every rate held up to --max-rate"), p.stdout
    rates = [st["rate"] for st in json.load(open(os.path.join(run, "knee.json")))["steps"]]
    assert set(rates) == {1000, 2000}, rates


@test
def an_interrupted_search_resumes_from_its_kept_samples():
    """--max-time stops the search after its first sample (exit 1, said); the same command
    without it reads that sample back instead of measuring it again and finishes."""
    run = os.path.join(TMP, "resume")
    with Limiter(0) as s:
        p1 = knee(s.url, "--max-rate", "2000", "--run", run, "--max-time", "4s", *SHORT)
        first = json.load(open(os.path.join(run, "knee.json")))["steps"]
        p2 = knee(s.url, "--max-rate", "2000", "--run", run, *SHORT)
    assert p1.returncode == 1 and "stopped (by --max-time)" in p1.stdout, (p1.stdout, p1.stderr)
    assert len(first) == 1, first
    # it ends by itself this time (on --max-rate, or on the client's reach on a host that
    # starves the client twice at one rate: either way not on the time bound)
    doc = json.load(open(os.path.join(run, "knee.json")))
    assert p2.returncode == 1 and doc["outcome"]["end"] == "search", (p2.stdout, doc["outcome"])
    steps = doc["steps"]
    assert steps[0]["resumed"] and steps[0]["rate"] == first[0]["rate"], steps
    assert not steps[1]["resumed"], steps
    assert glob.glob(os.path.join(run, "run-resumed-*.json")), os.listdir(run)
    # a different search in the same directory is refused, not mixed in
    with Limiter(0) as s:
        p3 = knee(s.url, "--max-rate", "4000", "--run", run, *SHORT)
    assert p3.returncode == 2 and "different knee search" in p3.stderr, (p3.returncode, p3.stderr)


@test
def bad_arguments_exit_2_and_an_unreachable_target_3():
    with Limiter(0) as s:
        cases = [
            [],
            [s.url, "--resolution", "0"],
            [s.url, "--factor", "1"],
            [s.url, "--start-rate", "500", "--min-rate", "600"],
            [s.url, "--start-rate", "5000", "--max-rate", "4000"],
            [s.url, "--pid", str(s.p.pid), "--cgroup", "/sys/fs/cgroup"],
            [s.url, "--cgroup", "/nonexistent"],
            [s.url, "--confirm", "0"],
            [s.url, "--max-time", "inf"],
            [s.url, "-H", "Connection: close"],
            [s.url, "--route", "plaintext", "--expect-status", "200"],
            ["http://10.255.255.1/x"],          # not loopback, no --allow-remote
            [s.url, s.url],
        ]
        for argv in cases:
            p = knee(*argv, "--run", os.path.join(TMP, "bad"), timeout=30)
            assert p.returncode == 2, (argv, p.returncode, p.stderr)
            assert p.stderr.startswith("kneebench knee: "), (argv, p.stderr)
    assert not os.path.exists(os.path.join(TMP, "bad", "knee.json")), "a refused search ran"
    dead = subprocess.Popen(["true"])
    dead.wait()
    p = knee("http://127.0.0.1:9/x", "--run", os.path.join(TMP, "unreach"), timeout=30)
    assert p.returncode == 3 and "unreachable" in p.stderr, (p.returncode, p.stderr)
    p = knee("http://127.0.0.1:9/x", "--pid", str(dead.pid), timeout=30)
    assert p.returncode == 2 and "no such process" in p.stderr, (p.returncode, p.stderr)


class Hostile(LineServer):
    """tests/e2e/load/hostile_server.py misbehaving on every request (--mode), by PID."""

    def __init__(self, mode):
        self.stats = os.path.join(TMP, f"hostile-{mode}.json")
        super().__init__([sys.executable, os.path.join(HERE, "..", "load", "hostile_server.py"),
                          "--mode", mode, "--every", "1", "--stats", self.stats],
                         r"listening on (\S+)")
        self.url = f"http://{self.m.group(1)}/plaintext"


@test
def a_server_resetting_every_request_is_stopped_by_the_first_requests():
    """Issue 38: a failed sample with nothing completed (every request reset) printed
    `p99 nan ms` in its progress line. Issue 40: such a server no longer reaches a sample:
    the trial requests before any load stop the command within 5 s, the reset named, exit
    7, and no sample line (nan or dash) at all."""
    run = os.path.join(TMP, "reset")
    with Hostile("reset") as s:
        t0 = time.monotonic()
        p = knee(s.url, "--start-rate", "200", "--min-rate", "150", "--run", run,
                 *SHORT[:6], "-c", "8", timeout=120)
        took = time.monotonic() - t0
    assert p.returncode == 7 and took < 5, (p.returncode, took, p.stderr)
    assert "reset" in p.stderr or "closed the connection" in p.stderr, p.stderr
    assert "req/s  sample" not in p.stderr and "nan" not in p.stderr, p.stderr
    assert not os.path.exists(run), os.listdir(run)


@test
def a_server_closing_after_each_response_is_refused_at_the_first_sample():
    """Issue 38: a server that closes after every response (Connection: close, HTTP/1.1-legal)
    failed every rate at 100 % delivery and the search fell to --min-rate. kneebench measures
    keep-alive servers only: the search stops at its first sample, saying so, exit 1."""
    run = os.path.join(TMP, "close")
    with Hostile("conn_close") as s:
        p = knee(s.url, "--start-rate", "400", "--run", run, *SHORT[:6], "-c", "8",
                 timeout=120)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert p.stderr.count("req/s  sample") == 1, p.stderr
    assert "closes its connection after each response" in p.stderr, p.stderr
    assert "keep-alive servers only" in p.stderr, p.stderr
    assert "no rate held down to --min-rate" not in p.stdout, p.stdout
    assert len(json.load(open(os.path.join(run, "knee.json")))["steps"]) == 1
    # the headline names no rate it does not have ("before any rate held at req/s" was)
    assert "at req/s" not in p.stdout and "not bracketed" in p.stdout, p.stdout


if __name__ == "__main__":
    exit_with("e2e-knee")
