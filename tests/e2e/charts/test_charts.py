#!/usr/bin/env python3
"""test_charts -- the report's SVG charts, rendered and read back (issue 14).

`kneebench report` runs on synthetic runs laid out as `kneebench curve` writes them
(plan.json, run.json, fixtures/, points/<id>/{verdict.json,DONE,series.csv}); nothing is
served or loaded. Every chart must:

- render with rsvg-convert to an 860 x 500 PNG, and parse as XML (names escaped);
- carry a <title> on the chart and on every mark, line, bound, band and drain;
- mark each point with the shape of the verdict its own figures give and the fill of the
  client's trust (hollow: client-limited), including a route where every point is
  client-limited;
- draw a p99 that is only a lower bound with an arrow and a dashed line to it;
- shade the delivery band on the achieved charts, and the drain on the series chart, whose
  footnote's rate comes from the measured interval's whole seconds only;
- keep every runtime visible where all four have the same figures: lines drawn widest first,
  all lines before any mark, marks at one rate nested (the first runtime's largest) -- checked
  in the SVG and in the rendered pixels (each runtime's colour inside the plot area);
- put every mark at its point's true rate, every label outside the plot (so no line crosses
  one), context lines (route, profile, samples, trust, run) under every chart, and a distinct
  colour for each of eight runtimes; a runtime with nothing to draw says so in the legend.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
import xml.etree.ElementTree as ET

from kbenv import CONTRACT, KB, ROOT, need
from kbtest import test, skip, exit_with
from synthrun import DURATION, DRAIN, decode_png, synth_run

CRIT = CONTRACT["comparison"]["criteria"]
TMP = tempfile.mkdtemp(prefix="kb-charts-")
NS = "{http://www.w3.org/2000/svg}"

# report_svg.c's geometry and colours
W, H, ML, MR, MT, MB = 860, 540, 80, 200, 46, 96
COLOURS = {"php-fpm": (0x8e, 0x44, 0xad), "node": (0x27, 0xae, 0x60),
           "go": (0x29, 0x80, 0xb9), "gray-static": (0xc0, 0x39, 0x2b)}
RUNTIMES = ["php-fpm", "node", "go", "gray-static"]
RATES = [8000, 12000, 20000, 30000]

# json: every kind of mark. (verdict, server_verdict or None (older evidence), achieved,
# p99 us or None (empty histogram), p99 a lower bound, errors)
JSON_POINTS = {
    ("php-fpm", 8000): ("uncontrolled", "uncontrolled", 7000, 400000, False, 0),
    ("php-fpm", 12000): ("failed", "failed", 6000, 900000, False, 40),
    ("php-fpm", 20000): ("failed", "failed", 5000, 1900000, True, 90),
    ("php-fpm", 30000): ("uncontrolled", "uncontrolled", 4000, None, False, 0),
    ("node", 8000): ("controlled", "controlled", 8000, 2000, False, 0),
    ("node", 12000): ("uncontrolled", "uncontrolled", 11500, 300000, False, 0),
    ("node", 20000): ("uncontrolled", "uncontrolled", 12000, 1900000, True, 0),
    ("node", 30000): ("failed", "failed", 9000, 2500000, True, 12),
    # go: every point client-limited, the verdict underneath still shown
    ("go", 8000): ("client-limited", None, 8000, 1500, False, 0),
    ("go", 12000): ("client-limited", "controlled", 12000, 1800, False, 0),
    ("go", 20000): ("client-limited", "uncontrolled", 18000, 250000, False, 0),
    ("go", 30000): ("client-limited", "uncontrolled", 19000, 1700000, True, 0),
    ("gray-static", 8000): ("client-limited", "controlled", 8000, 900, False, 0),
    ("gray-static", 12000): ("client-limited", "controlled", 12000, 950, False, 0),
    ("gray-static", 20000): ("client-limited", "controlled", 20000, 1000, False, 0),
    ("gray-static", 30000): ("client-limited", "controlled", 30000, 1100, False, 0),
}
# node's first uncontrolled point (json 12000): three measured seconds, a drain second and
# a 5 ms tail slice whose rates must not reach the footnote
NODE_SERIES = ("start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors,bounded,"
               "p50_is_bound,p99_is_bound,max_is_bound\n"
               "0.000,1.000,11000,11000.0,900,5000,9000,0,0,0,0,0\n"
               "1.000,1.000,12000,12000.0,40000,200000,260000,0,0,0,0,0\n"
               "2.000,1.000,11600,11600.0,90000,300000,340000,0,0,0,0,0\n"
               "3.000,1.000,600,600.0,200000,1200000,1300000,0,30,0,1,1\n"
               "4.000,0.005,1,200.0,900000,900000,900000,0,0,0,0,0\n")


def report(run):
    need(KB)
    p = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr)


_RUNS = {}


def main_run():
    """plaintext: the four runtimes with identical figures at every rate, all controlled;
    json: every kind of mark (JSON_POINTS)."""
    if "main" not in _RUNS:
        run = os.path.join(TMP, "main")
        points = {(rt, "plaintext", rate): ("controlled", "controlled", rate, 900, False, 0)
                  for rt in RUNTIMES for rate in RATES}
        points.update({(rt, "json", rate): v for (rt, rate), v in JSON_POINTS.items()})
        synth_run(run, RUNTIMES, ["plaintext", "json"], RATES, points)
        with open(os.path.join(run, "points", "node-json-12000", "series.csv"), "w") as f:
            f.write(NODE_SERIES)
        report(run)
        _RUNS["main"] = run
    return _RUNS["main"]


# ---- rendering ------------------------------------------------------------------------

def render(svg, pixels=True):
    """rsvg-convert's PNG of svg: (width, height, rows of RGB tuples, or None without
    pixels)."""
    if not shutil.which("rsvg-convert"):
        skip("rsvg-convert is not installed (make deps installs librsvg2-bin)")
    png = svg[:-4] + ".png"
    p = subprocess.run(["rsvg-convert", "-o", png, svg], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0 and not p.stderr.strip(), (svg, p.returncode, p.stderr)
    data = open(png, "rb").read()
    if not pixels:
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", svg
        return struct.unpack(">II", data[16:24]) + (None,)
    return decode_png(data)


def colour_pixels(rows, rgb, tol=24):
    """Pixels inside the plot area (the legend excluded) of colour rgb, within tol."""
    n = 0
    for y in range(MT + 2, H - MB - 1):
        for px in rows[y][ML + 2:W - MR - 1]:
            if abs(px[0] - rgb[0]) + abs(px[1] - rgb[1]) + abs(px[2] - rgb[2]) <= tol:
                n += 1
    return n


# ---- reading the SVG ------------------------------------------------------------------

def parse(path):
    return ET.parse(path).getroot()


def cls(e):
    return e.get("class", "").split()


def title_of(e):
    t = e.find(NS + "title")
    return t.text if t is not None else None


def mark_centre_x(g):
    """A verdict mark's centre x: its data-x, checked against its drawn shape's own centre
    (report_svg.c's marker(): the halo first, then the coloured shape)."""
    x = float(g.get("data-x"))
    e = [k for k in g if k.tag != NS + "title"][1]
    tag = e.tag[len(NS):]
    if tag == "circle":
        cx = float(e.get("cx"))
    elif tag == "rect":
        cx = float(e.get("x")) + float(e.get("width")) / 2
    else:
        m = float(re.match(r"M([-\d.]+)", e.get("d")).group(1))
        # a cross starts at its top-left corner, a diamond at its top point
        cx = m + float(re.findall(r"l([-\d.]+)", e.get("d"))[0]) / 2 if "failed" in cls(g) else m
    assert abs(cx - x) < 0.3, ("a mark drawn off its data-x", x, cx, ET.tostring(g)[:200])
    return x


def expected_mark(verdict, server):
    kind = server if server else (verdict if verdict != "client-limited" else "unknown")
    return kind, "client-limited" if verdict == "client-limited" else "trusted"


def rate_of(title):
    return int(re.match(r".* (\d+) req/s: ", title).group(1))


def check_titles(root, path):
    """The chart, every mark, bound, line group, band, drain and second has a <title>."""
    assert title_of(root), f"{path}: no chart <title>"
    titled = ("mark", "bound", "series", "delivery-band", "drain", "second", "range", "stat")
    for e in root.iter():
        c = cls(e)
        if c and c[0] in titled:
            assert title_of(e), f"{path}: a {' '.join(c)} without a <title>"


def marks_by_runtime(root):
    """{runtime: [(rate, kind, trust, centre x, has a bound arrow after it)]} of the data
    marks (the legend's are outside any g.marks)."""
    out = {}
    for g in root.iter(NS + "g"):
        if cls(g) != ["marks"]:
            continue
        items, kids = [], list(g)
        for k, e in enumerate(kids):
            if e.tag == NS + "g" and cls(e)[:1] == ["mark"]:
                bound = k + 1 < len(kids) and cls(kids[k + 1]) == ["bound"]
                items.append((rate_of(title_of(e)), cls(e)[1], cls(e)[2], mark_centre_x(e), bound))
        out[g.get("data-runtime")] = items
    return out


def check_visible(root, path):
    """Structure: lines drawn widest first, all of them before any mark; marks of different
    runtimes at one rate set at least 5 px apart."""
    groups = [e for e in root.iter(NS + "g") if cls(e) in (["series"], ["marks"])]
    kinds = [cls(g)[0] for g in groups]
    assert kinds == sorted(kinds, key=lambda k: k != "series"), \
        f"{path}: a line drawn after a mark: {kinds}"
    widths = []
    for g in groups:
        if cls(g) == ["series"]:
            ws = {float(l.get("stroke-width")) for l in g.iter(NS + "line")}
            assert len(ws) <= 1, (path, g.get("data-runtime"), ws)
            widths += list(ws)
    assert all(a > b for a, b in zip(widths, widths[1:])), \
        f"{path}: line widths not decreasing in drawing order: {widths}"
    sizes = {}
    for g in root.iter(NS + "g"):
        if cls(g) != ["marks"]:
            continue
        for e in g:
            if e.tag == NS + "g" and cls(e)[:1] == ["mark"]:
                sizes.setdefault(rate_of(title_of(e)), []).append(mark_size(e))
    for rate, ss in sizes.items():
        assert all(a > b for a, b in zip(ss, ss[1:])), \
            f"{path}: marks at {rate} req/s do not nest (sizes in drawing order {ss})"


def mark_size(g):
    """A mark's drawn size: the circle's radius, the square's half side, the cross's or the
    diamond's half extent (its coloured shape, the second one)."""
    e = [k for k in g if k.tag != NS + "title"][1]
    tag = e.tag[len(NS):]
    if tag == "circle":
        return float(e.get("r"))
    if tag == "rect":
        return float(e.get("width")) / 2
    step = abs(float(re.findall(r"l([-\d.]+)", e.get("d"))[0]))
    return step / 2 if "failed" in cls(g) else step


def x_of_rate(rate, top):
    return ML + rate / (top * 1.05) * (W - MR - ML)


def check_true_x(root, path, top):
    """Every data mark sits at its point's rate: data-x and the shape's own centre."""
    n = 0
    for rt, items in marks_by_runtime(root).items():
        for rate, _, _, x, _ in items:
            assert abs(x - x_of_rate(rate, top)) < 0.6, (path, rt, rate, x, x_of_rate(rate, top))
            n += 1
    assert n, path


def check_labels_off_the_plot(root, path):
    """No text inside the plot area, so no line drawn there can cross a label."""
    for t in root.iter(NS + "text"):
        x, y = float(t.get("x", -1)), float(t.get("y", -1))
        inside = ML < x < W - MR and MT < y < H - MB
        assert not inside, f"{path}: a label inside the plot at ({x}, {y}): {t.text!r}"


def check_context(root, path, route):
    ctx = [g for g in root.iter(NS + "g") if cls(g) == ["context"]]
    assert len(ctx) == 1, f"{path}: no context lines"
    text = " ".join("".join(t.itertext()) for t in ctx[0].iter(NS + "text"))
    assert route in text and "profile quick" in text and "client trusted at" in text and \
        "run started" in text, f"{path}: context {text!r}"


# ---- tests ----------------------------------------------------------------------------

@test
def every_chart_renders_and_parses():
    run = main_run()
    charts = sorted(os.listdir(os.path.join(run, "charts")))
    want = {f"{k}-{route}.svg" for k in ("achieved", "p99", "cpu")
            for route in ("plaintext", "json")}
    want.add("series-node-json.svg")
    assert want <= set(charts), charts
    for name in charts:
        if not name.endswith(".svg"):
            continue
        path = os.path.join(run, "charts", name)
        root = parse(path)
        check_titles(root, name)
        check_labels_off_the_plot(root, name)
        check_context(root, name, "json" if "json" in name else "plaintext")
        w, h, _ = render(path, pixels=False)
        assert (w, h) == (W, H), (name, w, h)


@test
def every_kind_of_mark_is_in_the_legend():
    """The range bars (min-max over a point's samples) among them; no ring where the run did
    not refine."""
    run = main_run()
    for k in ("achieved", "p99", "cpu"):
        root = parse(os.path.join(run, "charts", f"{k}-json.svg"))
        legend = " ".join(t.text or "" for t in root.iter(NS + "text"))
        for entry in ("controlled", "uncontrolled", "failed", "hollow: client-limited",
                      "lower bound", "bar: min-max of samples"):
            assert entry in legend, (k, entry, legend)
        assert "ring" not in legend, legend
        bars = [e for e in root.iter(NS + "line") if cls(e) == ["range"]]
        assert bars and all(e.find(NS + "title") is not None for e in bars), k


@test
def verdict_shape_and_trust_fill_on_every_mark():
    run = main_run()
    for kind in ("achieved", "p99"):
        path = os.path.join(run, "charts", f"{kind}-json.svg")
        marks = marks_by_runtime(parse(path))
        assert set(marks) == set(RUNTIMES), marks.keys()
        for rt in RUNTIMES:
            got = {rate: (k, t) for rate, k, t, _, _ in marks[rt]}
            for rate in RATES:
                verdict, server, _, p99, _, _ = JSON_POINTS[(rt, rate)]
                if kind == "p99" and p99 is None:
                    assert rate not in got, f"{rt} {rate}: an empty histogram drawn on {path}"
                    continue
                assert got.get(rate) == expected_mark(verdict, server), \
                    (kind, rt, rate, got.get(rate), expected_mark(verdict, server))
    # go and gray-static are client-limited at every json point, yet their marks differ
    shapes = {k for rate, k, t, _, _ in marks_by_runtime(parse(
        os.path.join(run, "charts", "p99-json.svg")))["go"]}
    assert shapes == {"unknown", "controlled", "uncontrolled"}, shapes


@test
def bounds_drawn_as_bounds():
    run = main_run()
    root = parse(os.path.join(run, "charts", "p99-json.svg"))
    for rt, items in marks_by_runtime(root).items():
        for rate, _, _, _, arrow in items:
            assert arrow == JSON_POINTS[(rt, rate)][4], (rt, rate, arrow)
    # the segment to a bound is dashed; between exact points solid
    for g in root.iter(NS + "g"):
        if cls(g) != ["series"]:
            continue
        for line in g.iter(NS + "line"):
            dashed = line.get("stroke-dasharray") is not None
            assert dashed == (cls(line) == ["to-bound"]), (g.get("data-runtime"), line.attrib)
    to_bound = {g.get("data-runtime"): sum(cls(l) == ["to-bound"] for l in g.iter(NS + "line"))
                for g in root.iter(NS + "g") if cls(g) == ["series"]}
    # php-fpm: 12000->20000 (20000 a bound; 30000 has no p99); node: 12000->20000->30000;
    # go: 20000->30000
    assert to_bound == {"php-fpm": 1, "node": 2, "go": 1, "gray-static": 0}, to_bound
    # nothing on the plaintext chart is a bound
    assert not any(cls(e) == ["bound"] for g in parse(os.path.join(run, "charts",
                   "p99-plaintext.svg")).iter(NS + "g") if cls(g) == ["marks"] for e in g)


@test
def delivery_band_on_achieved_charts_only():
    run = main_run()
    for route in ("plaintext", "json"):
        root = parse(os.path.join(run, "charts", f"achieved-{route}.svg"))
        bands = [g for g in root.iter(NS + "g") if cls(g) == ["delivery-band"]]
        assert len(bands) == 1, route
        assert title_of(bands[0]).startswith(f"delivery >= {CRIT['min_delivery'] * 100:.0f} %")
        d = bands[0].find(NS + "path").get("d")
        (x0, y0), (x1, y1), (x2, y2) = [tuple(map(float, m)) for m in
                                        re.findall(r"[ML]([-\d.]+) ([-\d.]+)", d)]
        assert x1 == x2 and x0 < x1, d
        # between achieved = requested and min_delivery x requested, from the origin
        assert abs((y0 - y2) / (y0 - y1) - CRIT["min_delivery"]) < 0.01, d
        assert not [g for g in parse(os.path.join(run, "charts", f"p99-{route}.svg")).iter(NS + "g")
                    if cls(g) == ["delivery-band"]]


@test
def marks_at_their_true_rate():
    run = main_run()
    for kind in ("achieved", "p99", "cpu"):
        for route in ("plaintext", "json"):
            check_true_x(parse(os.path.join(run, "charts", f"{kind}-{route}.svg")),
                         f"{kind}-{route}", max(RATES))


@test
def identical_series_all_visible():
    run = main_run()
    for kind in ("achieved", "p99", "cpu"):
        for route in ("plaintext", "json"):
            check_visible(parse(os.path.join(run, "charts", f"{kind}-{route}.svg")),
                          f"{kind}-{route}")
        # plaintext: the four runtimes' figures are identical at every rate, so only the
        # drawing keeps each one in sight; its colour must show inside the plot area
        path = os.path.join(run, "charts", f"{kind}-plaintext.svg")
        _, _, rows = render(path)
        seen = {rt: colour_pixels(rows, rgb) for rt, rgb in COLOURS.items()}
        print(f"     {kind}-plaintext: pixels per runtime colour in the plot {seen}", flush=True)
        assert all(n >= 40 for n in seen.values()), f"{path}: a runtime hidden: {seen}"


@test
def series_chart_marks_the_drain():
    run = main_run()
    path = os.path.join(run, "charts", "series-node-json.svg")
    root = parse(path)
    drains = [g for g in root.iter(NS + "g") if cls(g) == ["drain"]]
    assert len(drains) == 1, path
    rect = drains[0].find(NS + "rect")
    end = 4.0         # the drain's planned end: the 5 ms slice after it is dropped
    x_dur = ML + DURATION / end * (W - MR - ML)
    assert abs(float(rect.get("x")) - x_dur) < 1, (rect.get("x"), x_dur)
    assert abs(float(rect.get("x")) + float(rect.get("width")) - (W - MR)) < 2, rect.attrib
    text = " ".join(t.text or "" for t in root.iter(NS + "text"))
    # the footnote's rate: the measured interval's whole seconds, not the drain's 600/s nor
    # the 5 ms slice's 200/s
    assert "11000-12000 req/s per whole measured second" in text, text
    assert "shaded: the drain after it" in text, text
    assert "first uncontrolled point" in title_of(root), title_of(root)
    # p99 drawn first and thickest, max and p50 over it
    stats = [(cls(e)[1], float(e.get("stroke-width"))) for e in root.iter(NS + "path")
             if cls(e)[:1] == ["stat"]]
    assert [s for s, _ in stats] == ["p99", "max", "p50"], stats
    assert stats[0][1] > stats[1][1] and stats[0][1] > stats[2][1], stats
    # every exact p99 second is a titled dot; the drain second's bounds are triangles
    seconds = [g for g in root.iter(NS + "g") if cls(g) == ["second"]]
    assert [title_of(g).split(":")[0] for g in seconds] == \
        ["second 0", "second 1", "second 2"], [title_of(g) for g in seconds]
    # the 5 ms slice (one response) is no second: no line reaches it either
    for e in root.iter(NS + "path"):
        if cls(e)[:1] == ["stat"]:
            xs = [float(v.split()[0]) for v in re.split("[ML]", e.get("d")) if v.strip()]
            assert max(xs) < ML + 3.9 / end * (W - MR - ML), (cls(e), xs)
    bounds = [title_of(g) for g in root.iter(NS + "g") if cls(g) == ["bound"] and
              title_of(g).startswith("second")]
    assert sorted(bounds) == ["second 3: max >= 1.30 s (lower bound)",
                              "second 3: p99 >= 1.20 s (lower bound)"], bounds


@test
def eight_runtimes_eight_colours_and_nothing_drawn_said():
    """Four fixtures and four others: each its own colour, pairwise far apart; a runtime
    whose every point recorded no latency is in the p99 legend as having none drawn."""
    run = os.path.join(TMP, "eight")
    rts = RUNTIMES + ["deno", "bun", "rust-axum", "java"]
    points = {(rt, "plaintext", rate): ("controlled", "controlled", rate, 900 + 10 * i, False, 0)
              for i, rt in enumerate(rts) for rate in (100, 200)}
    for rate in (100, 200):
        points[("java", "plaintext", rate)] = ("failed", "failed", 0, None, False, 5)
    synth_run(run, rts, ["plaintext"], [100, 200], points)
    report(run)
    root = parse(os.path.join(run, "charts", "p99-plaintext.svg"))
    colours = {}
    for g in root.iter(NS + "g"):
        if cls(g) == ["series"]:
            strokes = {l.get("stroke") for l in g.iter(NS + "line")}
            colours[g.get("data-runtime")] = strokes.pop() if strokes else None
    got = [c for rt, c in colours.items() if rt != "java"]
    assert len(got) == 7 and None not in got and len(set(got)) == 7, colours
    rgb = {rt: tuple(int(c[k:k + 2], 16) for k in (1, 3, 5)) for rt, c in colours.items() if c}
    for a in rgb:
        for b in rgb:
            if a < b:
                d = sum(abs(x - y) for x, y in zip(rgb[a], rgb[b]))
                assert d >= 100, f"{a} and {b} too alike: {rgb[a]} {rgb[b]}"
    legend = [t.text for t in root.iter(NS + "text") if t.text and t.text.startswith("java")]
    assert legend == ["java (none drawn)"], legend


@test
def an_endless_axis_is_bounded():
    """A criterion past any figure still gives a chart, at once: on a copy of the recorded
    real run (tests/e2e/report/run), whose every point can be re-judged. `--max-p99-ms 1e308`
    (an axis up to infinity, whose tick loop never ended) is refused by the option layer now;
    the run's own plan.json can still hold a criterion near the largest double."""
    need(KB)
    run = os.path.join(TMP, "endless")
    shutil.copytree(os.path.join(ROOT, "tests", "e2e", "report", "run"), run)
    p = subprocess.run([KB, "report", "--max-p99-ms", "1e308", run], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2 and "--max-p99-ms must be a number" in p.stderr, p.stderr
    with open(os.path.join(run, "plan.json")) as f:
        plan = json.load(f)
    plan["criteria"]["max_p99_us"] = 1e308
    with open(os.path.join(run, "plan.json"), "w") as f:
        json.dump(plan, f)
    p = subprocess.run([KB, "report", "--min-delivery", "0.995", run], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    out = [os.path.join(run, d) for d in os.listdir(run) if d.startswith("rejudged-")][0]
    svg = os.path.join(out, "charts", "p99-plaintext.svg")
    assert os.path.getsize(svg) < 200000, os.path.getsize(svg)
    parse(svg)


@test
def names_escaped():
    run = os.path.join(TMP, "escape")
    odd = 'a&b<"c>'
    synth_run(run, [odd, "gray-static"], ["plaintext"], [100, 200],
              {(rt, "plaintext", rate): ("controlled", "controlled", rate, 900, False, 0)
               for rt in (odd, "gray-static") for rate in (100, 200)})
    report(run)
    for kind in ("achieved", "p99"):
        path = os.path.join(run, "charts", f"{kind}-plaintext.svg")
        raw = open(path).read()
        assert odd not in raw, f"{path}: the name written unescaped"
        root = parse(path)                                  # well-formed
        check_titles(root, path)
        assert odd in [t.text for t in root.iter(NS + "text")], path
        assert {g.get("data-runtime") for g in root.iter(NS + "g") if cls(g) == ["marks"]} == \
            {odd, "gray-static"}
        assert any(title_of(g).startswith(f"{odd} 100 req/s: ") for g in root.iter(NS + "g")
                   if cls(g)[:1] == ["mark"] and title_of(g))
        render(path, pixels=False)


if __name__ == "__main__":
    try:
        exit_with("e2e-charts", sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
