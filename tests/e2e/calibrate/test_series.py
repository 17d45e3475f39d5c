#!/usr/bin/env python3
"""test_series -- `kneebench load --hlog FILE --series-csv FILE` against kb-control: the
per-second series, read back by the independent decoder (hlog_decode.py), accounts for every
completed response and agrees with the load's own JSON; HdrHistogram's own
HistogramLogProcessor, run with no flags, prints the series in milliseconds with the load's
count, max and p99; and a one-point `kneebench curve` (gray-static) read the same way gives
the p99 its report.csv gives. Short and low-rate.
"""
import csv as csvmod
import json
import os
import shutil
import subprocess
import sys
import tempfile

from kbenv import BUILD, KB, need
from kbtest import test, skip, exit_with
from kbcontrol import Control
import hlog_decode

BOUND_S = 60


def load_supports_series():
    h = subprocess.run([KB, "load", "--help"], capture_output=True, text=True)
    return "--hlog" in h.stdout + h.stderr


@test
def series_accounts_for_every_response():
    need(KB)
    if not load_supports_series():
        skip("kneebench load has no --hlog yet (the wiring of runner/hlog into it is pending)")
    with Control() as ctl, tempfile.TemporaryDirectory(prefix="kb-series-") as d:
        hlog, csv, js = (os.path.join(d, n) for n in ("p.hlog", "p.csv", "p.json"))
        p = subprocess.run([KB, "load", "--url", f"http://127.0.0.1:{ctl.port}/plaintext",
                            "--route", "plaintext", "--rate", "2000", "--duration", "3",
                            "--warmup", "0.5", "--threads", "2", "--connections", "8",
                            "--quiet", "--json", js, "--hlog", hlog, "--series-csv", csv],
                           capture_output=True, text=True, timeout=BOUND_S)
        assert p.returncode == 0, p.stderr
        with open(js) as f:
            j = json.load(f)
        got, base = hlog_decode.read_log(hlog)
        unit = hlog_decode.value_unit(hlog)
        with open(csv) as f:
            rows = [line.strip().split(",") for line in f][1:]
    assert base is not None and len(got) == len(rows) >= 3, (len(got), len(rows))
    counts = [sum(c.values()) for (_, _, _, _, _, c) in got]
    assert sum(counts) == j["completed"], f"series holds {sum(counts)}, load completed {j['completed']}"
    starts = [s for (_, s, _, _, _, _) in got]
    assert starts == sorted(starts) and starts[0] == 0.0, starts
    # Full seconds of the measured interval carry the requested rate (2000/s) within 1 %.
    for (tag, start, length, mx, layout, c), n in zip(got[:3], counts[:3]):
        assert tag is None and abs(length - 1.0) < 1e-9
        assert abs(n - 2000) <= 20, f"second at {start}: {n} responses"
    # The interval maxima (ms in the log, HistogramLogWriter's unit for that column) reach the
    # whole run's corrected max: the same requests, HdrHistograms of ns and of us.
    assert unit == "ns", unit
    top_us = max(mx for (_, _, _, mx, _, _) in got) * 1000
    assert abs(top_us - j["corrected_us"]["max"]) <= 2 + j["corrected_us"]["max"] * 0.002, \
        (top_us, j["corrected_us"]["max"])
    assert sum(int(r[7]) for r in rows) == j["errors"]["total"]
    for r, n in zip(rows, counts):
        assert int(r[2]) == n


HDR_JAR = "/usr/share/java/hdrhistogram.jar"


def need_hlp():
    if not (os.path.exists(HDR_JAR) and shutil.which("java")):
        skip("java or libhdrhistogram-java is not installed (make deps installs them)")


def hlp(hlog, *flags):
    """HistogramLogProcessor on hlog: its standard output (the percentile table)."""
    h = subprocess.run(["java", "-cp", HDR_JAR, "org.HdrHistogram.HistogramLogProcessor",
                        "-i", hlog, *flags], capture_output=True, text=True, timeout=BOUND_S)
    assert h.returncode == 0 and "Exception" not in h.stderr + h.stdout, h.stderr
    return h.stdout


def table(text):
    """[(value, percentile)] of a printed percentile table, in its order."""
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and not line.startswith("#") and f[0][0].isdigit():
            rows.append((float(f[0]), float(f[1])))
    return rows


def footer(text, name):
    """A figure of the table's '#[Name = X, ...]' footer."""
    for line in text.splitlines():
        for part in line.strip("#[]").split(","):
            k, _, v = part.partition("=")
            if k.strip() == name:
                return float(v)
    raise AssertionError(f"no {name} in {text[-300:]}")


def total_p99_ms(hlog, tmp):
    """The accumulated p99 HistogramLogProcessor reports (-csv -o: its interval log's last
    Total_99% column), in the unit it prints by default."""
    out = os.path.join(tmp, "hlp")
    hlp(hlog, "-csv", "-o", out)
    with open(out) as f:
        lines = [ln.split(",") for ln in f if ln[:1].isdigit()]
    assert lines, "HistogramLogProcessor wrote no interval"
    return float(lines[-1][8])


