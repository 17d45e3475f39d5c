#!/usr/bin/env python3
"""test_report -- `kneebench report` re-deriving and re-judging a recorded real run (issue 13).

tests/e2e/report/run/ is a short real `kneebench curve` (two runtimes, one route, three
rates; its series.hlog files dropped, the report does not read them). Every test works on a
copy of it, never on the recorded files:

- re-judged with `--max-p99-ms N` (10 ms, and a threshold between the run's own p99s, taken
  from its load.json files), a verdict changes exactly where the stored p99 crosses N and
  nowhere else; the re-judged report lands in RUN/rejudged-p99-<N>ms-d<F>/ and names the
  criterion on its first line;
- a plain report re-derives every verdict and writes as before; with one stored verdict
  tampered with it refuses, naming the point, the stored and the re-derived verdict, and
  writes nothing (re-judging such a run is refused too);
- re-judging leaves every file of the run as it was (hashes before and after), adding only
  the re-judged directory;
- the report's first table shows the published figures of the contract the run ran under
  (its own copy, contract.json) as the paper's host, with the line saying they are not a
  target; editing the checkout's contract after the run changes nothing in the report but
  a warning that it differs; evidence of a newer schema_version is refused by name;
- every field of report.json (with a calibration beside the run) is documented in
  docs/report-format.md, and every number outside the copied evidence files has its unit in
  its name; a fixture without limits.json still has `limits`, null.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from kbenv import CONTRACT, KB, ROOT, here, need
from kbtest import test, skip, exit_with

HERE = here(__file__)
FIXTURE = os.path.join(HERE, "run")
TMP = tempfile.mkdtemp(prefix="kb-report-e2e-")


def load(path):
    with open(path) as f:
        return json.load(f)


def copy_run(name):
    d = os.path.join(TMP, name)
    shutil.copytree(FIXTURE, d)
    return d


def report(run, *args):
    return subprocess.run([KB, "report", *args, run], capture_output=True, text=True, timeout=60)


def points(run):
    """{id: (stored verdict, corrected p99 in us or None)} from each point's own files."""
    out = {}
    for p in load(os.path.join(run, "plan.json"))["points"]:
        pd = os.path.join(run, "points", p["id"])
        p99 = load(os.path.join(pd, "load.json"))["corrected_us"]["p99"]
        out[p["id"]] = (load(os.path.join(pd, "verdict.json"))["verdict"], p99)
    return out


def row_verdicts(report_json):
    """{point id: verdict} from a report.json of a run without repeats."""
    return {r["point_ids"][0]: r["verdict"] for r in load(report_json)["rows"]}


