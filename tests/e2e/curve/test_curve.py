"""End-to-end tests of `kneebench curve` and `kneebench report` on a small matrix.

Two runtimes (go and gray-static when built, else node), both routes, two low rates, about
a second a point, the real load generator, the native cgroup sandbox. Checks the evidence
layout, that every verdict follows from its evidence and the contract's criteria, the limits
read back from the cgroups, the report; then a fixture killed mid-point, a run interrupted
with SIGINT and resumed, the report refusing an incomplete run, a changed plan refused.
The machine is shared, so no test depends on a latency figure: verdicts are checked for
consistency with their evidence, not for a particular outcome, except where the test
provokes one.
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, CONTRACT, KB, ROOT, here, need
from kbtest import exit_with, skip, test

HERE = here(__file__)
CRIT = CONTRACT["comparison"]["criteria"]
LIMITS = CONTRACT["limits"]
TMP = tempfile.mkdtemp(prefix="kb-curve-e2e-")
os.chmod(TMP, 0o755)   # the db test's cluster runs as the postgres user and must reach it
SECOND = "gray-static" if os.access(os.path.join(BUILD, "gray-static"), os.X_OK) else "node"
SHORT = ["--duration", "1", "--warmup", "0.5", "--drain", "0.5", "--free-ports",
         "--build", BUILD]
POINT_FILES = ["command.json", "load.json", "corrected.hgrm", "uncorrected.hgrm",
               "samples.csv", "hostclock.json", "verdict.json", "DONE"]


def need_root():
    if os.geteuid() != 0 or not os.access("/sys/fs/cgroup/pids", os.W_OK) and \
            not os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        skip("the native sandbox needs root and writable cgroups")
    need(KB)


def curve(run, *args, timeout=120):
    return subprocess.run([KB, "curve", "--run", run, *SHORT, *args], capture_output=True,
                          text=True, timeout=timeout)


def report(run, *args):
    return subprocess.run([KB, "report", *args, run], capture_output=True, text=True, timeout=60)


def flat(text):
    """report.md's prose is wrapped at 100 columns: compare it with whitespace collapsed."""
    return " ".join(text.split())


def check_hostclock(d, cmd):
    """A point's hostclock.json: every server and client CPU, its clock and governor where
    cpufreq exposes them, or explicitly not exposed (governor null), as on a VM."""
    h = load(f"{d}/hostclock.json")
    assert isinstance(h["exposed"], bool) and h["samples"] >= 1, h
    for role in ("server", "client"):
        want = set()
        for part in cmd[f"{role}_cpus"].split(","):
            a, _, b = part.partition("-")
            want |= set(range(int(a), int(b or a) + 1))
        assert {c["cpu"] for c in h["cpus"] if c["role"] == role} == want, (role, h)
    for c in h["cpus"]:
        has = os.path.exists(f"/sys/devices/system/cpu/cpu{c['cpu']}/cpufreq/scaling_cur_freq")
        assert c["exposed"] is has, c
        if c["exposed"]:
            assert c["source"] == "cpufreq" and 0 < c["mhz_min"] <= c["mhz_max"], c
            assert c["governor_start"] and c["governor_end"], c
        else:
            assert c["governor_start"] is None and c["governor_end"] is None, c
            assert c["source"] in ("cpuinfo", None), c
            assert (c["mhz_min"] is None) == (c["source"] is None), c
        assert c["governor_changed"] is (c["governor_start"] != c["governor_end"]), c
    assert h["exposed"] is all(c["exposed"] for c in h["cpus"]), h
    assert os.path.getmtime(f"{d}/verdict.json") >= os.path.getmtime(f"{d}/hostclock.json")


def own_uncontrolled(v):
    """The report's first uncontrolled point: uncontrolled, or client-limited with its own
    figures uncontrolled (server_verdict; older evidence has none)."""
    return v["verdict"] == "uncontrolled" or \
        (v["verdict"] == "client-limited" and v.get("server_verdict") == "uncontrolled")


def check_rows_follow_evidence(run, plan, rep, md):
    """report.json's and report.csv's rows against each point's verdict.json (one repeat):
    the point id, the verdict and the one underneath, every latency figure in us with its
    bound flag, null/empty where the histogram is empty, and report.md never printing such
    a figure as 0."""
    import csv
    with open(f"{run}/report.csv") as f:
        rows = list(csv.DictReader(f))
    head = list(rows[0].keys())
    assert head[:2] == ["schema_version", "point_id"], head
    for col in head:   # a unit or a kind in every name
        assert col in ("schema_version", "point_id", "runtime", "route", "verdict",
                       "server_verdict", "client_trust_ok", "unconstrained", "partial", "reason",
                       "server_reason") or col.endswith(("_rps", "_us", "_fraction", "_count",
                                                         "_is_bound", "_s", "_bytes",
                                                         "_us_per_response")), col
    assert rep["schema_version"] == 4 and all(r["schema_version"] == "4" for r in rows)
    by_id = {r["point_id"]: r for r in rows}
    jrows = {r["point_id"]: r for r in rep["rows"]}
    assert set(by_id) == set(jrows) == {p["id"] for p in plan["points"]}
    for p in plan["points"]:
        v = load(f"{run}/points/{p['id']}/verdict.json")
        c, j = by_id[p["id"]], jrows[p["id"]]
        assert c["verdict"] == j["verdict"] == v["verdict"], (p, c["verdict"], v["verdict"])
        sv = v.get("server_verdict")
        assert j["server_verdict"] == (sv if sv else (v["verdict"] if v["verdict"] !=
                                                      "client-limited" else None)), (p, j)
        lat = v["load"]["corrected_us"]
        for k in ("p50", "p90", "p99", "p999", "max"):
            bound = bool(lat.get("is_bound", {}).get(k))
            if lat["count"] == 0:
                assert c[f"{k}_us"] == "" and j[f"{k}_us"]["median"] is None, (p, k, c)
            else:
                assert abs(float(c[f"{k}_us"]) - lat[k]) <= 0.05, (p, k, c[f"{k}_us"], lat[k])
                assert j[f"{k}_us"]["median"] == lat[k], (p, k, j[f"{k}_us"], lat[k])
            assert c[f"{k}_is_bound"] == str(int(bound)) and j[f"{k}_us"]["is_bound"] == bound
        table = md[md.index(f"#### {p['runtime']}, {p['route']}\n\n| req/s |"):]
        table = table[:table.index("\n\n", table.index("|---"))]
        row = re.search(rf"^\| {p['rate']} \|.*$", table, re.M)
        assert row, p
        cells = [x.strip() for x in row.group(0).split("|")[1:-1]]
        # req/s, n, achieved, delivery, p50, p99, errors, verdict, missed
        assert cells[4:6] == [x for x in cells[4:6] if x == "-" or x.split()[-1] in ("ms", "s")]
        if lat["count"] == 0:
            assert cells[4:6] == ["-"] * 2, cells
        if lat.get("is_bound", {}).get("p99"):
            assert cells[5].startswith(">= "), cells
        assert cells[-2] == v["verdict"], (cells, v["verdict"])  # a paper column may precede
        cpu = v["server"].get("cpu_us_per_response")
        assert (c["server_cpu_us_per_response"] == "") == (cpu is None), (p, c)
    # the answer first: one ranked row per runtime, before anything else
    answer = md.index("## Answer\n")
    assert answer < md.index("## Cost per response") < md.index("## Run") < md.index("## Curves")
    ranked = re.findall(r"^\| (\d+) \| ([a-z-]+) \|", md[answer:md.index("## Cost")], re.M)
    assert sorted(rt for _, rt in ranked) == sorted(plan["runtimes"]), ranked
    assert [int(n) for n, _ in ranked] == sorted(int(n) for n, _ in ranked)
    assert [a["runtime"] for a in rep["answer"]] == [rt for _, rt in ranked]


