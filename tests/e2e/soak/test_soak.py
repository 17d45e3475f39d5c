"""test_soak -- `kneebench soak` for a few seconds per phase, on the real sandbox and a real
throwaway PostgreSQL cluster (the db phase starts and stops its own).

One short soak (4 s per phase at low rates after 2 s warmup; samples from 4 s to 6 s) is run once and its run directory examined:
every phase passes, the evidence is whole (marker last, no partial files), the RSS and
descriptor slopes in verdict.json match an independent least-squares fit of samples.csv
(>= 2 samples), the db phase ran gray-static in the contract's /db design (the paper's
blocking route) with --db against the cluster in its own directory while plaintext/json ran
without it, /stats was sampled and back at rest on the contract's zero gauges, the cluster and
cgroups are gone afterwards, each phase's decay windows in verdict.json match the series they
were read from, and report.md carries each phase's figures, the paper's beside them and the
windows. A db phase in the readiness design runs its pool. An interrupted soak keeps no marker
and leaves nothing running. A soak whose server is slowed on purpose halfway through (a
bounded SCHED_FIFO busy loop on the server's CPU for the second half) fails its decay gate.

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

from kbenv import BUILD, CONTRACT, KB, need
from kbtest import exit_with, skip, test

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
# The decay gate's windows here are a second long (a tenth of a 4 s phase): a stall of the
# shared host's of 10 ms at the end of the last one moves 1 % of its responses into the next,
# and one of tens of ms sets its p99. The short form therefore allows a 5 % drop and a p99
# growth of 50 ms (the hour's defaults are 0.5 % and 10 ms over 5-minute windows; the rule
# itself is the unit test's, tests/unit/runner/run/test_soakwin.c).
SHORT = ["--duration", "4", "--warmup", "2", "--settle", "2", "--sample-every", "1",
         "--client-lag-max-us", "50000", "--rss-floor", "1048576",
         "--max-rate-drop", "0.05", "--p99-growth-floor-ms", "50"]

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
    need(KB)
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
        assert not glob.glob(os.path.join(d, "*.tmp*")), glob.glob(os.path.join(d, "*.tmp*"))
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
        # the phase's own cluster: its socket directory is the one pg/ records (pg/sock, or a
        # short private /tmp/kb-pg.* one where the run directory is too deep for a socket)
        sock = open(os.path.join(d, "pg", "sockdir")).read().strip()
        assert f"host={sock} " in conninfo and \
            (sock == f"{d}/pg/sock" or sock.startswith("/tmp/kb-pg.")), (sock, conninfo)
        # the contract's design for the soak: the papers' blocking route, its task workers
        # each holding a connection (their count is on the command line, the evidence)
        mode = CONTRACT["soak"]["db_mode"]
        assert argv[argv.index("--db-mode") + 1] == mode and "--db-pool" not in argv, argv
        workers = int(argv[argv.index("--db-workers") + 1])
        assert load_json(os.path.join(d, "verdict.json"))["db_mode"] == mode
        # the cluster was stopped: no postmaster.pid left in its data directory
        assert not os.path.exists(os.path.join(d, "pg", "data", "postmaster.pid"))
        with open(os.path.join(d, "stats.csv")) as f:
            head, *rows = [line.strip().split(",") for line in f if line.strip()]
        assert len(rows) >= 2, rows
        cols = {k: head.index(k) for k in ("pool_size", "suspended_max", "queries_total")}
        assert all(row[cols["pool_size"]] == str(workers) for row in rows)
        totals = [int(row[cols["queries_total"]]) for row in rows]
        assert totals == sorted(totals) and totals[-1] > totals[0], totals
        v = load_json(os.path.join(d, "verdict.json"))
        st = v["stats"]
        assert st["at_rest_after"] is True and st["read_failures"] == 0, st
        assert st["suspended_max"] >= 1, st     # blocking: each /db parked for a worker
        for g in CONTRACT["qualification"]["zero_gauges"]:
            assert st["after"][g] == 0, (g, st["after"])
        print(f"    db phase: {v['load']['achieved_rps']:.1f}/s achieved of {RATES['db']}, "
              f"p99 {v['load']['corrected_us']['p99'] / 1000:.2f} ms, "
              f"suspended max {st['suspended_max']}")


def windows_from_series(d, duration, n):
    """The windows' responses and seconds, summed here from series.csv (the p99 is the unit
    test's to check against merged histograms)."""
    with open(os.path.join(d, "series.csv")) as f:
        head, *rows = [line.strip().split(",") for line in f if line.strip()]
    col = {k: head.index(k) for k in ("start_s", "length_s", "completed")}
    got = [[0, 0.0] for _ in range(n)]
    for row in rows:
        start = float(row[col["start_s"]])
        if start < duration:
            k = min(int(start / (duration / n) + 1e-9), n - 1)
            got[k][0] += int(row[col["completed"]])
            got[k][1] += float(row[col["length_s"]])
    return got


