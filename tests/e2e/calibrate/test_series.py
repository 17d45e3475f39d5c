#!/usr/bin/env python3
"""test_series -- `kneebench load --hlog FILE --series-csv FILE` against kb-control: the
per-second series, read back by the independent decoder (hlog_decode.py), accounts for every
completed response and agrees with the load's own JSON. Short and low-rate.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, HERE)
from kbtest import test, skip, exit_with  # noqa: E402
import hlog_decode  # noqa: E402

BUILD = os.environ.get("KB_BUILD", os.path.join(ROOT, "build"))
KNEEBENCH = os.path.join(BUILD, "kneebench")
BOUND_S = 60


class Control:
    """kb-control on a free port (port 0), stopped by PID."""

    def __enter__(self):
        exe = os.path.join(BUILD, "kb-control")
        if not os.access(exe, os.X_OK):
            skip("build/kb-control is not built")
        self.p = subprocess.Popen([exe, "--port", "0"], stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if "127.0.0.1:" not in line:
            self.__exit__()
            raise AssertionError(f"kb-control did not report its port: {line!r}")
        self.port = int(line.rsplit(":", 1)[1].split()[0])
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        self.p.wait(10)
        self.p.stdout.close()


def load_supports_series():
    h = subprocess.run([KNEEBENCH, "load", "--help"], capture_output=True, text=True)
    return "--hlog" in h.stdout + h.stderr


@test
def series_accounts_for_every_response():
    if not os.access(KNEEBENCH, os.X_OK):
        skip(f"{KNEEBENCH} is not built")
    if not load_supports_series():
        skip("kneebench load has no --hlog yet (the wiring of runner/hlog into it is pending)")
    with Control() as ctl, tempfile.TemporaryDirectory(prefix="kb-series-") as d:
        hlog, csv, js = (os.path.join(d, n) for n in ("p.hlog", "p.csv", "p.json"))
        p = subprocess.run([KNEEBENCH, "load", "--url", f"http://127.0.0.1:{ctl.port}/plaintext",
                            "--route", "plaintext", "--rate", "2000", "--duration", "3",
                            "--warmup", "0.5", "--threads", "2", "--connections", "8",
                            "--quiet", "--json", js, "--hlog", hlog, "--series-csv", csv],
                           capture_output=True, text=True, timeout=BOUND_S)
        assert p.returncode == 0, p.stderr
        with open(js) as f:
            j = json.load(f)
        got, base = hlog_decode.read_log(hlog)
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
    # The interval maxima bound the whole run's corrected max (same histogram layout).
    assert max(int(mx) for (_, _, _, mx, _, _) in got) == j["corrected_us"]["max"]
    assert sum(int(r[7]) for r in rows) == j["errors"]["total"]
    for r, n in zip(rows, counts):
        assert int(r[2]) == n


HDR_JAR = "/usr/share/java/hdrhistogram.jar"


@test
def series_opens_in_hdrhistograms_own_log_processor():
    """HistogramLogProcessor (Debian's libhdrhistogram-java) with no flags reads every
    interval: it skips tagged lines by default, so the series must be untagged. Values are
    microseconds; the processor's default output ratio (1e6) prints them as seconds."""
    if not os.access(KNEEBENCH, os.X_OK):
        skip(f"{KNEEBENCH} is not built")
    if not (os.path.exists(HDR_JAR) and subprocess.run(["sh", "-c", "command -v java"],
                                                       capture_output=True).returncode == 0):
        skip("java or libhdrhistogram-java is not installed (make deps installs them)")
    with Control() as ctl, tempfile.TemporaryDirectory(prefix="kb-hlp-") as d:
        hlog, js, out = (os.path.join(d, n) for n in ("p.hlog", "p.json", "out"))
        p = subprocess.run([KNEEBENCH, "load", "--url", f"http://127.0.0.1:{ctl.port}/plaintext",
                            "--route", "plaintext", "--rate", "1000", "--duration", "2",
                            "--warmup", "0.5", "--connections", "8", "--quiet", "--json", js,
                            "--hlog", hlog], capture_output=True, text=True, timeout=BOUND_S)
        assert p.returncode == 0, p.stderr
        def process(*flags):
            h = subprocess.run(["java", "-cp", HDR_JAR, "org.HdrHistogram.HistogramLogProcessor",
                                "-i", hlog, "-o", out, *flags], capture_output=True, text=True,
                               timeout=BOUND_S)
            assert h.returncode == 0 and "Exception" not in h.stderr, h.stderr
            with open(out + ".hgrm") as f:
                lines = f.read().splitlines()
            total = [ln for ln in lines if "Total count" in ln]
            assert total, lines[-5:]
            mx = float([ln for ln in lines if ln.startswith("#[Max")][0].split("=")[1].split(",")[0])
            return int(total[0].rsplit("=", 1)[1].strip().rstrip("]")), mx
        plain_count, _ = process()
        count, mx = process("-outputValueUnitRatio", "1")     # values as written: microseconds
        with open(js) as f:
            j = json.load(f)
    assert plain_count == count == j["completed"], (plain_count, count, j["completed"])
    assert mx == j["corrected_us"]["max"], (mx, j["corrected_us"]["max"])

if __name__ == "__main__":
    exit_with("e2e-series", sys.argv[1:])