def load(path):
    with open(path) as f:
        return json.load(f)


def cgroups_of(pid):
    return glob.glob(f"/sys/fs/cgroup/*/kneebench-{pid}-*") + \
        glob.glob(f"/sys/fs/cgroup/kneebench-{pid}-*")


def expected_verdict(v):
    """The verdict the contract's criteria give this point's evidence, or None when the
    runner's own observations (exit, identity, pre/postflight) decide it."""
    reason = v["reason"]
    if any(reason.startswith(p) for p in ("process exited", "changed fixture identity",
                                           "preflight failed", "postflight failed",
                                           "missing load evidence")):
        return None
    ld = v["load"]
    if ld["errors"]["total"] or ld["non2xx"] or ld["mismatches"]["total"]:
        return "failed"
    # the client is trusted unless its own delay could have decided the verdict: judged as
    # measured and again without that delay (docs/protocol.md, "Trusting the client"), the
    # two must agree; it lost no request and stayed under its CPU guard
    unanswered_ok = ld["unfinished_at_drain_end"] <= 0.01 * ld["scheduled"]
    ok = ld["delivery"] >= CRIT["min_delivery"] and ld["corrected_us"]["p99"] < CRIT["max_p99_us"] \
        and unanswered_ok
    less = ld["delivery_less_client"] >= CRIT["min_delivery"] and \
        ld["corrected_less_client_us"]["p99"] < CRIT["max_p99_us"] and unanswered_ok
    if ok != less or ld["client_dropped"] or \
            ld["client_cpu_fraction"] > CRIT["client_cpu_max_fraction"]:
        return "client-limited"
    return "controlled" if ok else "uncontrolled"


_main = {}
CONTROLLER = str(os.cpu_count() - 1)      # the last CPU: the client's "1-" includes it


def main_run():
    """The shared small run: two runtimes, both routes, rates 500 and 1000."""
    need_root()
    if not _main:
        run = os.path.join(TMP, "main")
        t0 = time.monotonic()
        # the runner on a CPU of its own where the host has one past the client's first
        r = curve(run, "--runtimes", f"go,{SECOND}", "--rates", "500,1000",
                  "--controller-cpus", CONTROLLER)
        _main.update(run=run, proc=r, wall=time.monotonic() - t0)
        assert r.returncode == 0, r.stdout + r.stderr
    return _main["run"]


@test
def evidence_layout_and_progress():
    run = main_run()
    plan = load(f"{run}/plan.json")
    assert len(plan["points"]) == 8
    assert plan["runtimes"] == [r["name"] for r in CONTRACT["runtimes"] if r["name"] in ("go", SECOND)]
    runj = load(f"{run}/run.json")
    for k in ("runner_sha256", "contract_sha256", "host", "runtime_versions", "command_line"):
        assert runj[k], k
    assert len(runj["runner_sha256"]) == 64
    # --controller-cpus applied: the kernel's read-back of the runner's own affinity
    assert runj["controller_cpus"] == CONTROLLER and runj["controller_cpus_declared"] is True, \
        (runj["controller_cpus"], runj.get("controller_cpus_declared"))
    for rt in plan["runtimes"]:
        for f in ("limits.json", "identity.json", "preflight.json", "fixture.log"):
            assert os.path.exists(f"{run}/fixtures/{rt}/{f}"), (rt, f)
        pre = load(f"{run}/fixtures/{rt}/preflight.json")
        assert pre["failed"] is False and pre["plaintext"]["ok"] and pre["json"]["ok"], pre
        ident = load(f"{run}/fixtures/{rt}/identity.json")
        assert len(ident["sha256"]) == 64 and ident["files"]
    for p in plan["points"]:
        d = f"{run}/points/{p['id']}"
        for f in POINT_FILES:
            assert os.path.exists(f"{d}/{f}"), (p["id"], f)
        # the marker is written last
        assert os.path.getmtime(f"{d}/DONE") >= os.path.getmtime(f"{d}/verdict.json")
        rows = open(f"{d}/samples.csv").read().splitlines()
        assert rows[0].startswith("t_s,server_cpu_s") and len(rows) >= 2, rows
        cmd = load(f"{d}/command.json")
        assert cmd["rate"] == p["rate"] and cmd["connections"] == CONTRACT["comparison"]["connections"]
        # the client runs SCHED_FIFO by default, and the load generator says it got it
        assert cmd["client_sched"] == "fifo", cmd
        assert load(f"{d}/load.json")["client_sched"] == "fifo"
        check_hostclock(d, cmd)
        assert not glob.glob(f"{d}/*.tmp*")
    out = _main["proc"].stdout
    assert out.count("eta ") == 8 and "8/8]" in out, out


def json_files(run):
    """Every JSON file under run: *.json, and the JSON markers DONE and incomplete.json."""
    for dirpath, _, names in os.walk(run):
        for n in names:
            if n.endswith(".json") or n == "DONE":
                yield os.path.join(dirpath, n)


@test
def every_json_file_carries_schema_version():
    """Every JSON evidence file the curve writes says its format's version (issue 26):
    plan, run, the fixtures' limits/identity/preflight, each point's command, load,
    hostclock and verdict.json (and the copy of load.json inside it), its DONE, and
    contract.json, the contract the run ran under, byte for byte (the contract carries one
    beside its own contract_version)."""
    run = main_run()
    seen = set()
    for path in json_files(run):
        rel = os.path.relpath(path, run)
        if rel == "report.json" or rel.startswith("rejudged-"):
            continue                # the report's own schema_version: tests/e2e/report
        doc = load(path)
        assert isinstance(doc, dict) and doc.get("schema_version") == 1, (rel, doc)
        assert next(iter(doc)) == "schema_version", (rel, list(doc)[:3])
        seen.add(os.path.basename(path))
        if os.path.basename(path) == "verdict.json":
            assert doc["load"]["schema_version"] == 1, rel
            assert doc["load"]["kneebench_load"] == 1, rel     # kept for older readers
    assert {"plan.json", "run.json", "limits.json", "identity.json", "preflight.json",
            "command.json", "load.json", "hostclock.json", "verdict.json", "DONE",
            "contract.json"} <= seen, seen
    # the contract it ran under, kept whole: run.json's contract_sha256 is the copy's
    import hashlib
    kept = open(f"{run}/contract.json", "rb").read()
    assert kept == open(os.path.join(ROOT, "contract", "contract.json"), "rb").read()
    assert hashlib.sha256(kept).hexdigest() == load(f"{run}/run.json")["contract_sha256"]
    assert json.loads(kept)["contract_version"] == CONTRACT["contract_version"]