def hashes(run):
    out = {}
    for path in glob.glob(os.path.join(run, "**"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out[os.path.relpath(path, run)] = hashlib.sha256(f.read()).hexdigest()
    return out


def between_threshold_us(pts):
    """A p99 threshold (whole us) between the stored p99s of the controlled points: the
    midpoint of the two lowest distinct ones, so that some points lie on each side."""
    p99s = sorted({p99 for v, p99 in pts.values() if v == "controlled" and p99 is not None})
    if len(p99s) < 2 or p99s[1] - p99s[0] < 2:
        skip(f"the recorded run has fewer than two distinct controlled p99s: {p99s}")
    return int((p99s[0] + p99s[1]) // 2) + 1


def check_rejudged(run, us):
    """Re-judge at us; every verdict changes exactly where the stored p99 crosses it."""
    pts = points(run)
    crit = load(os.path.join(run, "plan.json"))["criteria"]
    ms = us / 1000
    assert us < crit["max_p99_us"], (us, crit)
    r = report(run, "--max-p99-ms", f"{ms:g}")
    assert r.returncode == 0, r.stdout + r.stderr
    out = os.path.join(run, f"rejudged-p99-{ms:g}ms-d{crit['min_delivery']:g}")
    assert os.path.isfile(os.path.join(out, "report.md")), (os.listdir(run), r.stdout)
    first = open(os.path.join(out, "report.md")).readline()
    assert f"re-judged: p99 < {ms:g} ms, delivery >= " \
        f"{100 * crit['min_delivery']:g} %" in first, first
    assert len(first.rstrip("\n")) <= 100, first
    new = row_verdicts(os.path.join(out, "report.json"))
    assert set(new) == set(pts), (new, pts)
    # a tighter p99 can only turn a controlled point uncontrolled, and does exactly where
    # its stored p99 is at or past the threshold; failed and client-limited stay
    want = {pid for pid, (v, p99) in pts.items()
            if v == "controlled" and p99 is not None and p99 >= us}
    changed = {pid for pid in pts if new[pid] != pts[pid][0]}
    assert changed == want, (us, changed, want, pts)
    assert all(new[pid] == "uncontrolled" for pid in changed), new
    rep = load(os.path.join(out, "report.json"))
    assert rep["criteria"]["rejudged"] is True and rep["criteria"]["max_p99_us"] == us
    # the changes listed: the verdicts above, and any client-limited point whose own
    # figures' verdict the tighter criterion moved (the answer's unproven levels read it)
    verdicts = {c["point"] for c in rep["rederived"]["changed"] if c["stored"] != c["rejudged"]}
    assert verdicts == want, rep["rederived"]
    assert all(c["stored_server"] != c["rejudged_server"] for c in rep["rederived"]["changed"]
               if c["point"] not in want), rep["rederived"]
    assert rep["rederived"]["checked_count"] == len(pts)
    return changed


@test
def rejudged_at_10ms_changes_where_p99_crosses():
    need(KB)
    check_rejudged(copy_run("at10"), 10000)


@test
def rejudged_between_stored_p99s_changes_exactly_there():
    need(KB)
    run = copy_run("between")
    us = between_threshold_us(points(run))
    changed = check_rejudged(run, us)
    assert changed, f"a threshold of {us} us between the stored p99s changed nothing"
    assert len(changed) < len(points(run)), changed


@test
def plain_report_rederives_and_writes():
    need(KB)
    run = copy_run("plain")
    r = report(run)
    assert r.returncode == 0, r.stdout + r.stderr
    md = open(os.path.join(run, "report.md")).read()
    assert md.splitlines()[0].endswith(" quick profile"), md.splitlines()[0]
    n = len(points(run))
    assert f"{n} of {n} point(s) re-derived, each as stored" in " ".join(md.split()), md
    rep = load(os.path.join(run, "report.json"))
    assert rep["criteria"]["rejudged"] is False and rep["rederived"]["checked_count"] == n
    assert rep["rederived"]["not_rederived"] == [] and rep["rederived"]["changed"] == []
    assert row_verdicts(os.path.join(run, "report.json")) == \
        {pid: v for pid, (v, _) in points(run).items()}


@test
def tampered_verdict_refused_naming_the_point():
    need(KB)
    run = copy_run("tampered")
    pid, (stored, _) = sorted(points(run).items())[0]
    forged = "uncontrolled" if stored == "controlled" else "controlled"
    vpath = os.path.join(run, "points", pid, "verdict.json")
    v = load(vpath)
    v["verdict"] = forged
    with open(vpath, "w") as f:
        json.dump(v, f)
    for args in ((), ("--max-p99-ms", "10")):
        r = report(run, *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert f"point {pid}: stored verdict {forged}, re-derived {stored}" in r.stderr, r.stderr
        assert "refusing" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(run, "report.md"))
    assert not glob.glob(os.path.join(run, "rejudged-*", "report.md"))


@test
def rejudging_leaves_the_run_unchanged():
    need(KB)
    run = copy_run("unchanged")
    before = hashes(run)
    assert hashes(FIXTURE) == before
    r = report(run, "--max-p99-ms", "10", "--min-delivery", "0.99")
    assert r.returncode == 0, r.stdout + r.stderr
    after = hashes(run)
    added = set(after) - set(before)
    assert {k: after[k] for k in before} == before, \
        [k for k in before if after.get(k) != before[k]]
    assert added and all(k.startswith("rejudged-p99-10ms-d0.99" + os.sep) for k in added), added
    assert "report.md" not in after


@test
def first_table_shows_the_papers_host():
    need(KB)
    run = copy_run("orientation")
    r = report(run)
    assert r.returncode == 0, r.stdout + r.stderr
    md = open(os.path.join(run, "report.md")).read()
    plan = load(os.path.join(run, "plan.json"))
    # the contract the run ran under, as it kept it
    pub = load(os.path.join(run, "contract.json"))["published"]["highest_controlled_rps"]
    table = md[md.index("## Answer"):md.index("## Cost")]
    header = next(ln for ln in table.splitlines() if ln.startswith("| rank |"))
    header = [c.strip() for c in header.strip("|").split("|")]
    col = header.index("paper's host")
    for rt in plan["runtimes"]:
        line = [ln for ln in table.splitlines()
                if ln.startswith("| ") and ln.count("|") > 3 and
                ln.split("|")[2].strip() == rt][0]
        cells = [c.strip() for c in line.strip("|").split("|")]
        # the routes in the plan's order, " / " between
        assert cells[col] == " / ".join(str(pub[rt][route]) for route in plan["routes"]), \
            (rt, cells, header)
    flat = " ".join(table.split())
    assert "they are no target" in flat and "virtualisation" in flat, flat
    rep = load(os.path.join(run, "report.json"))
    assert rep["published"]["highest_controlled_rps"] == pub


def without_contract_warning(md):
    """report.md less the paragraph that says the checkout's contract differs."""
    return re.sub(r"> \*\*CONTRACT\*\*:.*?\n\n", "", md, flags=re.S)


@test
def an_edited_checkout_contract_leaves_the_report_as_it_was():
    """The report reads the contract the run ran under (RUN/contract.json, whose SHA-256
    run.json records), not the checkout's: editing `published` (and the runtimes' order) in
    the checkout's contract after the run changes nothing in the re-generated report.md,
    report.json or charts, and the report says on stderr and in report.md that the
    checkout's contract differs."""
    need(KB)
    import hashlib
    kept = open(os.path.join(FIXTURE, "contract.json"), "rb").read()
    assert hashlib.sha256(kept).hexdigest() == load(os.path.join(FIXTURE, "run.json"))["contract_sha256"]

    def edit(c):
        for rt in c["published"]["highest_controlled_rps"].values():
            for route in rt:
                rt[route] += 1000
        c["published"]["source"] = "an edited checkout"
        c["runtimes"].reverse()
    # the checkout as it was when the run ran (its kept copy), and that checkout edited:
    # neither is this checkout's contract, which later commits may change
    as_ran = os.path.join(TMP, "as-ran-tree")
    os.makedirs(os.path.join(as_ran, "contract"))
    with open(os.path.join(as_ran, "contract", "contract.json"), "wb") as f:
        f.write(kept)
    tree = os.path.join(TMP, "edited-tree")
    os.makedirs(os.path.join(tree, "contract"))
    c = json.loads(kept)
    edit(c)
    with open(os.path.join(tree, "contract", "contract.json"), "w") as f:
        json.dump(c, f, indent=2)
    same, other = copy_run("as-ran"), copy_run("edited-checkout")
    r = subprocess.run([KB, "--root", as_ran, "report", same], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "contract" not in r.stderr, r.stdout + r.stderr
    r = subprocess.run([KB, "--root", tree, "report", other], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning: the checkout's contract" in r.stderr and "differs from the one this run " \
        "ran under" in " ".join(r.stderr.split()), r.stderr
    want, got = (open(os.path.join(d, "report.md")).read() for d in (same, other))
    assert "**CONTRACT**" in got and "**CONTRACT**" not in want, got[:600]
    assert without_contract_warning(got) == want
    assert load(os.path.join(other, "report.json")) == load(os.path.join(same, "report.json"))
    assert load(os.path.join(other, "report.json"))["published"]["source"] != \
        "an edited checkout"
    for svg in glob.glob(os.path.join(same, "charts", "*.svg")):
        assert open(svg).read() == \
            open(os.path.join(other, "charts", os.path.basename(svg))).read(), svg


@test
def a_contract_copy_unlike_run_json_or_missing_is_said():
    """A copy that is not the contract run.json names (changed after the run) is read but
    flagged; a run without a copy (recorded before runs kept one) falls back to the
    checkout's contract and says so."""
    need(KB)
    run = copy_run("tampered-contract")
    with open(os.path.join(run, "contract.json"), "a") as f:
        f.write("\n")
    r = report(run)
    assert r.returncode == 0, r.stderr
    assert "is not the one run.json names" in " ".join(r.stderr.split()), r.stderr
    run = copy_run("no-copy")
    os.unlink(os.path.join(run, "contract.json"))
    r = report(run)
    assert r.returncode == 0, r.stderr
    flat = " ".join(r.stderr.split())
    assert "this run kept no copy of its contract" in flat, r.stderr
    md = " ".join(open(os.path.join(run, "report.md")).read().split())
    assert "**CONTRACT**: this run kept no copy" in md and "contract not kept" in md


@test
def evidence_from_a_newer_kneebench_is_refused_by_name():
    """A file whose schema_version this kneebench does not know is never read by guessing:
    the report refuses, naming the file."""
    need(KB)
    run = copy_run("newer")
    pid = sorted(points(run))[0]
    vpath = os.path.join(run, "points", pid, "verdict.json")
    v = load(vpath)
    v["schema_version"] = 99
    with open(vpath, "w") as f:
        json.dump(v, f)
    r = report(run)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert f"{pid}/verdict.json: schema_version 99, written by a newer kneebench" in r.stderr, \
        r.stderr
    assert not os.path.exists(os.path.join(run, "report.md"))


def knee_dir(name, text):
    """A knee search's run directory holding only knee.json, as text."""
    d = os.path.join(TMP, name)
    os.makedirs(d)
    with open(os.path.join(d, "knee.json"), "w") as f:
        f.write(text)
    return d


@test
def a_newer_or_truncated_record_exits_2_and_a_truncated_one_is_called_unreadable():
    """Issue 38: a knee record of a future schema_version was read (exit 0) and a truncated
    one made `report` exit 1, where a newer kneebench's evidence is 2; a truncated plan.json
    was reported as "has no plan.json"."""
    need(KB)
    doc = {"schema_version": 99, "kind": "knee", "plan": {"url": "http://127.0.0.1:1/"},
           "steps": [], "outcome": None}
    r = report(knee_dir("knee-newer", json.dumps(doc)))
    assert r.returncode == 2 and "schema_version 99, written by a newer" in r.stderr, \
        (r.returncode, r.stderr)
    doc["schema_version"] = 1
    r = report(knee_dir("knee-cut", json.dumps(doc)[:40]))
    assert r.returncode == 2 and "knee.json is unreadable" in r.stderr, (r.returncode, r.stderr)
    run = copy_run("plan-cut")
    path = os.path.join(run, "plan.json")
    text = open(path).read()
    with open(path, "w") as f:
        f.write(text[:len(text) // 2])
    r = report(run)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "plan.json is unreadable" in r.stderr and "has no plan.json" not in r.stderr, r.stderr


@test
def a_knee_stopped_by_an_error_before_any_rate_names_no_rate():
    """Issue 38: the headline read "search stopped (error) before any rate held at req/s"."""
    need(KB)
    doc = {"schema_version": 1, "kind": "knee", "plan": {"url": "http://127.0.0.1:1/"},
           "steps": [], "outcome": {"end": "error", "step": "measure", "lo": 0, "hi": 0,
                                    "why": ""}}
    r = report(knee_dir("knee-error", json.dumps(doc)))
    line = r.stdout.splitlines()[0] if r.stdout else ""
    assert line.startswith("search stopped (error) before any rate"), (r.stdout, r.stderr)
    assert "at req/s" not in line and "not bracketed" in line, line


DOC = os.path.join(ROOT, "docs", "report-format.md")
# what a numeric field's name (or, for {median, min, max} and lists, its parent's) must say
UNITS = {"rps", "us", "s", "fraction", "count", "bytes", "ratio", "mhz"}
UNITLESS = {"schema_version", "rank"}          # a version and a place in a ranking
COPIED = ("plan", "run", "fixtures")           # evidence files as written, in their names


def calibrated_copy(name):
    """A copy of the run with a calibration beside it, as kneebench calibrate writes one
    (its criteria under calibrate.json's older names), so that report.json has every part."""
    run = copy_run(name)
    plan = load(os.path.join(run, "plan.json"))
    hi = max(plan["rates"])
    os.makedirs(os.path.join(run, "calibrate"))
    step = {"rate": hi, "achieved_rps": hi * 0.99, "delivery": 0.999, "client_cpu_fraction": 0.5,
            "lag_p99_us": 300.0, "rx_delay_p99_us": 200.0, "corrected_p99_us": 900.0,
            "errors": 0, "held": True, "why": "", "attempts": 1, "missed_before": ""}
    with open(os.path.join(run, "calibrate", "calibrate.json"), "w") as f:
        json.dump({"calibrate_version": 1, "route": "plaintext", "up_to_rps": hi,
                   "factor": 1.25, "required_rps": hi * 1.25, "margin_rps": hi * 1.25,
                   "highest_held_rps": hi * 1.25, "proven": True, "server_cpus": "0",
                   "client_cpus": "1", "duration_s": 3.0, "warmup_s": 1.0,
                   "criteria": {"client_cpu_max_fraction": 0.9, "lag_p99_max_us": 1000.0,
                                "rx_delay_p99_max_us": 1000.0, "min_delivery": 0.995,
                                "errors_max": 0},
                   "steps": [step, dict(step, rate=hi * 1.25, achieved_rps=hi * 1.24)],
                   "complete": True}, f)
    return run, plan


def fields(o, path, names, out, parent=""):
    """(path, key, named parent, value) of every field under o. Runtime and route names (the
    maps keyed by them) are placeholders, and a field's named parent is the nearest one above
    it that is neither such a name nor a list."""
    items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
    for k, v in items:
        key = "<name>" if isinstance(k, str) and k in names else k
        here = f"{path}.{key}" if isinstance(k, str) else f"{path}[]"
        out.append((here, key if isinstance(k, str) else None, parent, v))
        named = key if isinstance(k, str) and key != "<name>" else parent
        fields(v, here, names, out, named)
    return out


@test
def every_report_json_field_is_documented_with_its_unit():
    """Every field name report.json writes is in docs/report-format.md, and every number
    outside the copied evidence files carries its unit in its name or its parent's
    (achieved_rps.median, held_rates_rps[]): the calibration's and the plan's criteria too."""
    need(KB)
    run, plan = calibrated_copy("documented")
    r = report(run)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = open(DOC).read()
    rep = load(os.path.join(run, "report.json"))
    names = {x["name"] for x in CONTRACT["runtimes"] + CONTRACT["routes"]}
    undocumented, unitless = set(), set()
    for path, key, parent, v in fields(rep, "", names, []):
        top = path.split(".")[1].split("[")[0]
        if top in ("plan", "run"):
            continue                    # copied whole, named in the doc as copies
        if key and key != "<name>" and not re.search(r"(?<![\w])" + re.escape(key) + r"(?![\w])", doc):
            undocumented.add(path)
        if top in COPIED or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        own = set((key or "").split("_")) | set(parent.split("_"))
        if not own & UNITS and (key or parent) not in UNITLESS:
            unitless.add(path)
    assert not undocumented, f"not in {DOC}: {sorted(undocumented)}"
    assert not unitless, f"numbers without a unit in their names: {sorted(unitless)}"
    # the renamed ones, and a failed fixture's limits present as null
    assert rep["calibration"]["criteria"]["min_delivery_fraction"] == 0.995
    assert rep["calibration"]["criteria"]["errors_max_count"] == 0
    assert rep["criteria"]["run"]["min_delivery_fraction"] == plan["criteria"]["min_delivery"]
    assert rep["schema_version"] == 4


@test
def error_kinds_completions_and_pss_follow_each_point():
    """report.csv and report.json give the errors by kind, the completions and the PSS of
    every row as the point's own load.json and verdict.json hold them (issue 28: the kinds
    were folded into one count, PSS absent)."""
    need(KB)
    run = copy_run("kinds")
    p = report(run)
    assert p.returncode == 0, p.stderr
    rows = {r["point_id"]: r for r in load(os.path.join(run, "report.json"))["rows"]}
    with open(os.path.join(run, "report.csv")) as f:
        import csv
        csv_rows = {r["point_id"]: r for r in csv.DictReader(f)}
    assert rows and set(rows) == set(csv_rows), (sorted(rows), sorted(csv_rows))
    for pid, r in rows.items():
        ld = load(os.path.join(run, "points", pid, "load.json"))
        v = load(os.path.join(run, "points", pid, "verdict.json"))
        e = ld["errors"]
        io = e["connect"] + e["read"] + e["write"] + e["peer_close"] + e["malformed"]
        assert r["socket_errors_count"] == io and r["completed_count"] == ld["completed"], (pid, r)
        assert r["timeouts_count"] + r["unanswered_count"] == e["timeout"], (pid, r, e)
        pss = v["server"].get("pss_max_bytes")
        assert r["server_pss_max_bytes"] == (pss or None), (pid, r["server_pss_max_bytes"], pss)
        c = csv_rows[pid]
        assert int(c["completed_count"]) == ld["completed"], (pid, c["completed_count"])
        assert c["server_pss_max_bytes"] == (str(pss) if pss else ""), (pid, c["server_pss_max_bytes"])
    md = open(os.path.join(run, "report.md")).read()
    assert "| PSS |" in md and "MiB |" in md, md[md.find("## Cost"):][:800]


@test
def a_fixture_without_limits_has_limits_null():
    """A fixture that never started leaves no limits.json: report.json still has the key."""
    need(KB)
    run = copy_run("nolimits")
    rt = load(os.path.join(run, "plan.json"))["runtimes"][0]
    os.unlink(os.path.join(run, "fixtures", rt, "limits.json"))
    r = report(run)
    assert r.returncode == 0, r.stdout + r.stderr
    fx = load(os.path.join(run, "report.json"))["fixtures"]
    assert "limits" in fx[rt] and fx[rt]["limits"] is None, fx[rt]
    assert all(isinstance(f["limits"], dict) for k, f in fx.items() if k != rt), fx



@test
def partial_report_without_the_first_cells_series_completes():
    """`report --partial` with the first planned point incomplete, and with every point
    incomplete, writes its PARTIAL report (issue 38: the latency grid freed the series of a
    cell it never read, a segfault or an abort)."""
    need(KB)
    plan = load(os.path.join(FIXTURE, "plan.json"))
    for name, gone in (("partial-first", plan["points"][:1]), ("partial-all", plan["points"])):
        run = copy_run(name)
        for p in gone:
            os.unlink(os.path.join(run, "points", p["id"], "DONE"))
        r = report(run, "--partial")
        assert r.returncode == 0, (name, r.returncode, r.stderr)
        assert "PARTIAL" in r.stdout, (name, r.stdout)
        html = open(os.path.join(run, "report.html")).read()
        assert html.rstrip().endswith("</html>"), (name, html[-200:])


@test
def a_run_another_user_may_write_is_refused():
    """A run copy owned by nobody, its charts/ a link to a directory of root's (issue 38:
    root wrote its charts there), and a run of root's with such a link: refused, exit 2,
    nothing written through the link."""
    need(KB)
    if os.geteuid() != 0:
        skip("needs root to give the copy to nobody")
    for name, owner in (("theirs", 65534), ("own-linked", 0)):
        run = copy_run(name)
        target = os.path.join(TMP, f"{name}-roots-only")
        os.makedirs(target, mode=0o700)
        os.symlink(target, os.path.join(run, "charts"))
        for d, _, files in os.walk(run):
            for x in [d] + [os.path.join(d, f) for f in files]:
                os.lchown(x, owner, owner)
        r = report(run)
        assert r.returncode == 2 and "owned by uid 0" in r.stderr, (name, r.returncode, r.stderr)
        assert os.listdir(target) == [], (name, os.listdir(target))
        assert not os.path.exists(os.path.join(run, "report.md")), name


@test
def names_in_the_plan_must_be_plain_and_few():
    """plan.json naming a route /../../x/pwned (issue 38: the chart went to /tmp/x/pwned.svg),
    a runtime "..", or 71 runtimes (issue 38: a stack overflow in the charts): each refused,
    exit 2, naming plan.json, nothing written."""
    need(KB)
    escape = os.path.join(TMP, "escaped")
    os.makedirs(escape)
    rel = os.path.relpath(escape, os.path.join(TMP, "x", "charts"))
    cases = {"route-escape": lambda p: p.update(routes=[f"/{rel}/pwned"]),
             "dotdot-runtime": lambda p: p.update(runtimes=[".."] + p["runtimes"]),
             "point-escape": lambda p: p["points"][0].update(id=f"../../{rel}/p"),
             "71-runtimes": lambda p: p.update(runtimes=[f"rt{i}" for i in range(71)])}
    for name, edit in cases.items():
        run = copy_run(name)
        path = os.path.join(run, "plan.json")
        plan = load(path)
        edit(plan)
        with open(path, "w") as f:
            json.dump(plan, f)
        r = report(run, "--partial")
        assert r.returncode == 2 and "plan.json" in r.stderr, (name, r.returncode, r.stderr)
        assert not os.path.exists(os.path.join(run, "report.md")), name
        assert os.listdir(escape) == [], (name, os.listdir(escape))


@test
def evidence_that_cannot_be_real_is_refused_by_name():
    """A point whose load.json and verdict.json agree on figures no measurement gives
    (delivery 1e308, p99 -1 us, completed -5; issue 38: read as controlled), and a FIFO as a
    verdict.json (which would block the reader for ever): refused, exit 2, naming the file,
    nothing written; the run's files as they were."""
    need(KB)
    pid = load(os.path.join(FIXTURE, "plan.json"))["points"][0]["id"]
    edits = {"delivery": lambda l: l.update(delivery=1e308),
             "p99": lambda l: l["corrected_us"].update(p99=-1),
             "completed": lambda l: l.update(completed=-5)}
    for name, edit in edits.items():
        run = copy_run(f"bad-{name}")
        pd = os.path.join(run, "points", pid)
        ld, v = load(os.path.join(pd, "load.json")), load(os.path.join(pd, "verdict.json"))
        edit(ld)
        v["load"] = ld
        for f, doc in (("load.json", ld), ("verdict.json", v)):
            with open(os.path.join(pd, f), "w") as out:
                json.dump(doc, out)
        before = hashes(run)
        r = report(run)
        assert r.returncode == 2 and f"{pid}/verdict.json" in r.stderr, (name, r.returncode, r.stderr)
        assert hashes(run) == before, name
    run = copy_run("fifo-verdict")
    path = os.path.join(run, "points", pid, "verdict.json")
    os.unlink(path)
    os.mkfifo(path)
    r = report(run)
    assert r.returncode == 2 and "not a regular file" in r.stderr, (r.returncode, r.stderr)

def paper_fig(rt, route, rate):
    """The contract's published figures for rt on route at rate, or None."""
    return next((f for f in CONTRACT["published"]["points"]["figures"]
                 if (f["runtime"], f["route"], f["rate"]) == (rt, route, rate)), None)


def md_table_rows(md, rt, route):
    """{rate: {column: cell}} of report.md's per-runtime table for rt on route."""
    t = md[md.index(f"#### {rt}, {route}\n\n| req/s |"):]
    lines = t[:t.index("\n\n", t.index("|---"))].splitlines()[2:]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]
    return {int(r[0]): dict(zip(head, r)) for r in rows}


@test
def the_papers_figures_sit_beside_the_runs_point():
    """Each point the first paper gives figures for has them in a column of its own beside
    the run's point at the same runtime, route and rate (report.md, report.html, report.json);
    blank at a rate it gives none for, absent from a run with no such point; the verdicts are
    the run's own (the paper's 60,000 held; this run's, made uncontrolled, stays so)."""
    need(KB)
    sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
    from synthrun import synth_run
    rates = [30000, 45000, 60000]
    pts = {}
    for rt in ("gray-static", "go"):
        for rate in rates:
            held = rate <= (60000 if rt == "gray-static" else 30000) and rate != 60000
            pts[(rt, "plaintext", rate)] = ("controlled" if held else "uncontrolled", None,
                                            rate * (0.99 if held else 0.7),
                                            2000 if held else 900000, False, 0)
    run = os.path.join(TMP, "paper-points")
    synth_run(run, ["gray-static", "go"], ["plaintext"], rates, pts)
    r = report(run)
    assert r.returncode == 0, r.stdout + r.stderr
    md = open(os.path.join(run, "report.md")).read()
    html = open(os.path.join(run, "report.html")).read()
    col = "paper's host (orientation)"
    seen = 0
    for rt in ("gray-static", "go"):
        rows = md_table_rows(md, rt, "plaintext")
        for rate in rates:
            fig, cell = paper_fig(rt, "plaintext", rate), rows[rate][col]
            # the run's verdict, whatever the paper's point did
            assert rows[rate]["verdict"] == pts[(rt, "plaintext", rate)][0], rows[rate]
            if fig is None:
                assert cell == "", (rt, rate, cell)
                continue
            seen += 1
            assert f"p99 {fig['p99_us'] / 1000:.2f} ms" in cell, (rt, rate, cell)
            assert f"(section {fig['section']})" in cell, cell
            if "achieved_rps" in fig:
                assert f"{fig['achieved_rps']:.2f}/s" in cell, cell
            if "p50_us" in fig:
                assert f"p50 {fig['p50_us'] / 1000:.2f} ms" in cell, cell
                assert f"p99.9 {fig['p999_us'] / 1000:.2f} ms" in cell, cell
            # the same cell in report.html's points table, beside that point's row
            row = re.search(rf"<tr><td>{rt}</td><td>plaintext</td><td class=\"n\">{rate}</td>"
                            rf".*?<td class=\"paper\">([^<]*)</td>", html)
            assert row and row.group(1) == cell.replace("&", "&amp;"), (rt, rate, row)
    assert seen == 3, seen
    assert "<th>paper's host (orientation)</th>" in html
    assert re.search(r'<td class="n">30000</td>.*?<td class="paper"></td>', html)
    rep = load(os.path.join(run, "report.json"))
    assert rep["published"]["points"] == CONTRACT["published"]["points"]["figures"]
    # a run at rates the paper gives no figures for has no such column
    low = os.path.join(TMP, "paper-points-none")
    synth_run(low, ["gray-static"], ["plaintext"], [100, 200],
              {("gray-static", "plaintext", k): ("controlled", None, k, 2000, False, 0)
               for k in (100, 200)})
    assert report(low).returncode == 0
    assert col not in open(os.path.join(low, "report.md")).read()
    assert "paper's host (orientation)" not in open(os.path.join(low, "report.html")).read()


def as_old_remote_run(run):
    """Rewrite a recorded run as the retired `--backend remote` wrote it (issue 35 removed
    serve-agent): run.json and plan.json with its "target" (host, agent, the agent's
    identity answer), limits read back by the agent (backend "remote", paths prefixed with
    its address), the agent's identity.json, each command.json's target and hostclock.json
    with the server's CPUs not read."""
    agent = "10.77.0.1:41234"
    rj = load(os.path.join(run, "run.json"))
    rj["backend"] = "remote"
    rj["target"] = {"host": "10.77.0.1", "agent": agent, "agent_identity": {
        "protocol": 2, "hostname": "fixture-host", "kernel": "6.1.0", "cpu_model": "x",
        "backend": "native", "limits": True, "serve_bind": "10.77.0.1"}}
    rj["runtime_versions"] = {k: "unknown (remote fixture host; serve-agent reports no versions)"
                              for k in rj.get("runtime_versions", {})}
    json.dump(rj, open(os.path.join(run, "run.json"), "w"), indent=1)
    plan = load(os.path.join(run, "plan.json"))
    plan["backend"] = "remote"
    plan["target"] = {"host": "10.77.0.1", "agent": agent}
    json.dump(plan, open(os.path.join(run, "plan.json"), "w"), indent=1)
    for fx in glob.glob(os.path.join(run, "fixtures", "*")):
        la = load(os.path.join(fx, "limits.json"))
        la["backend"], la["paths"] = "remote", f"{agent}: {la.get('paths', '')}"
        json.dump(la, open(os.path.join(fx, "limits.json"), "w"), indent=1)
        ident = load(os.path.join(fx, "identity.json"))
        json.dump({"schema_version": ident.get("schema_version", 1), "agent": agent,
                   "target": "10.77.0.1", "agent_host": {"hostname": "fixture-host"},
                   "command": ["x"], "sha256": ident["sha256"],
                   "note": "remote fixture: the agent's host and the contract's command"},
                  open(os.path.join(fx, "identity.json"), "w"), indent=1)
    for path in glob.glob(os.path.join(run, "points", "*", "command.json")):
        c = load(path)
        c["target"] = "10.77.0.1"
        json.dump(c, open(path, "w"), indent=1)
    for path in glob.glob(os.path.join(run, "points", "*", "hostclock.json")):
        c = load(path)
        c["server_remote"] = True
        json.dump(c, open(path, "w"), indent=1)


@test
def a_run_of_the_retired_remote_backend_still_opens():
    """report and compare open a run directory made by `--backend remote` after the backend
    and serve-agent are gone: nothing in them needs the backend to exist."""
    need(KB)
    old = copy_run("old-remote")
    as_old_remote_run(old)
    r = report(old)
    assert r.returncode == 0, r.stdout + r.stderr
    md = open(os.path.join(old, "report.md")).read()
    assert "remote" in md, md[:2000]
    assert load(os.path.join(old, "report.json"))["backend"] == "remote"
    assert row_verdicts(os.path.join(old, "report.json")) == \
        {pid: v for pid, (v, _) in points(old).items()}
    new = copy_run("native-beside-old-remote")
    assert report(new).returncode == 0
    c = subprocess.run([KB, "compare", new, old], capture_output=True, text=True, timeout=60)
    assert c.returncode == 0, c.stdout + c.stderr
    assert "remote" in c.stdout, c.stdout[:2000]


if __name__ == "__main__":
    try:
        exit_with("test-report-e2e", sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
