#!/usr/bin/env python3
"""test_html -- report.html as a browser renders it (issue 22).

`kneebench report` on a synthetic run laid out as `kneebench curve` writes it, then the page
opened in headless Chromium (Debian's chromium, installed by make deps) over the DevTools
protocol on a pipe (tests/lib/cdp.py). The page must:

- load with no console error, no uncaught exception and no request but its own file;
- show the answer table with each cell equal to what report.json's answer says (the cell's
  text rebuilt here from the documented notation, and its data- attributes);
- draw every chart, large and small, with a non-zero size;
- show each runtime's colour in a screenshot of its curves;
- fill the readout with a mark's figures when the pointer enters it.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from kbenv import KB, need
from kbtest import test, skip, exit_with
from synthrun import decode_png, synth_run
import cdp

TMP = tempfile.mkdtemp(prefix="kb-html-")
COLOURS = {"php-fpm": (0x8e, 0x44, 0xad), "node": (0x27, 0xae, 0x60),
           "go": (0x29, 0x80, 0xb9), "gray-static": (0xc0, 0x39, 0x2b)}
RATES = [8000, 12000, 20000]

# plaintext: gray-static holds everything, go until 12000 (20000 uncontrolled), node is
# client-limited above 8000 (a lower bound, its own figures controlled: indicative), php-fpm
# uncontrolled from the lowest rate. json: php-fpm failed at the lowest rate.
POINTS = {}
for rate in RATES:
    POINTS[("gray-static", "plaintext", rate)] = ("controlled", "controlled", rate, 900, False, 0)
    POINTS[("go", "plaintext", rate)] = (("controlled", "controlled", rate, 2000, False, 0)
                                         if rate < 20000 else
                                         ("uncontrolled", "uncontrolled", 15000, 400000, True, 0))
    POINTS[("node", "plaintext", rate)] = (("controlled", "controlled", rate, 3000, False, 0)
                                           if rate == 8000 else
                                           ("client-limited", "controlled", rate, 4000, False, 0))
    POINTS[("php-fpm", "plaintext", rate)] = ("uncontrolled", "uncontrolled", 5000, 900000, True, 0)
    for rt in ("gray-static", "go", "node"):
        POINTS[(rt, "json", rate)] = ("controlled", "controlled", rate, 1000, False, 0)
    POINTS[("php-fpm", "json", rate)] = ("failed", "failed", 0, None, False, 50)
SERIES = ("start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors,bounded,"
          "p50_is_bound,p99_is_bound,max_is_bound\n"
          "0.000,1.000,15000,15000.0,900,5000,9000,0,0,0,0,0\n"
          "1.000,1.000,15000,15000.0,40000,200000,260000,0,0,0,0,0\n"
          "2.000,1.000,15000,15000.0,90000,300000,340000,0,0,0,0,0\n")

_RUN = {}


def run_dir():
    if "dir" not in _RUN:
        need(KB)
        run = os.path.join(TMP, "run")
        synth_run(run, list(COLOURS), ["plaintext", "json"], RATES, POINTS)
        for rate in RATES:
            with open(os.path.join(run, "points", f"go-plaintext-{rate}", "series.csv"), "w") as f:
                f.write(SERIES)
        p = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        _RUN["dir"] = run
    return _RUN["dir"]


_PAGE = {}


def page():
    """The report opened once; the browser stays open for every test."""
    if "b" not in _PAGE:
        if not cdp.chromium():
            skip("chromium is not installed (make deps installs it)")
        run = run_dir()
        b = cdp.Browser()
        _PAGE["b"] = b
        _PAGE["url"] = "file://" + os.path.join(run, "report.html")
        b.open(_PAGE["url"])
    return _PAGE["b"]


def expected_cell(a):
    """report.md's notation (docs/report-format.md), rebuilt from report.json's answer."""
    if not a["planned"]:
        return "n/a"
    ind = ""
    if a["indicative_rps"]:
        ind = f"; {a['indicative_rps']}*"
    elif a["below_unproven_rps"]:
        ind = f"; < {a['below_unproven_rps']}*"
    if a["proven_rps"]:
        return (">= " if a["proven_is_bound"] else "") + f"{a['proven_rps']}" + \
            ("^" if a["proven_above_margin"] else "") + \
            (" (refined)" if a["proven_is_refined"] else "") + ind
    if a["below_rps"]:
        return f"< {a['below_rps']}{ind}"
    if a["failed_at_rps"]:
        return f"failed ({a['failed_at_rps']}){ind}"
    if a["client_limited_from_rps"]:
        return f"none{ind}"
    return "missing"


@test
def loads_with_no_error_and_no_request():
    b = page()
    assert b.console_errors() == [], b.console_errors()
    others = [u for u in b.requests() if u != _PAGE["url"] and not u.startswith("data:")]
    assert others == [], others
    assert b.evaluate("document.querySelectorAll('script[src],link[href],img[src],"
                      "iframe,object,embed').length") == 0


@test
def answer_cells_equal_report_json():
    b = page()
    rep = json.load(open(os.path.join(run_dir(), "report.json")))
    cells = b.evaluate("""Array.from(document.querySelectorAll('#answer-table tbody tr')).map(tr =>
        [tr.dataset.runtime, Array.from(tr.querySelectorAll('td.answer')).map(td =>
            [td.dataset.route, td.textContent, Number(td.dataset.proven)])])""")
    assert [rt for rt, _ in cells] == [a["runtime"] for a in rep["answer"]], cells
    seen = set()
    for (rt, tds), a in zip(cells, rep["answer"]):
        for route, text, proven in tds:
            want = a["routes"][route]
            assert text == expected_cell(want), (rt, route, text, want)
            assert proven == (want["proven_rps"] or 0), (rt, route, proven, want)
            seen.add(text)
    # the run exercises each notation this test rebuilds
    assert {"20000", "12000", ">= 8000; 20000*", "< 8000", "failed (8000)"} <= seen, seen


@test
def every_chart_has_a_size():
    b = page()
    sizes = b.evaluate("""Array.from(document.querySelectorAll('svg')).map(s => {
        const r = s.getBoundingClientRect(); return [s.getAttribute('class') || 'chart',
        r.width, r.height]; })""")
    big = [s for s in sizes if s[0] == "chart"]
    small = [s for s in sizes if s[0] == "small"]
    assert len(big) == 2 * 3, sizes                      # routes x (p99, achieved, cpu)
    assert len(small) == 3, sizes                        # go's three plaintext points
    assert all(w > 50 and h > 30 for _, w, h in sizes), sizes


@test
def each_runtime_colour_in_the_curves():
    b = page()
    b.evaluate("document.getElementById('curves').scrollIntoView()")
    b.pump(0.3)
    w, h, rows = decode_png(b.screenshot(full_page=False))
    count = {rt: 0 for rt in COLOURS}
    for row in rows:
        for px in row:
            for rt, c in COLOURS.items():
                if abs(px[0] - c[0]) + abs(px[1] - c[1]) + abs(px[2] - c[2]) <= 30:
                    count[rt] += 1
    print(f"     pixels per runtime colour in the curves' screenshot ({w}x{h}): {count}")
    assert all(n >= 50 for n in count.values()), count


@test
def readout_shows_the_mark_under_the_pointer():
    b = page()
    got = b.evaluate("""(() => { const m = document.querySelector('svg g.marks g.mark');
        m.dispatchEvent(new MouseEvent('mouseenter'));
        return [m.querySelector('title').textContent,
                document.getElementById('readout').textContent]; })()""")
    assert got[0] and got[0] == got[1], got



# Script in the plan's own strings: each sets a flag on the page if it ever runs.
HOSTILE = "go</p><img src=x onerror=\"window.kbPwned=1\"><script>window.kbPwned=2</script>"


@test
def script_in_the_plan_never_runs():
    """A plan.json whose baseline and profile carry markup (issue 38: the baseline went into
    report.html unescaped, the profile into every chart's context line): the page opens
    with no script of theirs run and no request, the text shown as text."""
    need(KB)
    if not cdp.chromium():
        skip("chromium is not installed (make deps installs it)")
    run = os.path.join(TMP, "hostile")
    synth_run(run, list(COLOURS), ["plaintext", "json"], RATES, POINTS)
    plan_path = os.path.join(run, "plan.json")
    plan = json.load(open(plan_path))
    plan["baseline"], plan["profile"] = HOSTILE, HOSTILE
    json.dump(plan, open(plan_path, "w"))
    p = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for svg in os.listdir(os.path.join(run, "charts")):
        text = open(os.path.join(run, "charts", svg)).read()
        assert "<img" not in text and "<script" not in text, (svg, text[:400])
    b = cdp.Browser()
    try:
        url = "file://" + os.path.join(run, "report.html")
        b.open(url)
        assert b.evaluate("window.kbPwned || 0") == 0
        # the page's own readout script, and nothing else
        assert b.evaluate("[document.images.length, document.scripts.length]") == [0, 1]
        assert b.evaluate("document.body.textContent.includes('onerror=')"), "the text is gone"
        others = [u for u in b.requests() if u != url and not u.startswith("data:")]
        assert others == [], others
    finally:
        b.close()

if __name__ == "__main__":
    try:
        exit_with("e2e-html", sys.argv[1:])
    finally:
        if "b" in _PAGE:
            _PAGE["b"].close()
        shutil.rmtree(TMP, ignore_errors=True)