@test
def verdicts_follow_evidence():
    run = main_run()
    seen = {}
    for p in load(f"{run}/plan.json")["points"]:
        v = load(f"{run}/points/{p['id']}/verdict.json")
        assert v["verdict"] in ("controlled", "uncontrolled", "failed", "client-limited")
        assert v["reason"]
        want = expected_verdict(v)
        assert want is None or want == v["verdict"], (p["id"], want, v["verdict"], v["reason"])
        assert v["load"]["requested_rps"] == p["rate"]
        assert v["server"]["samples"] >= 1 and v["server"]["rss_max_bytes"] > 0
        # at these rates the fixture goes quiet between points, measured before each
        assert v["settle_quiet"] is True and 0 <= v["settle_server_cpu"] < 0.10, v
        assert 0.3 <= v["settle_s"] < 10, v["settle_s"]
        seen.setdefault(p["runtime"], []).append(v["verdict"])
    # at these rates a working fixture serves: each runtime has points that did not fail
    for rt, vs in seen.items():
        assert any(x != "failed" for x in vs), (rt, vs)


@test
def limits_read_back_equal_contract_and_cgroups_removed():
    run = main_run()
    for rt in load(f"{run}/plan.json")["runtimes"]:
        lim = load(f"{run}/fixtures/{rt}/limits.json")
        assert lim["backend"] == "native" and lim["cgroup_version"] in (1, 2)
        assert abs(lim["cpus"] - LIMITS["cpus"]) < 1e-9, lim
        assert lim["memory_bytes"] == LIMITS["memory_bytes"], lim
        assert lim["pids_max"] == LIMITS["pids"], lim
        assert lim["cpuset"] == LIMITS["server_cpus"], lim
        for path in lim["paths"].split():
            assert not os.path.exists(path), f"{path} left behind"