@test
def decay_windows_follow_the_series():
    r = the_run()
    dur = float(SHORT[SHORT.index("--duration") + 1])
    for i, name in enumerate(PHASES):
        d = phase_dir(r, i, name)
        dec = load_json(os.path.join(d, "verdict.json"))["decay"]
        n = dec["n"]
        assert n == len(dec["windows"]) >= 2, dec
        for w, (completed, secs) in zip(dec["windows"], windows_from_series(d, dur, n)):
            assert w["completed"] == completed and abs(w["seconds"] - secs) < 1e-6, (w, completed)
            assert abs(w["achieved_rps"] - completed / secs) < 1e-6 * completed, w
            assert w["p99_us"] is not None and w["p99_us"] > 0, w
        first, last = dec["windows"][0], dec["windows"][-1]
        assert abs(dec["rate_drop"] - (1 - last["achieved_rps"] / first["achieved_rps"])) < 1e-9
        assert abs(dec["p99_growth_us"] - (last["p99_us"] - first["p99_us"])) < 1e-6
        assert dec["verdict"] == "flat", (name, dec["reason"])


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
    # the paper's one-hour figures beside the run's, from the contract, as its host's: each
    # phase a table, the paper's figure in its own column, "-" where the paper states none
    paper = CONTRACT["published"]["soak"]
    beside = md.split("## Beside the paper's one-hour qualification")[1].split("## Decay")[0]
    assert paper["host"] in " ".join(beside.split())
    for i, name in enumerate(PHASES):
        pp = next(p for p in paper["phases"] if p["route"] == name)
        v = load_json(os.path.join(phase_dir(r, i, name), "verdict.json"))
        table = beside.split(f"### {name} at {RATES[name]} req/s")[1].split("###")[0]
        rows = {c[0]: c[1:] for c in ([x.strip() for x in ln.strip("|").split("|")]
                                      for ln in table.splitlines() if ln.startswith("| "))}
        assert rows["requested/s"] == [str(pp["rate"]), str(RATES[name])], rows
        assert rows["achieved/s"] == [f"{pp['achieved_rps']:.2f}",
                                      f"{v['load']['achieved_rps']:.2f}"], rows
        for key, field in (("corrected p50", "p50_us"), ("corrected p99", "p99_us"),
                           ("corrected p99.9", "p999_us"), ("corrected max", "max_us")):
            us = pp.get(field)
            want = "-" if us is None else f"{us / 1e6:.2f} s" if us >= 1e6 else f"{us / 1e3:.2f} ms"
            assert rows[key][0] == want, (name, key, rows[key])
        # RSS and descriptors are the phase's own: the paper states them phase by phase
        assert rows["descriptors (this run: first..last)"][0] == f"{pp['fds']}, flat", rows
        assert rows["RSS KiB (this run: first..last sample)"][0] == f"{pp['rss_kib']}, flat"
        assert rows["samples"] == [str(pp.get("observations", "-")),
                                   str(v["rss_bytes"]["n"])], rows
        if name == "db":
            ver = load_json(os.path.join(r["out"], "run.json"))["runtime_versions"]["postgresql"]
            assert rows["PostgreSQL"] == ["16 (the papers')", f"{ver} (run.json)"], rows
        # each phase's windows, as verdict.json keeps them
        dec = load_json(os.path.join(phase_dir(r, i, name), "verdict.json"))["decay"]
        assert f"### Phase {i + 1}, {name} at {RATES[name]}/s: {dec['verdict']}" in md
        assert dec["reason"] in md


@test
def db_phase_in_the_readiness_design_runs_its_pool():
    if not HAVE_PG:
        skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (make deps)")
    need(KB)
    out = tempfile.mkdtemp(prefix="kb-soak-ready-", dir=BUILD)
    os.chmod(out, 0o755)
    try:
        for attempt in (1, 2):
            run = os.path.join(out, f"run{attempt}")
            p = subprocess.run(soak_cmd(run, ["db"], ["--db-mode", "readiness"]),
                               capture_output=True, text=True, timeout=120)
            if p.returncode == 2 and unavailable(p.stderr):
                skip(f"soak cannot run here: {p.stderr.strip()}")
            if p.returncode == 0:
                break
        assert p.returncode == 0, p.stdout + p.stderr
        d = os.path.join(run, "phases", "01-db")
        argv = load_json(os.path.join(d, "command.json"))["fixture_argv"]
        assert argv[argv.index("--db-mode") + 1] == "readiness", argv
        assert argv[argv.index("--db-pool") + 1] == str(CONTRACT["db"]["pool_size"]), argv
        v = load_json(os.path.join(d, "verdict.json"))
        assert v["db_mode"] == "readiness" and v["stats"]["suspended_max"] >= 1, v["stats"]
        for g in CONTRACT["qualification"]["zero_gauges"]:
            assert v["stats"]["after"][g] == 0, (g, v["stats"]["after"])
        assert "**readiness** /db design" in open(os.path.join(run, "report.md")).read()
        assert load_json(os.path.join(run, "plan.json"))["db_mode"] == "readiness"
    finally:
        shutil.rmtree(out, ignore_errors=True)


