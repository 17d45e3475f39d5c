#!/usr/bin/env python3
"""test_refined -- after `curve --refine`, the whole report reads the refined knee (issue 40).

A synthetic run laid out as `kneebench curve --refine` leaves it (tests/lib/synthrun.py): two
runtimes on one route, grid rates 1000 and 4000, both held 1000 and missed 4000; refine.json
locates go's knee in [2450, 2560) and gray-static's in [1900, 1990), with refinement (-f) and
hold (-h) samples at the held ends. On the grid the two tie and gray-static is cheaper, so
it would rank first; refined, go holds more. Nothing is served or loaded: a second.

- every Answer cell of report.json equals its refined bracket's held end (`proven_rps`,
  `highest_controlled_rps`), the grid's cell kept beside it (`grid_proven_rps`);
- the ranking, the cost (its rate and CPU per response, the held end's samples' median) and
  the side-by-side knee ratio read the refined held ends;
- report.md's Answer prints one answer per cell, never the grid's cell beside a bracket;
- report.json's rows keep the grid's cells, marked as grid, and add the held ends;
- the first screen says by how much, per route, in one sentence per runtime;
- the charts draw each held end with a ring, and the legend names the ring and the min-max
  bars;
- `compare` of the run against a copy reads the refined answers too.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from kbenv import KB, need
from kbtest import exit_with, test
from synthrun import synth_point, synth_run

TMP = tempfile.mkdtemp(prefix="kb-refined-e2e-")
RATES = [1000, 4000]
# runtime: grid CPU us per response, refined (lo, hi), CPU us at the held end's samples
CELLS = {"go": (30.0, (2450, 2560), (15.0, 17.0)),
         "gray-static": (20.0, (1900, 1990), (24.0, 26.0))}


def ok(rate):
    return ("controlled", "controlled", rate, 900, False, 0)


def missed(rate):
    return ("uncontrolled", "uncontrolled", rate * 0.8, 400000, False, 0)


def refined_run(name):
    run = os.path.join(TMP, name)
    points = {}
    for rt, (grid_cpu, _, _) in CELLS.items():
        points[(rt, "plaintext", 1000)] = ok(1000) + (grid_cpu,)
        points[(rt, "plaintext", 4000)] = missed(4000) + (grid_cpu,)
    synth_run(run, list(CELLS), ["plaintext"], RATES, points, baseline="gray-static")
    cells = []
    for rt, (_, (lo, hi), cpus) in CELLS.items():
        mid = 1570
        for rate, kind, k, v in ((mid, "f", 1, ok(mid) + (25.0,)),
                                 (lo, "f", 1, ok(lo) + (cpus[0],)),
                                 (lo, "h", 1, ok(lo) + (cpus[1],)),
                                 (hi, "f", 1, missed(hi) + (40.0,))):
            pid = f"{rt}-plaintext-{rate}-{kind}{k}"
            synth_point(run, {"id": pid, "runtime": rt, "route": "plaintext", "rate": rate}, *v)
        cells.append({"runtime": rt, "route": "plaintext", "grid_lo_rps": 1000,
                      "grid_hi_rps": 4000, "lo_rps": lo, "hi_rps": hi, "step": "located",
                      "rates": sorted({mid, lo, hi})})
    json.dump({"schema_version": 1, "resolution": 0.05, "confirm_samples": 1, "hold_s": 3.0,
               "hold_warmup_s": 1.0, "cells": cells}, open(os.path.join(run, "refine.json"), "w"))
    need(KB)
    p = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    return run


_RUN = {}


def run_dir():
    if "r" not in _RUN:
        _RUN["r"] = refined_run("refined")
    return _RUN["r"]


def doc():
    return json.load(open(os.path.join(run_dir(), "report.json")))


@test
def every_answer_cell_is_its_refined_held_end():
    d = doc()
    refine = json.load(open(os.path.join(run_dir(), "refine.json")))
    held = {c["runtime"]: c["lo_rps"] for c in refine["cells"]}
    assert len(d["answer"]) == len(held), d["answer"]
    for entry in d["answer"]:
        cell = entry["routes"]["plaintext"]
        assert cell["proven_rps"] == held[entry["runtime"]], (entry["runtime"], cell)
        assert cell["proven_is_refined"] is True and cell["proven_is_bound"] is False, cell
        assert cell["grid_proven_rps"] == 1000, cell
        assert cell["level_rps"] == held[entry["runtime"]], cell
        assert d["highest_controlled_rps"][entry["runtime"]]["plaintext"] == cell["proven_rps"]


@test
def the_ranking_cost_and_knee_ratio_read_the_refined_held_end():
    d = doc()
    # on the grid both held 1000 and gray-static is cheaper (it would rank first)
    assert [e["runtime"] for e in d["answer"]] == ["go", "gray-static"], d["answer"]
    assert [e["rank"] for e in d["answer"]] == [1, 2], d["answer"]
    for row in d["cost"]["plaintext"]:
        _, (lo, _), cpus = CELLS[row["runtime"]]
        assert row["held_rps"] == lo, row
        assert abs(row["server_cpu_us_per_response"] - sum(cpus) / 2) < 1e-6, row
    side = {s["runtime"]: s for s in d["side_by_side"]["plaintext"]}
    assert abs(side["go"]["knee_vs_baseline_ratio"]["value"] - 2450 / 1900) < 1e-6, side
    assert side["go"]["knee_vs_baseline_ratio"]["refined"] is True, side


@test
def the_answer_table_prints_one_answer_per_cell():
    md = open(os.path.join(run_dir(), "report.md")).read()
    table = md[md.index("## Answer"):md.index("### Side by side")]
    assert "| 1 | go | 2450 (refined) |" in table, table
    assert "| 2 | gray-static | 1900 (refined) |" in table, table
    assert "[" not in table.split("\n\n", 2)[2].split("\n\n")[0], table
    assert ">= " not in table.split("\n\n", 2)[2].split("\n\n")[0], table
    # the grid's cells stay in the detail, named as the grid's
    refined = md[md.index("## Refined knees"):]
    assert "go plaintext: grid cells: held 1000, next 4000" in refined, refined


@test
def rows_keep_the_grid_marked_and_add_the_held_ends():
    rows = doc()["rows"]
    grid = [r for r in rows if r["is_grid"]]
    fine = [r for r in rows if not r["is_grid"]]
    assert sorted((r["runtime"], r["requested_rps"]) for r in grid) == sorted(
        (rt, rate) for rt in CELLS for rate in RATES), grid
    assert sorted((r["runtime"], r["requested_rps"], r["repeats_count"]) for r in fine) == [
        ("go", 2450, 2), ("gray-static", 1900, 2)], fine
    assert all(r["verdict"] == "controlled" for r in fine), fine


@test
def the_first_screen_says_by_how_much():
    md = open(os.path.join(run_dir(), "report.md")).read()
    first = md[md.index("## Answer"):md.index("### Side by side")]
    assert all(len(l) <= 100 for l in first.splitlines()), first
    items = [" ".join(i.split()) for i in re.split(r"\n(?=- )", first)]
    line = [i for i in items if i.startswith("- plaintext: go ")]
    assert len(line) == 1, first
    # the held rate's ratio (2450 / 1900) and the CPU per response's (16 / 25), refined
    assert "1.29x gray-static's held rate" in line[0], line
    assert "0.64x its CPU per response" in line[0], line
    # report.html's first screen says the same sentence
    html = open(os.path.join(run_dir(), "report.html")).read()
    item = re.search(r'<ul id="how-much-list">\n<li>(.*?)</li>', html)
    assert item and "- " + item.group(1).replace("&#39;", "'").replace("&apos;", "'") == \
        line[0], (item and item.group(1), line[0])


@test
def the_charts_mark_the_refined_held_end_and_name_every_mark():
    ns = "{http://www.w3.org/2000/svg}"
    for kind in ("achieved", "p99", "cpu"):
        root = ET.parse(os.path.join(run_dir(), "charts", f"{kind}-plaintext.svg")).getroot()
        ends = [g for g in root.iter(ns + "g") if g.get("class") == "refined-end"]
        titles = sorted(g.find(ns + "title").text for g in ends)
        # one ring per runtime in the plot, one in the legend
        assert len(ends) == 3, (kind, titles)
        for rt, (_, (lo, _), _) in CELLS.items():
            assert any(t.startswith(f"refined held end: {rt} {lo} req/s") for t in titles), titles
        legend = " ".join(t.text or "" for t in root.iter(ns + "text"))
        assert "ring: refined held end" in legend and "bar: min-max of samples" in legend, legend


@test
def compare_reads_the_refined_answers():
    a, b = run_dir(), refined_run("refined-b")
    p = subprocess.run([KB, "compare", a, b], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    tops = p.stdout[p.stdout.index("## Highest controlled point"):]
    assert "| go | plaintext | 2450 (refined) | 2450 (refined) | same |" in tops, tops


if __name__ == "__main__":
    try:
        exit_with("test-refined-report", sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
