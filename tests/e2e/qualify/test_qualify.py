"""test_qualify -- `kneebench qualify` end to end, shortened, on the real sandbox and a real
throwaway PostgreSQL cluster (the command starts and stops its own).

One short qualification (5 s of measured load at 1,000 req/s after a 3 s warmup, RSS and
descriptors sampled every 0.5 s from 5 s; /stats at the contract's interval) is run and its
directory examined: its verdict follows from its evidence (a pass, or a fail on a sampled RSS
rise alone); stats.jsonl holds every /stats read as a timestamped JSON line, at least the
contract's reads per second during the measured interval, and its final sample has every
gauge the contract names at zero; verdict.json's figures agree with an independent reading of
stats.jsonl, samples.csv and load.json; report.md and report.json set the contract's paper
figures, labelled as the paper's host, beside this run's; the cluster and cgroups are gone.
Bad options are refused before anything starts; an interrupted run keeps no marker and leaves
nothing running.

The host is shared with other load tests: the client's send-lag gate is relaxed to 50 ms
here (stated in the command), and a run that did not pass is tried again, up to three runs.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from kbenv import BUILD, CONTRACT, KB, need
from kbtest import exit_with, skip, test

QUAL = CONTRACT["qualification"]
HAVE_PG = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
# Zero growth is judged literally (no sample above the first). gray-static's heap still has a
# page first touched now and then in the first seconds of load (per-mapping Rss: the heap
# grew by 4 KiB steps early, then stayed flat over 20 s), so the samples start after 3 s of
# warmup and 2 s of settling; even so a 5 s run here sometimes shows one page. Such a fail is
# the rule working: the suite tries again and, failing that, accepts a fail whose only cause
# is that rise (verdict_follows_from_the_evidence).
RATE, DURATION, WARMUP, SETTLE, EVERY = 1000, 5, 3, 2, 0.5
SHORT = ["--rate", str(RATE), "--duration", str(DURATION), "--warmup", str(WARMUP),
         "--settle", str(SETTLE), "--sample-every", str(EVERY), "--client-lag-max-us", "50000"]

_run = {}


def unavailable(text):
    """The sandbox cannot run here (no root, no cgroup controllers): a skip, with why."""
    return "cgroup" in text or "root" in text or "controller" in text


def load_json(path):
    with open(path) as f:
        return json.load(f)


def the_run():
    """One qualification shared by the tests, tried again (up to three runs) when it did not
    pass: the shared host can starve it, and a heap page can appear (see SHORT)."""
    if _run:
        return _run
    need(KB)
    if not HAVE_PG:
        skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (make deps)")
    base = tempfile.mkdtemp(prefix="kb-qualify-", dir=BUILD)
    os.chmod(base, 0o755)   # the cluster's owner (postgres) must reach its directory
    for attempt in (1, 2, 3):
        out = os.path.join(base, f"run{attempt}")
        p = subprocess.run([KB, "qualify", "--out", out, "--build", BUILD] + SHORT,
                           capture_output=True, text=True, timeout=180)
        print(p.stdout, end="")
        if p.returncode == 2 and unavailable(p.stderr):
            shutil.rmtree(base, ignore_errors=True)
            skip(f"qualify cannot run here: {p.stderr.strip()}")
        _run.update(out=out, rc=p.returncode, stdout=p.stdout, stderr=p.stderr,
                    attempts=attempt, base=base)
        if p.returncode == 0:
            break
        print(f"attempt {attempt}: exit {p.returncode}; {p.stderr.strip()}")
    return _run


def stats_lines(out):
    with open(os.path.join(out, "stats.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def growth_only(v):
    """The verdict failed on RSS growth alone (one first-touched heap page now and then: see
    SHORT above); every other criterion held."""
    parts = [p for p in v["reason"].split("; ") if p]
    return v["verdict"] == "fail" and parts and all(p.startswith("RSS grew") for p in parts)


@test
def verdict_follows_from_the_evidence():
    r = the_run()
    out = r["out"]
    v = load_json(os.path.join(out, "verdict.json"))
    if v["verdict"] == "client-limited":
        skip(f"after {r['attempts']} runs the shared host still starved the client: "
             f"{v['reason']}")
    # a pass, or a fail whose only cause is a rise the samples show (growth_matches_the_samples
    # checks the figure); never a fail of delivery, latency, responses, /stats or gauges
    assert v["verdict"] == "pass" or growth_only(v), (r["rc"], v["verdict"], v["reason"])
    assert (v["verdict"] == "pass") == (v["rss_bytes"]["rise"] == 0 == v["fds"]["rise"]), v
    assert r["rc"] == (0 if v["verdict"] == "pass" else 1), (r["rc"], v["verdict"])
    if v["verdict"] != "pass":
        print(f"    the strict rule failed it: {v['reason']}")
    for f in ("plan.json", "run.json", "command.json", "load.json", "corrected.hgrm",
              "samples.csv", "stats.jsonl", "verdict.json", "report.md", "report.json", "DONE",
              "fixture/limits.json", "fixture/identity.json", "fixture/preflight.json"):
        assert os.path.isfile(os.path.join(out, f)), f
    assert not glob.glob(os.path.join(out, "*.tmp")), glob.glob(os.path.join(out, "*.tmp"))
    assert os.stat(os.path.join(out, "DONE")).st_mtime_ns >= \
        os.stat(os.path.join(out, "verdict.json")).st_mtime_ns
    load = v["load"]
    crit = CONTRACT["comparison"]["criteria"]
    assert load["delivery"] >= crit["min_delivery"], load
    assert load["corrected_us"]["p99"] < crit["max_p99_us"], load["corrected_us"]
    assert load["errors"]["total"] == 0 and load["non2xx"] == 0, load
    assert load["mismatches"]["total"] == 0, load["mismatches"]
    argv = load_json(os.path.join(out, "command.json"))["fixture_argv"]
    sock = open(os.path.join(out, "pg", "sockdir")).read().strip()
    assert f"host={sock} " in argv[argv.index("--db") + 1] and \
        (sock == f"{out}/pg/sock" or sock.startswith("/tmp/kb-pg.")), (sock, argv)
    assert argv[argv.index("--db-pool") + 1] == str(QUAL["db_pool"]), argv
    print(f"    ({r['attempts']} attempt(s)) {load['achieved_rps']:.1f}/s, "
          f"p99 {load['corrected_us']['p99'] / 1000:.2f} ms")


@test
def stats_sampled_densely_and_final_sample_at_zero():
    r = the_run()
    lines = stats_lines(r["out"])
    ts = [x["t_s"] for x in lines]
    assert ts == sorted(ts), "samples out of order"
    for x in lines:
        assert x["utc"].endswith("Z") and isinstance(x["ok"], bool), x
        assert ("stats" in x) == x["ok"], x
        # one kept connection: the reader does not move the descriptor count it samples
        assert x["conn"] == 1, x
    # the measured interval as the load generator timed it, on the samples' clock
    load = load_json(os.path.join(r["out"], "load.json"))
    st = load_json(os.path.join(r["out"], "verdict.json"))["stats"]
    t_from = load["interval_start_mono_s"] - st["origin_mono_s"]
    t_to = load["interval_end_mono_s"] - st["origin_mono_s"]
    assert WARMUP <= t_from < t_to and abs(t_to - t_from - DURATION) < 0.5, (t_from, t_to)
    measured = [x for x in lines if x["ok"] and t_from <= x["t_s"] <= t_to]
    per_s = len(measured) / (t_to - t_from)
    assert per_s >= QUAL["min_stats_per_s"] >= 10, (per_s, len(measured))
    # sampled during the load, not only around it: the server's own count of suspended
    # handlers moves at about the rate between the first and the last measured read (a
    # light load of sub-millisecond queries seldom has one suspended at the instant of a read,
    # so suspended_now alone cannot show it)
    first, last = measured[0]["stats"], measured[-1]["stats"]
    span = measured[-1]["t_s"] - measured[0]["t_s"]
    moved = last["suspended_total"] - first["suspended_total"]
    assert span > 0.8 * DURATION and moved >= 0.5 * RATE * span, (moved, span)
    final = lines[-1]
    assert final["ok"], final
    for g in QUAL["zero_gauges"]:
        assert final["stats"][g] == 0, (g, final["stats"])
    assert final["t_s"] > t_to, (final["t_s"], t_to)      # after the load
    assert st["ok_measured"] == len(measured) and st["samples"] == len(lines), st
    assert st["suspended_now_max"] == max(x["stats"]["suspended_now"] for x in lines if x["ok"])
    assert st["final"] == final["stats"] and st["final_zero"] is True, st
    print(f"    /stats {per_s:.1f}/s over {DURATION} s, {len(lines)} reads in all")


@test
def growth_matches_the_samples():
    r = the_run()
    with open(os.path.join(r["out"], "samples.csv")) as f:
        head, *rows = [line.strip().split(",") for line in f if line.strip()]
    rows = [dict(zip(head, map(float, row))) for row in rows]
    ts = [row["t_s"] for row in rows]
    assert len(rows) >= 2 and ts[0] >= WARMUP + SETTLE - 0.05, ts
    assert ts[-1] <= WARMUP + DURATION + 0.2, ts
    v = load_json(os.path.join(r["out"], "verdict.json"))
    for key, col in (("rss_bytes", "server_rss_bytes"), ("fds", "server_fds")):
        ys = [row[col] for row in rows]
        assert v[key]["n"] == len(ys)
        assert v[key]["first"] == ys[0] and v[key]["max"] == max(ys), (key, v[key])
        assert v[key]["rise"] == max(ys) - ys[0], (key, v[key])
    # the verdict follows from them: a pass has no rise
    if v["verdict"] == "pass":
        assert v["rss_bytes"]["rise"] == 0 and v["fds"]["rise"] == 0


def md_ms(x):
    return "-" if x is None else f"{x / 1000:.2f} ms"


@test
def report_sets_the_run_beside_the_paper():
    r = the_run()
    out = r["out"]
    v = load_json(os.path.join(out, "verdict.json"))
    rep = load_json(os.path.join(out, "report.json"))
    with open(os.path.join(out, "report.md")) as f:
        md = f.read()
    papers = QUAL["papers"]
    assert rep["schema_version"] == 2 and rep["verdict"] == v["verdict"]
    assert "paper's host" in rep["paper_label"] and "not a target" in rep["paper_label"]
    assert rep["reproduces"]["name"] == QUAL["reproduces"]
    assert [p["name"] for p in rep["papers"]] == [p["name"] for p in papers]
    rows = {x["figure"]: x for x in rep["rows"]}
    for fig, pk, rk in (("corrected p99", "p99_us", "p99"), ("corrected p50", "p50_us", "p50"),
                        ("corrected p99.9", "p999_us", "p999"), ("corrected max", "max_us", "max")):
        for p in papers:     # what a run of the paper's does not state is null, never 0
            assert rows[fig]["papers"][p["name"]] == p.get(pk), (fig, p["name"], rows[fig])
        assert rows[fig]["run"] == v["load"]["corrected_us"][rk], (fig, rows[fig])
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {fig} |"))
        cells = " | ".join(md_ms(p.get(pk)) for p in papers)
        assert line == f"| {fig} | {cells} | {md_ms(v['load']['corrected_us'][rk])} |", line
    for p in papers:
        assert rows["delivery"]["papers"][p["name"]] == p["delivery"]
        assert p["host"] in md and p["label"] in md
    assert rows["delivery"]["run"] == v["load"]["delivery"]
    line = next(ln for ln in md.splitlines() if ln.startswith("| most handlers suspended"))
    stated = " | ".join(str(p["suspended_max"]) if "suspended_max" in p else "-" for p in papers)
    assert f"| {stated} | {v['stats']['suspended_now_max']} |" in line, line
    line = next(ln for ln in md.splitlines() if ln.startswith("| final zero state"))
    assert all(f"{g}=0" in line for g in QUAL["zero_gauges"]), line
    assert all(f"{g}=0" in line for p in papers for g in p.get("zero_after", [])), line
    assert f"**{v['verdict']}**" in md.splitlines()[2], md.splitlines()[:3]
    reproduced = next(p for p in papers if p["name"] == QUAL["reproduces"])
    assert f"this run reproduces {reproduced['label']}" in md
    assert f"reproducing the PostgreSQL paper's {reproduced['label']}" in r["stdout"], r["stdout"]


@test
def cluster_and_cgroups_are_gone():
    r = the_run()
    out = r["out"]
    assert not os.path.exists(os.path.join(out, "pg", "data", "postmaster.pid"))
    for cg in load_json(os.path.join(out, "fixture", "limits.json"))["paths"].split():
        assert not os.path.exists(cg), f"cgroup {cg} left behind"


@test
def bad_options_are_refused_before_anything_runs():
    need(KB)
    out = tempfile.mkdtemp(prefix="kb-qualify-bad-", dir=BUILD)
    try:
        for extra in (["--rate", "0"], ["--duration", "x"], ["--duration", "3", "--settle", "3"],
                      ["--stats-every", "0.5"], ["unexpected"]):
            p = subprocess.run([KB, "qualify", "--out", os.path.join(out, "r")] + extra,
                               capture_output=True, text=True, timeout=30)
            assert p.returncode == 2, (extra, p.returncode, p.stderr)
            assert p.stderr.startswith("kneebench qualify: "), (extra, p.stderr)
            assert not os.path.exists(os.path.join(out, "r", "plan.json")), extra
    finally:
        shutil.rmtree(out, ignore_errors=True)


@test
def interrupted_run_keeps_no_marker_and_leaves_nothing_running():
    need(KB)
    if not HAVE_PG:
        skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (make deps)")
    out = tempfile.mkdtemp(prefix="kb-qualify-int-", dir=BUILD)
    os.chmod(out, 0o755)
    cmd = [KB, "qualify", "--out", out, "--build", BUILD] + SHORT + ["--duration", "60"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 40
        while not os.path.exists(os.path.join(out, "load.log")) and p.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        if p.returncode == 2 and unavailable(err):
            skip(f"qualify cannot run here: {err.strip()}")
        assert p.returncode == 130, (p.returncode, err)
        assert not os.path.exists(os.path.join(out, "DONE"))
        assert not os.path.exists(os.path.join(out, "verdict.json"))
        assert not os.path.exists(os.path.join(out, "pg", "data", "postmaster.pid"))
        lim = os.path.join(out, "fixture", "limits.json")
        for cg in load_json(lim)["paths"].split() if os.path.exists(lim) else []:
            assert not os.path.exists(cg), f"cgroup {cg} left behind"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    try:
        exit_with("qualify")
    finally:
        if _run.get("base") and _run.get("rc") == 0:
            shutil.rmtree(_run["base"], ignore_errors=True)