# A bounded busy loop above everything else on one CPU: busy for `busy` seconds of every
# `period` until `total` seconds have passed, then it exits by itself.
HOG = r"""
import os, sys, time
cpu, busy, period, total = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(99))
end = time.monotonic() + total
while time.monotonic() < end:
    stop = min(time.monotonic() + busy, end)
    while time.monotonic() < stop:
        pass
    time.sleep(max(0.0, min(period - busy, end - time.monotonic())))
"""


def load_child_of(parent, seconds=60):
    """The PID of the soak's `kneebench load` child and its start (s since boot)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for d in os.listdir("/proc"):
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read().rsplit(")", 1)[1].split()
                if int(st[1]) == parent and "load" in open(f"/proc/{d}/cmdline").read().split("\0"):
                    return int(d), int(st[19]) / os.sysconf("SC_CLK_TCK")
            except (OSError, ValueError, IndexError):
                continue
        time.sleep(0.02)
    raise AssertionError(f"no load child of {parent}")


@test
def a_server_slowed_halfway_fails_its_decay_gate():
    """plaintext at 2,000/s for 12 s; from the middle of the measured interval to its end a
    SCHED_FIFO loop on the server's CPU takes 200 ms of every 250: requests that arrive then
    wait for it, the last window's corrected p99 is a multiple of the first's, and the phase
    fails on decay. Its delivery floor is relaxed to 90 % here, since requests held past the
    interval's end are lost to it, so that the decay gate is what is tested."""
    if os.geteuid() != 0 or len(os.sched_getaffinity(0)) < 2:
        skip("needs root (SCHED_FIFO, the sandbox) and two CPUs")
    need(KB)
    server_cpu = int(CONTRACT["limits"]["server_cpus"].split(",")[0].split("-")[0])
    warmup, duration = 2.0, 12.0
    out = tempfile.mkdtemp(prefix="kb-soak-hog-", dir=BUILD)
    cmd = [KB, "soak", "--out", out, "--phases", "plaintext", "--rates", "2000",
           "--build", BUILD, "--duration", str(duration), "--warmup", str(warmup),
           "--settle", "2", "--sample-every", "1", "--client-lag-max-us", "50000",
           "--rss-floor", "1048576", "--max-rate-drop", "0.05", "--p99-growth-floor-ms", "50",
           "--min-delivery", "0.9"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hog = None
    try:
        _, started = load_child_of(p.pid)
        with open("/proc/uptime") as f:
            now = float(f.read().split()[0])
        time.sleep(max(0.0, started + warmup + duration / 2 - now))
        hog = subprocess.Popen([sys.executable, "-c", HOG, str(server_cpu), "0.2", "0.25",
                                str(duration / 2 + 1)])
        stdout, stderr = p.communicate(timeout=120)
        hog.wait(timeout=30)
    finally:
        for proc in (p, hog):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
    try:
        if p.returncode == 2 and unavailable(stderr):
            skip(f"soak cannot run here: {stderr.strip()}")
        v = load_json(os.path.join(out, "phases", "01-plaintext", "verdict.json"))
        dec = v["decay"]
        first, last = dec["windows"][0], dec["windows"][-1]
        print(f"    first window p99 {first['p99_us'] / 1000:.2f} ms, last "
              f"{last['p99_us'] / 1000:.2f} ms: {dec['verdict']}")
        assert p.returncode == 1, (p.returncode, stdout, stderr)
        assert v["verdict"] == "fail", v["reason"]
        assert dec["verdict"] in ("tail-grew", "throughput-decayed"), dec
        assert "tail grew" in v["reason"] or "throughput decayed" in v["reason"], v["reason"]
        assert hog.returncode == 0, "the busy loop did not end by itself"
    finally:
        shutil.rmtree(out, ignore_errors=True)


@test
def bad_options_are_refused_before_anything_runs():
    need(KB)
    out = tempfile.mkdtemp(prefix="kb-soak-bad-", dir=BUILD)
    try:
        for extra in (["--phases", "nope"], ["--phases", "json", "--rates", "1,2"],
                      ["--phases", "json", "--sample-every", "0"],
                      ["--phases", "json", "--db-mode", "blocking"],
                      ["--phases", "db", "--db-mode", "eventually"],
                      ["--phases", "json", "--max-rate-drop", "1"],
                      ["--phases", "json", "--p99-growth", "0.5"]):
            p = subprocess.run([KB, "soak", "--out", os.path.join(out, "r")] + extra,
                               capture_output=True, text=True, timeout=30)
            assert p.returncode == 2, (extra, p.returncode, p.stderr)
            assert not os.path.exists(os.path.join(out, "r", "phases")), extra
    finally:
        shutil.rmtree(out, ignore_errors=True)


@test
def interrupted_soak_keeps_no_marker_and_leaves_nothing_running():
    need(KB)
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