def agrees(ms, us):
    """A figure HistogramLogProcessor prints in ms against ours in us: two HdrHistograms of
    the same requests at 3 significant digits (ours of whole us, the log's of ns) each lie
    within 1/1024 above the value they stand for, and the print rounds to 1 us."""
    return abs(ms * 1000 - us) <= 2 + us * 0.002


def p99_in_table(text, p99_us):
    """The table has no 99 % row: its rows at the ticks either side of 0.99 bracket p99."""
    rows = table(text)
    below = [v for v, p in rows if p <= 0.99]
    above = [v for v, p in rows if p >= 0.99]
    assert below and above, rows[-5:]
    return below[-1] * 1000 <= p99_us + 2 + p99_us * 0.002 and \
        above[0] * 1000 >= p99_us - 2 - p99_us * 0.002


@test
def series_opens_in_hdrhistograms_own_log_processor():
    """HistogramLogProcessor (Debian's libhdrhistogram-java) with no flags reads every
    interval (it skips tagged lines by default, so the series is untagged) and prints
    milliseconds: the series records nanoseconds, the unit its default ratio (1e6) expects.
    Its count, max and p99 are the load's own, in ms."""
    need(KB)
    need_hlp()
    with Control() as ctl, tempfile.TemporaryDirectory(prefix="kb-hlp-") as d:
        hlog, js = (os.path.join(d, n) for n in ("p.hlog", "p.json"))
        p = subprocess.run([KB, "load", "--url", f"http://127.0.0.1:{ctl.port}/plaintext",
                            "--route", "plaintext", "--rate", "1000", "--duration", "2",
                            "--warmup", "0.5", "--connections", "8", "--quiet", "--json", js,
                            "--hlog", hlog], capture_output=True, text=True, timeout=BOUND_S)
        assert p.returncode == 0, p.stderr
        with open(hlog) as f:
            assert "#[Value unit: nanoseconds; Interval_Max in milliseconds]\n" in f.read()
        text = hlp(hlog)
        p99_ms = total_p99_ms(hlog, d)
        with open(js) as f:
            j = json.load(f)
    c = j["corrected_us"]
    assert int(footer(text, "Total count")) == j["completed"], (text[-300:], j["completed"])
    assert agrees(footer(text, "Max"), c["max"]), (footer(text, "Max"), c["max"])
    assert agrees(p99_ms, c["p99"]), (p99_ms, c["p99"])
    assert p99_in_table(text, c["p99"]), (c["p99"], table(text)[-12:])


def limits_args():
    """The cgroup sandbox where this host allows it, else --no-limits."""
    if os.geteuid() == 0 and (os.access("/sys/fs/cgroup/pids", os.W_OK) or
                              os.path.exists("/sys/fs/cgroup/cgroup.controllers")):
        return []
    return ["--no-limits"]


@test
def a_curve_points_series_gives_report_csvs_p99():
    """A one-point curve (gray-static, plaintext, 1000 req/s for 2 s) and its report: the
    point's series.hlog, read by HistogramLogProcessor with no flags, prints in ms the p99
    that report.csv gives in us for that point, and the same count."""
    for exe in (KB, os.path.join(BUILD, "gray-static")):
        need(exe)
    need_hlp()
    with tempfile.TemporaryDirectory(prefix="kb-hlp-curve-") as d:
        run = os.path.join(d, "run")
        p = subprocess.run([KB, "curve", "--run", run, "--profile", "quick",
                            "--confirm", "1", "--runtimes", "gray-static", "--routes",
                            "plaintext", "--rates", "1000", "--duration", "2", "--warmup", "0.5",
                            "--drain", "0.5", "--free-ports", *limits_args()],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"curve exit {p.returncode}: {p.stderr[-2000:]}"
        p = subprocess.run([KB, "report", run], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        with open(os.path.join(run, "report.csv")) as f:
            rows = list(csvmod.DictReader(f))
        assert len(rows) == 1, rows
        row = rows[0]
        hlog = os.path.join(run, "points", row["point_id"], "series.hlog")
        text = hlp(hlog)
        p99_ms = total_p99_ms(hlog, d)
        with open(os.path.join(run, "points", row["point_id"], "load.json")) as f:
            j = json.load(f)
    p99_us = float(row["p99_us"])
    assert row["p99_is_bound"] == "0" and row["errors_count"] == "0", row
    assert agrees(p99_ms, p99_us), f"HistogramLogProcessor p99 {p99_ms} ms, report.csv {p99_us} us"
    assert p99_in_table(text, p99_us), (p99_us, table(text)[-12:])
    assert int(footer(text, "Total count")) == j["completed"] == int(row["scheduled_count"])


if __name__ == "__main__":
    exit_with("e2e-series", sys.argv[1:])
