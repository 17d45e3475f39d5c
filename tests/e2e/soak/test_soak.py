"""test_soak -- `kneebench soak` for a few seconds per phase, on the real sandbox and a real
throwaway PostgreSQL cluster (the db phase starts and stops its own).

One short soak (4 s per phase at low rates after 2 s warmup; samples from 4 s to 6 s) is run once and its run directory examined:
every phase passes, the evidence is whole (marker last, no partial files), the RSS and
descriptor slopes in verdict.json match an independent least-squares fit of samples.csv
(>= 2 samples), the db phase ran gray-static with --db against the cluster in its own
directory while plaintext/json ran without it, /stats was sampled and back at rest, the
cluster and cgroups are gone afterwards, and report.md carries each phase's figures.
An interrupted soak keeps no marker and leaves nothing running.

The host is shared with other engineers' load tests: the client's send-lag gate is relaxed
to 50 ms here (stated in the command), and a soak whose phases did not all pass is run once
more before the suite fails; both attempts' reasons are printed.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from kbtest import exit_with, skip, test  # noqa: E402

BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
KB = os.path.join(BUILD, "kneebench")
CONTRACT = json.load(open(os.path.join(ROOT, "fixtures", "contract.json")))
HAVE_PG = bool(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
PHASES = ["plaintext", "json"] + (["db"] if HAVE_PG else [])
RATES = {"plaintext": 2000, "json": 2000, "db": 500}
# A 2-s window cannot tell allocator warm-up (pages first touched under load: ~50-200 KiB
# here) from a leak, and extrapolating it to an hour magnifies it 1800x; the short form
# therefore states a 1 MiB floor on the fitted rise (still a fail for a leak of ~250 bytes a
# request at these rates). The rule itself is the unit test's (tests/unit/runner/test_soak.c);
# the hour-long default is 64 KiB and 1 %/h.
# Warmup and settle are 2 s, not 1: the db pool's 64 connections are first used (libpq's
# buffers allocated) during the first second or two at 500/s.
SHORT = ["--duration", "4", "--warmup", "2", "--settle", "2", "--sample-every", "1",
         "--client-lag-max-us", "50000", "--rss-floor", "1048576"]

_run = {}


def soak_cmd(out, phases=None, extra=()):
    phases = phases or PHASES
    return [KB, "soak", "--out", out, "--phases", ",".join(phases),
            "--rates", ",".join(str(RATES[p]) for p in phases), "--build", BUILD] + SHORT + \
        list(extra)


def unavailable(text):
    """The sandbox cannot run here (no root, no cgroup controllers): a skip, with why."""
    return "cgroup" in text or "root" in text or "controller" in text


def verdicts(out):
    got = {}
    for i, name in enumerate(PHASES):
        path = os.path.join(out, "phases", f"{i + 1:02d}-{name}", "verdict.json")
        got[name] = load_json(path) if os.path.exists(path) else None
    return got


def the_run():
    """One soak, shared by the tests. The shared host can starve the client (send lag of a
    second at load average 10 on 2 cores): a run with a phase that failed or was
    client-limited is tried again, up to three runs in all."""
    if _run:
        return _run
    if not os.access(KB, os.X_OK):
        skip(f"{KB} is not built")
    base = tempfile.mkdtemp(prefix="kb-soak-", dir=BUILD)
    os.chmod(base, 0o755)   # the cluster's owner (postgres) must reach its directory
    for attempt in (1, 2, 3):
        out = os.path.join(base, f"run{attempt}")
        p = subprocess.run(soak_cmd(out), capture_output=True, text=True, timeout=240)
        print(p.stdout, end="")
        if p.returncode == 2 and unavailable(p.stderr):
            shutil.rmtree(base, ignore_errors=True)
            skip(f"soak cannot run here: {p.stderr.strip()}")
        _run.update(out=out, rc=p.returncode, stdout=p.stdout, stderr=p.stderr,
                    attempts=attempt, base=base)
        if p.returncode == 0:
            break
        print(f"attempt {attempt}: exit {p.returncode}; {p.stderr.strip()}")
    return _run


def phase_dir(r, i, name):
    return os.path.join(r["out"], "phases", f"{i + 1:02d}-{name}")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def samples(d):
    with open(os.path.join(d, "samples.csv")) as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    head, body = rows[0], rows[1:]
    return [dict(zip(head, map(float, row))) for row in body]


def lsq(ts, ys):
    n = len(ts)
    tm, ym = sum(ts) / n, sum(ys) / n
    sxx = sum((t - tm) ** 2 for t in ts)
    return sum((t - tm) * (y - ym) for t, y in zip(ts, ys)) / sxx


@test
def every_phase_passes():
    r = the_run()
    got = verdicts(r["out"])
    for name, v in got.items():
        assert v is not None, f"{name}: no verdict ({r['stderr']})"
        assert v["verdict"] in ("pass", "client-limited"), (name, v["verdict"], v["reason"])
    limited = {n: v["reason"] for n, v in got.items() if v["verdict"] == "client-limited"}
    if limited:
        skip(f"after {r['attempts']} runs the shared host still starved the client, so "
             f"these phases could not be judged: {limited}")
    assert r["rc"] == 0, f"exit {r['rc']}: {r['stderr']}"
    for i, name in enumerate(PHASES):
        v = got[name]
        assert v["verdict"] == "pass", (name, v["reason"])
        assert v["load"]["delivery"] >= 0.995, v["load"]["delivery"]
        assert v["load"]["errors"]["total"] == 0 and v["load"]["non2xx"] == 0
    print(f"    ({r['attempts']} attempt(s))")


@test
def evidence_is_whole_and_marker_last():
    r = the_run()
    for f in ("plan.json", "run.json", "report.md", "DONE"):
        assert os.path.isfile(os.path.join(r["out"], f)), f
    run = load_json(os.path.join(r["out"], "run.json"))
    assert len(run["runner_sha256"]) == 64 and run["host"], run
    for i, name in enumerate(PHASES):
        d = phase_dir(r, i, name)
        need = ["command.json", "load.json", "corrected.hgrm", "uncorrected.hgrm",
                "samples.csv", "verdict.json", "DONE", "fixture/limits.json",
                "fixture/identity.json", "fixture/preflight.json"]
        if name == "db":
            need.append("stats.csv")
        for f in need:
            assert os.path.isfile(os.path.join(d, f)), (name, f)
        assert not glob.glob(os.path.join(d, "*.tmp")), glob.glob(os.path.join(d, "*.tmp"))
        assert os.stat(os.path.join(d, "DONE")).st_mtime_ns >= \
            os.stat(os.path.join(d, "verdict.json")).st_mtime_ns
        assert load_json(os.path.join(d, "fixture", "preflight.json"))["failed"] is False
        lim = load_json(os.path.join(d, "fixture", "limits.json"))
        assert lim["memory_bytes"] == CONTRACT["limits"]["memory_bytes"], lim
        assert lim["pids_max"] == CONTRACT["limits"]["pids"], lim
        for cg in lim["paths"].split():
            assert not os.path.exists(cg), f"cgroup {cg} left behind"
    assert os.stat(os.path.join(r["out"], "DONE")).st_mtime_ns >= \
        os.stat(os.path.join(r["out"], "report.md")).st_mtime_ns


@test
def slopes_match_an_independent_fit():
    r = the_run()
    for i, name in enumerate(PHASES):
        d = phase_dir(r, i, name)
        rows = samples(d)
        v = load_json(os.path.join(d, "verdict.json"))
        assert len(rows) >= 2, (name, len(rows))
        assert v["rss_bytes"]["n"] == len(rows) == v["fds"]["n"]
        ts = [row["t_s"] for row in rows]
        # sampled only inside the measured interval, after warmup + settle
        assert ts[0] >= 4 - 0.05 and ts[-1] <= 6 + 0.2, ts
        for key, col in (("rss_bytes", "server_rss_bytes"), ("fds", "server_fds")):
            mine = lsq(ts, [row[col] for row in rows])
            theirs = v[key]["slope_per_s"]
            # the CSV holds t to the millisecond; the runner fitted unrounded times
            assert abs(mine - theirs) <= 1e-3 * max(abs(mine), 1.0) + 1e-6 * \
                max(row[col] for row in rows), (name, key, mine, theirs)
            assert abs(v[key]["per_hour"] - 3600 * theirs) < 1e-6 * max(1.0, abs(theirs) * 3600)
            assert v[key]["first"] == rows[0][col] and v[key]["last"] == rows[-1][col]


@test
def db_phase_uses_its_own_cluster_others_run_without_db():
    if not HAVE_PG:
        skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (make deps)")
    r = the_run()
    for i, name in enumerate(PHASES):
        d = phase_dir(r, i, name)
        argv = load_json(os.path.join(d, "command.json"))["fixture_argv"]
        if name != "db":
            assert "--db" not in argv, argv
            continue
        conninfo = argv[argv.index("--db") + 1]
        assert f"host={d}/pg/sock" in conninfo, conninfo
        assert argv[argv.index("--db-pool") + 1] == str(CONTRACT["db"]["pool_size"]), argv
        # the cluster was stopped: no postmaster.pid left in its data directory
        assert not os.path.exists(os.path.join(d, "pg", "data", "postmaster.pid"))
        with open(os.path.join(d, "stats.csv")) as f:
            head, *rows = [line.strip().split(",") for line in f if line.strip()]
        assert len(rows) >= 2, rows
        cols = {k: head.index(k) for k in ("pool_size", "suspended_max", "queries_total")}
        assert all(row[cols["pool_size"]] == str(CONTRACT["db"]["pool_size"]) for row in rows)
        totals = [int(row[cols["queries_total"]]) for row in rows]
        assert totals == sorted(totals) and totals[-1] > totals[0], totals
        v = load_json(os.path.join(d, "verdict.json"))
        st = v["stats"]
        assert st["at_rest_after"] is True and st["read_failures"] == 0, st
        assert st["suspended_max"] >= 1, st
        for g in ("suspended_now", "queries_in_flight", "queued", "pool_busy"):
            assert st["after"][g] == 0, (g, st["after"])
        print(f"    db phase: {v['load']['achieved_rps']:.1f}/s achieved of {RATES['db']}, "
              f"p99 {v['load']['corrected_us']['p99'] / 1000:.2f} ms, "
              f"suspended max {st['suspended_max']}")


@test
def report_has_every_phase():
    r = the_run()
    with open(os.path.join(r["out"], "report.md")) as f:
        md = f.read()
    for i, name in enumerate(PHASES):
        v = load_json(os.path.join(phase_dir(r, i, name), "verdict.json"))
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {name} |"))
        assert f"| {v['load']['achieved_rps']:.1f} |" in line, line
        assert f"**{v['verdict']}**" in line, line
    assert f"{len(PHASES)} of {len(PHASES)} phases passed" in md or _run["rc"] != 0


@test
def bad_options_are_refused_before_anything_runs():
    if not os.access(KB, os.X_OK):
        skip(f"{KB} is not built")
    out = tempfile.mkdtemp(prefix="kb-soak-bad-", dir=BUILD)
    try:
        for extra in (["--phases", "nope"], ["--phases", "json", "--rates", "1,2"],
                      ["--phases", "json", "--sample-every", "0"]):
            p = subprocess.run([KB, "soak", "--out", os.path.join(out, "r")] + extra,
                               capture_output=True, text=True, timeout=30)
            assert p.returncode == 2, (extra, p.returncode, p.stderr)
            assert not os.path.exists(os.path.join(out, "r", "phases")), extra
    finally:
        shutil.rmtree(out, ignore_errors=True)


@test
def interrupted_soak_keeps_no_marker_and_leaves_nothing_running():
    if not os.access(KB, os.X_OK):
        skip(f"{KB} is not built")
    phase = "db" if HAVE_PG else "json"
    out = tempfile.mkdtemp(prefix="kb-soak-int-", dir=BUILD)
    os.chmod(out, 0o755)
    d = os.path.join(out, "phases", f"01-{phase}")
    cmd = soak_cmd(out, [phase]) + ["--duration", "60"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # interrupt once the load is running (its log exists), at most 40 s in
        deadline = time.monotonic() + 40
        while not os.path.exists(os.path.join(d, "load.log")) and p.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        if p.returncode == 2 and unavailable(err):
            skip(f"soak cannot run here: {err.strip()}")
        assert p.returncode == 130, (p.returncode, err)
        assert not os.path.exists(os.path.join(d, "DONE"))
        assert not os.path.exists(os.path.join(out, "DONE"))
        if phase == "db":
            assert not os.path.exists(os.path.join(d, "pg", "data", "postmaster.pid"))
        lim = os.path.join(d, "fixture", "limits.json")
        for cg in load_json(lim)["paths"].split() if os.path.exists(lim) else []:
            assert not os.path.exists(cg), f"cgroup {cg} left behind"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    try:
        exit_with("soak")
    finally:
        if _run.get("base") and _run.get("rc") == 0:
            shutil.rmtree(_run["base"], ignore_errors=True)