@test
def report_from_complete_run():
    run = main_run()
    r = report(run)
    assert r.returncode == 0, r.stderr
    md = open(f"{run}/report.md").read()
    assert "PARTIAL" not in md and "## Answer\n" in md
    # a terminal's width: no line over 100 columns outside a code block
    fence = False
    for line in md.splitlines():
        fence ^= line.startswith("```")
        assert fence or line.startswith("```") or len(line) <= 100, line
    plan = load(f"{run}/plan.json")
    csv = open(f"{run}/report.csv").read().splitlines()
    assert len(csv) == 1 + len(plan["points"])
    rep = load(f"{run}/report.json")
    check_rows_follow_evidence(run, plan, rep, md)
    # one line on the CPU clocks, exposed or explicitly not, and the same in report.json
    hc = rep["host_clock"]
    assert hc["points_count"] == len(plan["points"]) and hc["line"] in flat(md), hc
    assert hc["line"].startswith("CPU clocks: " if hc["exposed"] else
                                 "CPU clocks: not exposed by this host"), hc
    assert ("WARNING" in hc["line"]) is hc["governor_changed"], hc
    for p in plan["points"]:
        v = load(f"{run}/points/{p['id']}/verdict.json")
        row = [x for x in rep["rows"] if x["runtime"] == p["runtime"] and
               x["route"] == p["route"] and x["requested_rps"] == p["rate"]]
        assert len(row) == 1 and row[0]["verdict"] == v["verdict"], (p, row)
        assert f"#### {p['runtime']}, {p['route']}" in md and f"| {p['rate']} |" in md
    for rt in plan["runtimes"]:
        for route in plan["routes"]:
            ctl = [p["rate"] for p in plan["points"] if p["runtime"] == rt and p["route"] == route
                   and load(f"{run}/points/{p['id']}/verdict.json")["verdict"] == "controlled"]
            assert rep["highest_controlled_rps"][rt][route] == (max(ctl) if ctl else None)
    for route in plan["routes"]:
        for kind in ("achieved", "p99", "cpu"):
            svg = open(f"{run}/charts/{kind}-{route}.svg").read()
            assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
            for rt in plan["runtimes"]:
                assert f">{rt}</text>" in svg or f">{rt} (none drawn)</text>" in svg
    # every chart of the real run renders (tests/e2e/charts checks their structure)
    if shutil.which("rsvg-convert"):
        for svg in glob.glob(f"{run}/charts/*.svg"):
            r = subprocess.run(["rsvg-convert", "-o", svg[:-4] + ".png", svg],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0 and not r.stderr.strip(), (svg, r.stderr)
            assert open(svg[:-4] + ".png", "rb").read(8) == b"\x89PNG\r\n\x1a\n", svg
    # run without --calibrate: the report says so plainly
    assert "## Client margin" in md and "this run has no calibration proof" in flat(md)
    assert rep["calibration"]["present"] is False
    # the series charted is each runtime's lowest-rate uncontrolled point per route
    for rt in plan["runtimes"]:
        for route in plan["routes"]:
            unc = sorted((p["rate"], p["id"]) for p in plan["points"] if p["runtime"] == rt and
                         p["route"] == route and
                         own_uncontrolled(load(f"{run}/points/{p['id']}/verdict.json")))
            got = [s for s in rep["first_uncontrolled_series"] if s["runtime"] == rt and
                   s["route"] == route]
            assert [(s["requested_rps"], s["point"]) for s in got] == unc[:1], (rt, route, got)


@test
def report_shows_margin_and_queue():
    """The report on a copy of the run given a calibrate.json (margin between the two rates,
    not proven) and one point made uncontrolled (its delivery, with and without the client's
    own delay, halved in load.json and in
    verdict.json's copy, so that the verdict the report re-derives from the raw files is the
    one stored), since this small run's rates seldom form a queue: the Client margin
    section, and the latency-over-time chart drawn from that point's real series.csv."""
    run = os.path.join(TMP, "proof")
    shutil.copytree(main_run(), run)
    plan = load(f"{run}/plan.json")
    lo, hi = min(plan["rates"]), max(plan["rates"])
    os.makedirs(f"{run}/calibrate")
    step = {"rate": hi * 1.25, "achieved_rps": hi * 1.2, "delivery": 0.96,
            "client_cpu_fraction": 0.9, "lag_p99_us": 5000.0, "corrected_p99_us": 9000.0,
            "errors": 0, "held": False, "why": "client CPU 90 % > 80 %"}
    with open(f"{run}/calibrate/calibrate.json", "w") as f:
        json.dump({"calibrate_version": 1, "route": "plaintext", "up_to_rps": hi, "factor": 1.25,
                   "required_rps": hi * 1.25, "margin_rps": hi, "proven": False,
                   "server_cpus": "0", "client_cpus": "1", "duration_s": 3.0,
                   "criteria": {"client_cpu_max_fraction": 0.8, "lag_p99_max_us": 1000.0,
                                "min_delivery": 0.995, "errors_max": 0},
                   "steps": [dict(step, rate=hi, held=True, why="")] + [step],
                   "complete": True}, f)
    pt = [p for p in plan["points"] if p["runtime"] == "go" and p["route"] == "plaintext" and
          p["rate"] == lo][0]
    vpath, lpath = (f"{run}/points/{pt['id']}/{f}" for f in ("verdict.json", "load.json"))
    v, lj = load(vpath), load(lpath)
    lj["delivery"] /= 2
    lj["delivery_less_client"] /= 2      # the server's doing: with or without the client
    v["load"] = lj
    v["verdict"] = "uncontrolled" if v["client_trust"]["ok"] else v["verdict"]
    v["server_verdict"] = "uncontrolled"
    for path, doc in ((vpath, v), (lpath, lj)):
        with open(path, "w") as f:
            json.dump(doc, f)
    rows = open(f"{run}/points/{pt['id']}/series.csv").read().splitlines()
    assert rows[0].startswith("start_s,") and len(rows) >= 2, rows
    r = report(run)
    assert r.returncode == 0, r.stderr
    md = open(f"{run}/report.md").read()
    rep = load(f"{run}/report.json")
    assert "- proven: **no**" in md and \
        f"Covered: {lo} req/s. Not covered: {hi} req/s" in flat(md), md
    cal = rep["calibration"]
    assert cal["present"] and cal["rates_covered_rps"] == [lo]
    assert cal["rates_not_covered_rps"] == [hi]
    assert len(cal["steps"]) == 2 and cal["margin_rps"] == hi
    # calibrate.json's criteria under report.json's names, each with its unit
    assert cal["criteria"] == {"client_cpu_max_fraction": 0.8, "lag_p99_max_us": 1000.0,
                               "min_delivery_fraction": 0.995, "errors_max_count": 0}, cal
    s = [x for x in rep["first_uncontrolled_series"] if x["runtime"] == "go" and
         x["route"] == "plaintext"]
    # a last slice under 0.1 s (the load's final interval cut short) is not drawn as a second
    sliver = 0 < float(rows[-1].split(",")[1]) < 0.1
    assert len(s) == 1 and s[0]["point"] == pt["id"] and \
        s[0]["seconds_count"] == len(rows) - 1 - sliver, (s, rows[-1])
    assert "(charts/series-go-plaintext.svg)" in md
    svg = open(f"{run}/{s[0]['chart']}").read()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert f"go plaintext at {lo} req/s: corrected latency per second" in svg
    assert "first uncontrolled point" in svg
    assert f"{CRIT['max_p99_us'] / 1000:g} ms: controlled limit" in svg


@test
def report_refuses_incomplete_run():
    src = main_run()
    run = os.path.join(TMP, "incomplete")
    shutil.copytree(src, run)
    gone = load(f"{run}/plan.json")["points"][3]["id"]
    os.unlink(f"{run}/points/{gone}/DONE")
    r = report(run)
    assert r.returncode == 1 and gone in r.stderr and "refusing" in r.stderr, r.stderr
    r = report(run, "--partial")
    assert r.returncode == 0, r.stderr
    md = open(f"{run}/report.md").read()
    assert "PARTIAL" in md and gone in md
    assert load(f"{run}/report.json")["partial"] is True


@test
def changed_plan_refused():
    run = main_run()
    r = curve(run, "--runtimes", f"go,{SECOND}", "--rates", "500,2000")
    assert r.returncode == 2 and "different plan" in r.stderr, r.stderr


@test
def fixture_killed_mid_point():
    need_root()
    run = os.path.join(TMP, "fault")
    p = subprocess.Popen([KB, "curve", "--run", run, "--runtimes", "go", "--routes", "plaintext",
                          "--rates", "200,300", "--duration", "2", "--warmup", "0.5", "--drain",
                          "0.5", "--free-ports", "--build", BUILD], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = f"{run}/points/go-plaintext-200"
    deadline = time.monotonic() + 30
    while not os.path.exists(f"{first}/command.json") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)   # inside the measured interval
    lim = load(f"{run}/fixtures/go/limits.json")
    procs = [x for x in lim["paths"].split() if "/pids/" in x or x.count("/") == 4]
    killed = []
    for pid in open(f"{procs[0]}/cgroup.procs").read().split():
        os.kill(int(pid), signal.SIGKILL)   # the fixture this test's curve started
        killed.append(pid)
    assert killed
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, out + err
    v1 = load(f"{first}/verdict.json")
    assert v1["verdict"] == "failed" and v1["reason"].startswith("process exited"), v1["reason"]
    v2 = load(f"{run}/points/go-plaintext-300/verdict.json")
    assert v2["verdict"] != "failed", v2["reason"]   # restarted for the next point
    assert load(f"{run}/fixtures/go/preflight.json")["failed"] is False


@test
def interrupted_run_resumes():
    need_root()
    run = os.path.join(TMP, "resume")
    args = [KB, "curve", "--run", run, "--runtimes", "go", "--routes", "plaintext,json",
            "--rates", "200,300", *SHORT]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not glob.glob(f"{run}/points/*/DONE") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    lim = load(f"{run}/fixtures/go/limits.json")
    pidsdir = [x for x in lim["paths"].split() if "/pids/" in x or x.count("/") == 4][0]
    fixture_pids = [int(x) for x in open(f"{pidsdir}/cgroup.procs").read().split()]
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130, (p.returncode, out, err)
    done = glob.glob(f"{run}/points/*/DONE")
    assert 1 <= len(done) < 4, done
    assert not cgroups_of(p.pid), cgroups_of(p.pid)
    for pid in fixture_pids:
        assert not os.path.exists(f"/proc/{pid}") or \
            open(f"/proc/{pid}/stat").read().split()[2] == "Z", f"fixture {pid} survived"
    r = report(run)
    assert r.returncode == 1   # incomplete until resumed
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("(kept)") == len(done), r.stdout
    assert len(glob.glob(f"{run}/points/*/DONE")) == 4
    assert report(run).returncode == 0


@test
def evidence_write_failure_leaves_point_incomplete():
    """A point whose evidence cannot be written whole (here samples.csv: a directory planted
    at its name, refused as an output) gets no DONE but an incomplete.json naming the file;
    the run goes on, exits 1, and a re-run redoes that point alone."""
    need_root()
    run = os.path.join(TMP, "evidence")
    bad = f"{run}/points/go-plaintext-200"
    os.makedirs(f"{bad}/samples.csv/planted")
    args = ["--runtimes", "go", "--routes", "plaintext", "--rates", "200,300"]
    r = curve(run, *args)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "go-plaintext-200 incomplete" in r.stderr and "samples.csv" in r.stderr, r.stderr
    assert not os.path.exists(f"{bad}/DONE")
    inc = load(f"{bad}/incomplete.json")
    assert inc["file"] == "samples.csv" and "is a directory" in inc["reason"], inc
    assert os.path.exists(f"{run}/points/go-plaintext-300/DONE")
    assert report(run).returncode == 1   # the report sees the point missing
    shutil.rmtree(f"{bad}/samples.csv")
    r = curve(run, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("(kept)") == 1, r.stdout
    assert os.path.exists(f"{bad}/DONE") and not os.path.exists(f"{bad}/incomplete.json")
    assert os.path.isfile(f"{bad}/samples.csv")


@test
def evidence_that_cannot_be_recorded_is_not_claimed():
    """Issue 27: on a full disk the run said each incomplete point had "an incomplete.json
    saying why" when none could be written, and printed such points with a verdict. Here both
    samples.csv and incomplete.json have a directory planted at their names: the point is
    shown incomplete, and the summary says it has no incomplete.json either, and why."""
    need_root()
    run = os.path.join(TMP, "unrecorded")
    bad = f"{run}/points/go-plaintext-200"
    os.makedirs(f"{bad}/samples.csv/planted")
    os.makedirs(f"{bad}/incomplete.json/planted")
    r = curve(run, "--runtimes", "go", "--routes", "plaintext", "--rates", "200")
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    line = [x for x in r.stdout.splitlines() if "plaintext" in x and "200/s" in x]
    assert line and " incomplete " in line[0], r.stdout
    assert "each with an incomplete.json" not in r.stderr, r.stderr
    assert "1 of them without an incomplete.json either" in r.stderr, r.stderr
    assert "no incomplete.json either" in r.stderr, r.stderr
    assert not os.path.exists(f"{bad}/DONE")


@test
def no_limits_marks_unconstrained():
    need(KB)
    run = os.path.join(TMP, "nolimits")
    r = curve(run, "--no-limits", "--runtimes", "go", "--routes", "plaintext", "--rates", "200")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "UNCONSTRAINED" in r.stdout
    assert load(f"{run}/fixtures/go/limits.json")["cgroup_version"] == 0
    assert load(f"{run}/points/go-plaintext-200/verdict.json")["unconstrained"] is True
    assert report(run).returncode == 0
    assert "UNCONSTRAINED" in open(f"{run}/report.md").read()


@test
def changed_identity_fails_points():
    need_root()
    src = os.path.join(TMP, "tiny-src")
    os.makedirs(src)
    shutil.copy(os.path.join(HERE, "tiny_server.py"), src)
    contract = json.loads(json.dumps(CONTRACT))
    cpath = os.path.join(TMP, "tiny-contract.json")
    contract["runtimes"] = [{
        "name": "tiny", "port": 1,
        "command": ["python3", f"{src}/tiny_server.py", "--port", "{port}", "--bind", "{bind}",
                    "--contract", cpath],
        "version": ["python3", "--version"], "sources": [src], "executables": ["python3"]}]
    json.dump(contract, open(cpath, "w"))
    run = os.path.join(TMP, "identity")
    p = subprocess.Popen([KB, "curve", "--run", run, "--contract", cpath, "--routes", "plaintext",
                          "--rates", "20,30,40", *SHORT], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not glob.glob(f"{run}/points/*/DONE") and time.monotonic() < deadline:
        time.sleep(0.05)
    with open(f"{src}/tiny_server.py", "a") as f:
        f.write("# edited while the curve runs\n")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, out + err
    v = [load(f"{run}/points/tiny-plaintext-{r}/verdict.json") for r in (20, 30, 40)]
    assert v[0]["verdict"] != "failed", v[0]["reason"]
    assert v[2]["verdict"] == "failed" and "changed fixture identity" in v[2]["reason"], v[2]
    # a resumed run with the edited source is refused point by point, not silently mixed
    os.unlink(f"{run}/points/tiny-plaintext-40/DONE")
    r = subprocess.run([KB, "curve", "--run", run, "--contract", cpath, "--routes", "plaintext",
                        "--rates", "20,30,40", *SHORT], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    v = load(f"{run}/points/tiny-plaintext-40/verdict.json")
    assert v["verdict"] == "failed" and "changed fixture identity" in v["reason"], v


@test
def repeats_rotate_and_report_ranges():
    need_root()
    run = os.path.join(TMP, "repeats")
    r = curve(run, "--repeats", "2", "--runtimes", f"go,{SECOND}", "--routes", "json",
              "--rates", "200")
    assert r.returncode == 0, r.stdout + r.stderr
    order = [p["id"] for p in load(f"{run}/plan.json")["points"]]
    assert order == [f"go-json-200-r1", f"{SECOND}-json-200-r1", f"{SECOND}-json-200-r2",
                     f"go-json-200-r2"], order
    for rt in ("go", SECOND):
        for k in (1, 2):
            assert os.path.exists(f"{run}/fixtures/{rt}-r{k}/limits.json")
    assert report(run).returncode == 0
    rows = load(f"{run}/report.json")["rows"]
    assert all(x["repeats_count"] == 2 for x in rows), rows
    assert sorted(x["point_id"] for x in rows) == ["go-json-200", f"{SECOND}-json-200"]
    assert all(sorted(x["point_ids"]) == [f"{x['point_id']}-r1", f"{x['point_id']}-r2"]
               for x in rows), rows
    for x in rows:
        a = x["achieved_rps"]
        assert a["min"] <= a["median"] <= a["max"], a
    assert "the runtimes' order rotated between them" in flat(open(f"{run}/report.md").read())


@test
def confirmation_samples_each_boundary_and_the_report_counts_them():
    """--confirm 3: after the matrix, the boundary of go's plaintext curve (its highest
    controlled rate and the next) gets samples until the median of three is decided at each
    rate (two samples that agree decide it), listed in confirm.json, kept as ordinary points
    and aggregated into their rows; a re-run keeps them and adds none."""
    need_root()
    run = os.path.join(TMP, "confirm")
    args = ["--runtimes", "go", "--routes", "plaintext", "--rates", "100,200", "--confirm", "3"]
    r = curve(run, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "confirming the boundaries, round 1" in r.stdout, r.stdout
    cf = load(f"{run}/confirm.json")
    assert cf["samples"] == 3 and cf["schema_version"] == 1, cf
    ids = [p["id"] for p in cf["points"]]
    assert ids and all(re.fullmatch(r"go-plaintext-(100|200)-c[23]", i) for i in ids), ids
    for p in cf["points"]:
        assert os.path.exists(f"{run}/points/{p['id']}/DONE"), p
        assert load(f"{run}/points/{p['id']}/verdict.json")["rate"] == p["rate"]
    assert load(f"{run}/plan.json")["confirm_samples"] == 3
    rep = report(run)
    assert rep.returncode == 0, rep.stderr
    rows = {w["requested_rps"]: w for w in load(f"{run}/report.json")["rows"]}
    for rate in (100, 200):
        want = 1 + sum(1 for p in cf["points"] if p["rate"] == rate)
        assert rows[rate]["repeats_count"] == want, (rate, rows[rate]["repeats_count"], want)
    # each rate of the boundary as it now stands has two samples that agree, or three, or
    # up to five where the client could still decide it after three
    md = open(f"{run}/report.md").read()
    assert "How each cell was confirmed" in md, md
    line = re.search(r"^- go plaintext: (.*)$", md, re.M).group(1)
    counts = re.findall(r"(\d+)/(\d+) \(p99", line)
    assert counts, line
    for held, n in counts:
        assert n in "2345" and (n != "2" or held in "02"), line
    again = curve(run, *args)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "confirming" not in again.stdout, again.stdout
    assert load(f"{run}/confirm.json")["points"] == cf["points"]


@test
def a_fixture_started_above_its_lowest_rate_is_primed_first():
    """The matrix climbs from each route's lowest rate and primes nothing. A start whose
    first point is higher (here a resumed run whose 200 point was left to redo) first drives
    every planned route at its lowest rate, unmeasured, and keeps that load's outputs; the
    point itself is measured after it, as its first sample was."""
    need_root()
    run = os.path.join(TMP, "primed")
    args = ["--runtimes", "go", "--routes", "plaintext,json", "--rates", "100,200",
            "--confirm", "1"]
    r = curve(run, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not glob.glob(f"{run}/fixtures/go/primed-for-*"), os.listdir(f"{run}/fixtures/go")
    os.unlink(f"{run}/points/go-json-200/DONE")
    r = curve(run, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    d = f"{run}/fixtures/go/primed-for-go-json-200"
    primed = load(f"{d}/primed.json")
    assert primed["point"] == "go-json-200", primed
    assert [(p["route"], p["rate"], p["load_exit"]) for p in primed["routes"]] == \
        [("plaintext", 100, 0), ("json", 100, 0)], primed
    for route in ("plaintext", "json"):
        lj = load(f"{d}/{route}/load.json")
        assert lj["route"] == route and lj["requested_rps"] == 100, lj
        assert lj["completed"] > 0 and lj["warmup_s"] == 0, lj
        assert os.path.getmtime(f"{d}/{route}/load.json") <= \
            os.path.getmtime(f"{run}/points/go-json-200/command.json")
    assert os.path.exists(f"{run}/points/go-json-200/DONE")


def boundary_ids(run):
    """Each runtime-route's boundary as the curve reads it (its highest controlled rate and
    the next planned one; the lowest when none held), from plan.json and the verdicts: the
    ids of every point at those rates."""
    pts, ids = load(f"{run}/plan.json")["points"], set()
    for key in {(p["runtime"], p["route"]) for p in pts}:
        mine = sorted((p for p in pts if (p["runtime"], p["route"]) == key),
                      key=lambda p: p["rate"])
        rates = sorted({p["rate"] for p in mine})
        held = [p["rate"] for p in mine
                if load(f"{run}/points/{p['id']}/verdict.json")["verdict"] == "controlled"]
        top = max(held) if held else None
        above = [r for r in rates if top is None or r > top][:1]
        keep = set(above) | ({top} if top else set())
        ids |= {p["id"] for p in mine if p["rate"] in keep}
    return ids


@test
def requests_logs_kept_at_each_boundary():
    """The default --requests-log knee: every point recorded its requests, and once the run
    was complete only each runtime-route's boundary points kept them; requests-logs.json says
    which, with their sizes, and each kept log has one line per measured request."""
    run = main_run()
    rec = load(f"{run}/requests-logs.json")
    want = boundary_ids(run)
    have = {os.path.basename(os.path.dirname(p)) for p in glob.glob(f"{run}/points/*/requests.log")}
    assert rec["mode"] == "knee" and have == want, (have, want)
    assert {k["point"] for k in rec["kept"]} == want
    assert {k["point"] for k in rec["removed"]} == \
        {p["id"] for p in load(f"{run}/plan.json")["points"]} - want
    for k in rec["kept"]:
        path = f"{run}/points/{k['point']}/requests.log"
        lj = load(f"{run}/points/{k['point']}/load.json")
        lines = open(path).read().splitlines()
        assert os.path.getsize(path) == k["bytes"]
        assert lines[0].startswith("# kneebench requests log") and lines[1].startswith("#")
        assert len(lines) - 2 == lj["requests_logged"] == lj["scheduled"], (k, len(lines))
        assert lj["requests_log_max"] == rec["records_max_per_point"]
        for line in lines[2:]:
            intended, _, received, _, latency, _ = line.split()
            assert latency == "-" or int(received) - int(intended) == int(latency), line
    assert sum(k["bytes"] for k in rec["kept"]) == rec["bytes_kept"]


@test
def requests_log_all_and_none():
    need_root()
    for mode in ("all", "none"):
        run = os.path.join(TMP, f"reqlog-{mode}")
        r = curve(run, "--runtimes", "go", "--routes", "plaintext", "--rates", "100,200",
                  "--requests-log", mode)
        assert r.returncode == 0, r.stdout + r.stderr
        logs = glob.glob(f"{run}/points/*/requests.log")
        assert len(logs) == (2 if mode == "all" else 0), logs
        assert os.path.exists(f"{run}/requests-logs.json") == (mode == "all")
        for p in load(f"{run}/plan.json")["points"]:
            lj = load(f"{run}/points/{p['id']}/load.json")
            assert (lj["requests_log"] is None) == (mode == "none"), lj["requests_log"]
    r = curve(os.path.join(TMP, "reqlog-bad"), "--requests-log", "sometimes")
    assert r.returncode == 2 and "--requests-log" in r.stderr, r.stderr


@test
def db_route_runs_with_its_cluster():
    need_root()
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        skip("PostgreSQL server binaries are not installed")
    need(os.path.join(BUILD, "gray-static"))
    run = os.path.join(TMP, "db")
    r = curve(run, "--runtimes", "go,gray-static", "--routes", "json,db", "--rates", "100",
              "--db-mode", "both")
    assert r.returncode == 0, r.stdout + r.stderr
    ids = [p["id"] for p in load(f"{run}/plan.json")["points"]]
    # both /db designs, the blocking one on /db alone
    assert ids == ["go-json-100", "gray-static-json-100", "gray-static-db-100",
                   "gray-static-blocking-db-100"], ids
    for rt, mode in (("gray-static", "readiness"), ("gray-static-blocking", "blocking")):
        pre = load(f"{run}/fixtures/{rt}/preflight.json")
        assert pre.get("db", {}).get("ok") is True, pre
        assert ("json" in pre) == (rt == "gray-static"), pre     # the variant runs /db only
        assert f" db={mode}" in open(f"{run}/fixtures/{rt}/fixture.log").read(), rt
        v = load(f"{run}/points/{rt}-db-100/verdict.json")
        assert v["verdict"] != "failed", v["reason"]
        assert v["load"]["mismatches"]["total"] == 0 and v["load"]["completed"] > 0
    # the db route's PostgreSQL is part of the run's identity
    assert "PostgreSQL" in load(f"{run}/run.json")["runtime_versions"]["postgresql"]
    # the cluster went with the fixture
    pg = f"{run}/fixtures/gray-static/pg"
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert pg not in out, [l for l in out.splitlines() if pg in l]
    assert report(run).returncode == 0
    # go serves no db route: its db cell is n/a whatever its json point's verdict was
    assert re.search(r"^\| \d+ \| go \| [^|]+ \| n/a \|", open(f"{run}/report.md").read(), re.M)


# ---- kill -9 of a curve, then an immediate resume ------------------------------------------
# The go fixture on a fixed port of its own (--free-ports would give the resumed run another
# port and hide a leftover), two points, short: what a runner killed with -9 leaves (its
# load child, its fixture, their cgroups) must not touch the resumed run's verdicts. The
# killed runner is reaped only after the resume, as under a parent that does not wait.
KILL_ARGS = ["--routes", "plaintext", "--rates", "100,200", "--duration", "1.5", "--warmup",
             "0.5", "--drain", "0.5", "--build", BUILD]


def free_port():
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


def go_contract(tag, command=None):
    """The contract with go alone, on a free fixed port, its command optionally wrapped."""
    c = json.loads(json.dumps(CONTRACT))
    go = [r for r in c["runtimes"] if r["name"] == "go"][0]
    go["port"] = free_port()
    if command:
        go["command"] = command
    c["runtimes"] = [go]
    path = os.path.join(TMP, f"contract-{tag}.json")
    with open(path, "w") as f:
        json.dump(c, f)
    return path, go["port"]


def stat_of(pid):
    """(state, ppid) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return rest[0], int(rest[1])
    except (OSError, IndexError):
        return None


def running(pid):
    st = stat_of(pid)
    return st is not None and st[0] not in "ZX"


def gone_within(pid, seconds):
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running(pid)


def child_running(parent, word, seconds=30):
    """The PID of a child of parent whose command line has word, once there is one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for d in os.listdir("/proc"):
            st = d.isdigit() and stat_of(int(d))
            if st and st[1] == parent:
                try:
                    argv = open(f"/proc/{d}/cmdline").read().split("\0")
                except OSError:
                    continue
                if word in argv:
                    return int(d)
        time.sleep(0.02)
    raise AssertionError(f"no child of {parent} running {word}")


def verdicts(run):
    return {p["id"]: load(f"{run}/points/{p['id']}/verdict.json")["verdict"]
            for p in load(f"{run}/plan.json")["points"]}


_baseline = {}


def baseline(*extra):
    """The verdicts of the same two points run without interruption."""
    key = " ".join(extra)
    if key not in _baseline:
        cpath, _ = go_contract(f"baseline{len(_baseline)}")
        run = os.path.join(TMP, f"baseline{len(_baseline)}")
        r = subprocess.run([KB, "curve", "--run", run, "--contract", cpath, *KILL_ARGS, *extra],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        _baseline[key] = verdicts(run)
        assert all(v != "failed" for v in _baseline[key].values()), _baseline[key]
    return _baseline[key]


def kill9_then_resume(tag, when, command=None, extra=()):
    """Start the curve, kill -9 it once when(curve) returns, resume at once; the resumed
    run's verdicts and the killed runner's PID."""
    cpath, port = go_contract(tag, command)
    run = os.path.join(TMP, tag)
    args = [KB, "curve", "--run", run, "--contract", cpath, *KILL_ARGS, *extra]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        when(p)
    finally:
        p.kill()
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    p.wait()
    assert r.returncode == 0, r.stdout + r.stderr
    assert not glob.glob(f"{run}/points/*/*.tmp*"), glob.glob(f"{run}/points/*/*.tmp*")
    return verdicts(run), p.pid, r


def differences(got, want):
    """The points whose verdicts differ, leaving out those either run marked client-limited:
    there the client, not the server, was measured (a shared host's stall of the load
    thread), and the verdict says so; a fault of the harness (a leftover answering, an old
    load still driving, "process exited") fails a point, which is always compared."""
    return {p: (got[p], want[p]) for p in want
            if got.get(p) != want[p] and "client-limited" not in (got.get(p), want[p])}


def same_verdicts_after_kill9(tag, when, command=None, extra=()):
    """kill9_then_resume, compared with an uninterrupted run. A stall of a shared host can
    still tip a point of either run (uncontrolled), so a difference with no failed point is
    tried once more, against a fresh uninterrupted run too."""
    for attempt in (1, 2):
        if attempt == 2:
            _baseline.pop(" ".join(extra), None)
        want = baseline(*extra)
        got, pid, r = kill9_then_resume(f"{tag}-{attempt}", when, command, extra)
        assert not cgroups_of(pid), cgroups_of(pid)
        diff = differences(got, want)
        if not diff or "failed" in got.values():
            break
    run = os.path.join(TMP, f"{tag}-{attempt}")
    assert not diff, (diff, {p: load(f"{run}/points/{p}/verdict.json")["reason"] for p in diff})
    assert any(v != "client-limited" for v in got.values()), got
    return r


def in_the_load(p):
    """Mid-way through the first point's load; the load child must die with the runner."""
    loader = child_running(p.pid, "load")
    time.sleep(0.8)                 # warmup 0.5 s: inside the measured interval
    assert running(loader)
    p.kill()
    assert gone_within(loader, 1.0), "the load child outlived its runner"


@test
def kill9_mid_load_then_resume_gives_the_same_verdicts():
    need_root()
    same_verdicts_after_kill9("kill9-load", in_the_load)


@test
def kill9_mid_fixture_start_then_resume_gives_the_same_verdicts():
    """A fixture slow to start (1.5 s before it listens): the runner dies while it waits."""
    need_root()

    def in_the_start(p):
        sh = child_running(p.pid, "sh")
        time.sleep(0.5)
        assert running(sh)
        p.kill()
        assert gone_within(sh, 1.0), "the starting fixture outlived its runner"
    slow = ["sh", "-c", "sleep 1.5; exec {build}/go-server --port {port} --bind {bind}"]
    same_verdicts_after_kill9("kill9-start", in_the_start, slow)


@test
def kill9_unconstrained_then_resume_sweeps_what_was_left():
    """--no-limits: no cgroup holds the fixture. Its server is a child of sh, which the
    parent-death signal does not reach: the resumed run must find and stop it."""
    need(KB)
    wrapped = ["sh", "-c", "{build}/go-server --port {port} --bind {bind} & wait"]
    # sequential: the first load child is then the point's, not the floor's, and the runner
    # dies with the fixture up
    r = same_verdicts_after_kill9("kill9-nolimits", in_the_load, wrapped,
                                  ["--no-limits", "--order", "sequential"])
    assert "stopped unconstrained fixtures left by an earlier run" in r.stderr, r.stderr


@test
def a_session_record_that_proves_nothing_kills_nothing():
    """Issue 27's repro: a session record the runner cannot prove (the first version's,
    naming a process of another session with another start time, as a reboot, a copied run
    directory or another user leaves it) must not make a curve kill that session; the run
    names it and leaves it."""
    need_root()
    run = os.path.join(TMP, "planted-session")
    os.makedirs(f"{run}/fixtures/go")
    bystander = subprocess.Popen(["setsid", "sleep", "300"])
    try:
        with open(f"{run}/fixtures/go/.kneebench-session", "w") as f:
            f.write(f"999999 0 {bystander.pid} 1\n")
        r = curve(run, "--runtimes", "go", "--routes", "plaintext", "--rates", "100")
        assert r.returncode == 0, r.stdout + r.stderr
        assert bystander.poll() is None, "the curve killed a session it never started"
        assert f"running: pid {bystander.pid}" in r.stderr, r.stderr
    finally:
        bystander.kill()
        bystander.wait()


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def need_setpriv():
    need_root()
    if not shutil.which("setpriv"):
        skip("needs setpriv to act as another user")


def as_nobody(script):
    """What an unprivileged local user could do: script run as nobody."""
    r = subprocess.run([*NOBODY, "sh", "-c", script], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr


def roots_file(name):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write("root's own\n")
    return path


def unchanged(path):
    with open(path) as f:
        return f.read() == "root's own\n"


@test
def a_run_directory_another_user_could_write_is_refused():
    """Issue 27's repro: user nobody makes the run directory a root curve is about to use
    (docs/usage.md's own `--run /tmp/q`) with php.ini.tmp a link to a file of root's. The run
    is refused before anything is written there; so is a directory of root's that anyone
    may write; and a fixture directory nobody made inside root's own run directory is a
    harness error (no point judged, exit 1), its fixture never started."""
    need_setpriv()
    victim = roots_file("victim-rundir")
    home = os.path.join(TMP, "nobody-home")
    os.makedirs(home)
    os.chown(home, 65534, 65534)
    q = os.path.join(home, "q")
    as_nobody(f"mkdir -p {q}/fixtures/php-fpm && ln -s {victim} {q}/fixtures/php-fpm/php.ini.tmp")
    args = ["--runtimes", "php-fpm", "--routes", "plaintext", "--rates", "100"]
    r = curve(q, *args)
    assert r.returncode == 2 and "owned by uid 65534" in r.stderr, (r.returncode, r.stderr)
    assert unchanged(victim) and not os.path.exists(f"{q}/plan.json")

    shared = os.path.join(TMP, "shared-run")
    os.makedirs(shared)
    os.chmod(shared, 0o777)
    r = curve(shared, *args)
    assert r.returncode == 2 and "mode 0777" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(f"{shared}/plan.json")

    own = os.path.join(TMP, "own-run")
    os.makedirs(f"{own}/fixtures")
    os.chmod(own, 0o755)
    os.makedirs(f"{own}/fixtures/go")
    os.chown(f"{own}/fixtures/go", 65534, 65534)
    r = curve(own, "--runtimes", "go", "--routes", "plaintext", "--rates", "100")
    assert r.returncode == 1 and "owned by uid 65534" in r.stderr, (r.returncode, r.stderr)
    assert not glob.glob(f"{own}/points/*/DONE"), glob.glob(f"{own}/points/*/*")


@test
def php_fpm_renders_its_configs_without_following_links():
    """php-fpm/run.sh, as root, into a directory of root's holding links to root's files
    where it writes (php.ini.tmp, the old temporary name, and nginx.conf itself): no file
    is written through a link; a directory of another user's is refused."""
    need_setpriv()
    if not shutil.which("nginx") or not glob.glob("/usr/sbin/php-fpm*"):
        skip("nginx or php-fpm is not installed")
    tmp_victim, conf_victim = roots_file("victim-tmp"), roots_file("victim-conf")
    d = os.path.join(TMP, "fpm-links")
    os.makedirs(d)
    os.symlink(tmp_victim, f"{d}/php.ini.tmp")
    os.symlink(conf_victim, f"{d}/nginx.conf")
    port = free_port()
    p = subprocess.Popen([os.path.join(ROOT, "php-fpm", "run.sh"), "--port", str(port),
                          "--dir", d], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and p.poll() is None:
            with socket.socket() as sk:
                if sk.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
    finally:
        p.send_signal(signal.SIGTERM)
        out = p.communicate(timeout=20)[0]
    assert unchanged(tmp_victim), "run.sh wrote through php.ini.tmp"
    assert unchanged(conf_victim), "run.sh wrote through nginx.conf"
    assert not os.path.islink(f"{d}/nginx.conf") and os.path.isfile(f"{d}/nginx.conf"), out
    assert p.returncode == 0, out

    theirs = os.path.join(TMP, "fpm-theirs")
    os.makedirs(theirs)
    os.chown(theirs, 65534, 65534)
    r = subprocess.run([os.path.join(ROOT, "php-fpm", "run.sh"), "--port", str(port), "--dir",
                        theirs], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "must be a directory" in r.stderr, (r.returncode, r.stderr)
    assert os.listdir(theirs) == [], os.listdir(theirs)


@test
def port_held_by_another_process_is_a_harness_error():
    """A process that is not the fixture holds its port and answers the contract's bytes
    (an old fixture would): no point is charged to the fixture, none is marked done, the
    run says why; once the port is free a re-run does them."""
    need(KB)
    cpath, port = go_contract("held")
    run = os.path.join(TMP, "held")
    holder = subprocess.Popen([sys.executable, os.path.join(HERE, "tiny_server.py"), "--port",
                               str(port), "--bind", "127.0.0.1", "--contract", cpath])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as sk:
                if sk.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        args = [KB, "curve", "--run", run, "--contract", cpath, "--no-limits", *KILL_ARGS]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert f"held by pid {holder.pid}" in r.stderr and "left to redo" in r.stderr, r.stderr
        assert not glob.glob(f"{run}/points/*/DONE"), glob.glob(f"{run}/points/*/DONE")
        assert not glob.glob(f"{run}/points/*/verdict.json")
        pre = load(f"{run}/fixtures/go/preflight.json")
        assert pre["harness_error"] is True and pre["failed"] is False, pre
        assert f"pid {holder.pid}" in pre["reason"], pre
    finally:
        holder.kill()
        holder.wait()
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(v != "failed" for v in verdicts(run).values()), verdicts(run)


@test
def port_bound_without_listening_is_a_harness_error():
    """Issue 27: a socket bound to the fixture's port but not listening made the fixture's
    bind fail, and the point was judged "failed: the process exited before accepting",
    marked DONE, kept for ever. It is the harness's fault: no point judged, exit 1."""
    need(KB)
    cpath, port = go_contract("bound")
    run = os.path.join(TMP, "bound")
    holder = socket.socket()
    holder.bind(("127.0.0.1", port))
    try:
        args = [KB, "curve", "--run", run, "--contract", cpath, "--no-limits", *KILL_ARGS]
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert "does not listen" in r.stderr and "left to redo" in r.stderr, r.stderr
        assert not glob.glob(f"{run}/points/*/DONE"), glob.glob(f"{run}/points/*/DONE")
        assert load(f"{run}/fixtures/go/preflight.json")["harness_error"] is True
    finally:
        holder.close()
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


@test
def unconstrained_php_fpm_sampled_whole_and_pinned():
    """--no-limits: nginx and php-fpm start sessions of their own under run.sh; every one of
    their processes is sampled, and the fixture is pinned to the server CPUs."""
    need(KB)
    if not shutil.which("nginx") or not glob.glob("/usr/sbin/php-fpm*"):
        skip("nginx or php-fpm is not installed")
    run = os.path.join(TMP, "fpm-nolimits")
    r = curve(run, "--no-limits", "--runtimes", "php-fpm", "--routes", "plaintext",
              "--rates", "100")
    assert r.returncode == 0, r.stdout + r.stderr
    v = load(f"{run}/points/php-fpm-plaintext-100/verdict.json")
    # run.sh, the FPM master and its 16 children, nginx's master and worker
    assert v["server"]["procs_max"] >= 18, v["server"]
    rows = open(f"{run}/points/php-fpm-plaintext-100/samples.csv").read().splitlines()[1:]
    assert rows and all(int(x.split(",")[7]) >= 18 for x in rows), rows
    assert load(f"{run}/fixtures/php-fpm/limits.json")["cpuset"] == LIMITS["server_cpus"]


@test
def bad_numbers_refused_before_anything_runs():
    """A negative or zero duration, connection, thread or repeat count is refused (exit 2)
    rather than quietly replaced by the profile's value; soak's parser refuses the same."""
    need(KB)
    run = os.path.join(TMP, "badnum")
    # no fixture could start from this build directory: a runner that accepted the numbers
    # fails fast instead of running a paper-profile point
    nobuild = ["--profile", "quick", "--build", os.path.join(TMP, "no-build")]
    cases = [["--duration", "-5"], ["--duration", "0"], ["--duration", "abc"],
             ["--duration", "inf"], ["--warmup", "-1"], ["--drain", "-0.5"],
             ["--connections", "-4"], ["--connections", "0"], ["--threads", "0"],
             ["--threads", "2.5"], ["--threads", "-1"], ["--repeats", "0"],
             ["--repeats", "-2"], ["--repeats", "3x"], ["--threads", "8", "--connections", "4"]]
    for extra in cases:
        r = subprocess.run([KB, "curve", "--run", run, "--no-limits", "--runtimes", "go",
                            "--routes", "plaintext", "--rates", "100", *nobuild, *extra],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (extra, r.returncode, r.stdout, r.stderr)
        assert extra[0].lstrip("-") in r.stderr, (extra, r.stderr)
        assert not os.path.exists(run), extra
    for extra in (["--duration", "-5"], ["--threads", "0"], ["--connections", "-4"]):
        r = subprocess.run([KB, "soak", "--out", run, "--no-limits", "--build", nobuild[3],
                            *extra],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (extra, r.returncode, r.stderr)
        assert not os.path.exists(run), extra


@test
def refuses_without_root():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        skip("needs root to drop to an unprivileged user with setpriv")
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KB,
                        "curve", "--run", os.path.join(TMP, "unprivileged"), "--profile", "quick"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--no-limits" in r.stderr, (r.returncode, r.stderr)
    assert not os.path.exists(os.path.join(TMP, "unprivileged"))


if __name__ == "__main__":
    try:
        exit_with("curve-e2e", sys.argv[1:] or None)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
