#!/usr/bin/env python3
"""test_readiness -- `kneebench curve --profile db-readiness`, shortened by flags, end to end
on the real sandbox and a throwaway PostgreSQL cluster the curve starts and stops itself.

Two short curves: the profile's default placement (2 rates, 2 s points) and one with
--db-cpus on another CPU (1 rate). While each runs, PostgreSQL's processes are read from
/proc/<pid>/status (Cpus_allowed_list), the postmaster's and every process under it,
including the backends gray-static's pool made after the cluster was pinned: all must be
on the db CPUs plan.json records. The placement record (which roles share which CPUs,
worked out here from the three lists) must be in plan.json and run.json and said on stderr;
pinning.json must agree with the kernel; the report must carry the paper's curve from the
contract beside this run's, labelled as the paper's host, with each knee located on delivery
and corrected p99 together (the paper's knee computed here from the contract's figures).
Bad --db-cpus uses are refused before anything starts. Every load verdict is left to the
curve's own judgement: a client-limited point on this shared host still places the knee.
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import time

from kbenv import BUILD, CONTRACT, KB
from kbtest import exit_with, skip, test

PROFILE = CONTRACT["profiles"]["db-readiness"]
CURVE = CONTRACT["published"]["curves"]["db-readiness"]
CRIT = CONTRACT["comparison"]["criteria"]
SHORT = ["--duration", "2", "--warmup", "1", "--drain", "1", "--free-ports", "--build", BUILD]
ONLINE = os.sysconf("SC_NPROCESSORS_ONLN")

_runs = {}


def cpus(text):
    """A CPU list ("0", "1-3", "0,2", "1-": to the last online CPU) as a set."""
    out = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        hi = (ONLINE - 1 if b == "" else int(b)) if "-" in part else int(a)
        out.update(range(int(a), min(hi, ONLINE - 1) + 1))
    return out


def allowed(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def alive(pid):
    """pid runs and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def tree(root):
    """root and every process under it, by parent PID."""
    kids = {}
    for st in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(st) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            kids.setdefault(int(fields[1]), []).append(int(st.split("/")[2]))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def watch(proc, run):
    """While the curve runs: once its first point's load is under way, every process of the
    cluster with its Cpus_allowed_list ({pid: list}), read at the largest moment seen."""
    pidfile = os.path.join(run, "fixtures", "gray-static", "pg", "data", "postmaster.pid")
    seen, postmaster = {}, None
    while proc.poll() is None:
        if os.path.exists(os.path.join(run, "points")) and os.path.exists(pidfile):
            try:
                postmaster = int(open(pidfile).readline())
            except (OSError, ValueError):
                pass
        if postmaster:
            now = {p: allowed(p) for p in tree(postmaster)}
            now = {p: a for p, a in now.items() if a is not None}
            if len(now) > len(seen):
                seen = now
        time.sleep(0.2)
    return postmaster, seen


def curve(name, *extra):
    if name in _runs:
        return _runs[name]
    if os.geteuid() != 0:
        skip("the curve's cgroup sandbox needs root")
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        skip("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (make deps)")
    base = tempfile.mkdtemp(prefix=f"kb-dbcurve-{name}-", dir=BUILD)
    os.chmod(base, 0o755)   # the cluster's owner (postgres) must reach its directory
    run = os.path.join(base, "run")
    proc = subprocess.Popen([KB, "curve", "--profile", "db-readiness", "--run", run, *SHORT,
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    postmaster, seen = watch(proc, run)
    out, err = proc.communicate(timeout=240)
    _runs[name] = dict(base=base, run=run, rc=proc.returncode, out=out, err=err,
                       postmaster=postmaster, seen=seen)
    return _runs[name]


def load(r, *path):
    with open(os.path.join(r["run"], *path)) as f:
        return json.load(f)


def shares(server, client, db):
    """The pairs of roles that share CPUs, as the record must name them."""
    sets = {"server": cpus(server), "client": cpus(client), "db": cpus(db)}
    pairs = [("server", "client"), ("server", "db"), ("client", "db")]
    return [[a, b] for a, b in pairs if sets[a] & sets[b]]


def check_pinned(r, declared):
    assert r["rc"] == 0, (r["rc"], r["err"][-2000:])
    plan, ident = load(r, "plan.json"), load(r, "run.json")
    db = plan["db_cpus"]
    assert plan["db_cpus_declared"] is declared, plan["db_cpus_declared"]
    assert ident["db_cpus"] == db and ident["placement"] == plan["placement"]
    pl = plan["placement"]
    assert pl["server"] == plan["server_cpus"] and pl["client"] == plan["client_cpus"], pl
    want = shares(pl["server"], pl["client"], db)
    assert [s["roles"] for s in pl["shared"]] == want, (pl["shared"], want)
    assert pl["disjoint"] is (not want)
    if want:
        # said where it ran, and why it was not refused
        assert pl["note"] and "share" in pl["note"], pl
        assert "share" in r["err"] and db in r["err"], r["err"]
    # the kernel's own view during the load: the postmaster and what it forked later
    assert r["postmaster"] and r["seen"], "never saw the cluster's processes"
    wrong = {p: a for p, a in r["seen"].items() if cpus(a) != cpus(db)}
    assert not wrong, f"not on db CPUs {db}: {wrong}"
    pin = load(r, "fixtures", "gray-static", "pg", "pinning.json")
    assert pin["all_pinned"] is True and pin["root_pid"] == r["postmaster"], pin
    assert all(cpus(p["cpus_allowed_list"]) == cpus(db) for p in pin["processes"]), pin
    # backends of the pool came after the pinning: they inherited it
    assert len(r["seen"]) > len(pin["processes"]), (len(r["seen"]), pin["processes"])
    # and the cluster is gone with the run (pg_ctl stop returns once the pid file is
    # removed, a moment before the process ends)
    deadline = time.monotonic() + 10
    while alive(r["postmaster"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(r["postmaster"]), "the postmaster outlived the curve"
    return plan


@test
def default_placement_pins_postgres_and_records_shared_roles():
    r = curve("default", "--rates", "500,1000")
    plan = check_pinned(r, False)
    # the profile's matrix and client, but for what the flags shortened
    assert plan["profile"] == "db-readiness"
    assert plan["runtimes"] == PROFILE["runtimes"] and plan["routes"] == PROFILE["routes"]
    assert plan["rates"] == [500, 1000] and plan["duration_s"] == 2 and plan["warmup_s"] == 1
    assert plan["threads"] == PROFILE["threads"]
    assert plan["connections"] == PROFILE["connections"]
    # the default: CPUs no other role has, else the server's, never the client's
    pl = plan["placement"]
    left = set(range(ONLINE)) - cpus(pl["server"]) - cpus(pl["client"])
    assert cpus(plan["db_cpus"]) == (left or cpus(pl["server"])), plan["db_cpus"]
    for rate in (500, 1000):
        assert os.path.exists(os.path.join(r["run"], "points", f"gray-static-db-{rate}", "DONE"))


@test
def declared_db_cpus_are_where_postgres_runs():
    last = ONLINE - 1
    extra = ["--client-cpus", "1", "--db-cpus", str(last)] if ONLINE >= 3 else ["--db-cpus", "1"]
    r = curve("declared", "--rates", "500", *extra)
    plan = check_pinned(r, True)
    assert plan["db_cpus"] == extra[-1]


def paper_knee():
    """The paper's knee from the contract's figures, on delivery and p99 together."""
    last = first = None
    for p in CURVE["points"]:
        d = p.get("delivery", p.get("achieved_rps", 0) / p["rate"])
        if first is None and d >= CRIT["min_delivery"] and p["p99_us"] < CRIT["max_p99_us"]:
            last = p["rate"]
        elif first is None:
            first = p["rate"]
    return last, first


@test
def report_shows_the_paper_s_curve_beside_this_run_s():
    r = curve("default", "--rates", "500,1000")
    assert r["rc"] == 0, r["err"][-2000:]
    rep = subprocess.run([KB, "report", r["run"]], capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    md = open(os.path.join(r["run"], "report.md")).read()
    js = load(r, "report.json")["readiness_curve"]
    last, first = paper_knee()
    sec = md.split("## Readiness curve", 1)[1].split("\n## ", 1)[0]
    assert "paper's host" in sec and CURVE["host"].split(":")[0] in sec.replace("\n", " ")
    for p in CURVE["points"]:
        row = next(l for l in sec.splitlines() if l.startswith(f"| {p['rate']} |"))
        us = p["p99_us"]
        want = f"{us / 1e6:.2f} s" if us >= 1e6 else f"{us / 1e3:.0f} ms" if us >= 1e5 else \
            f"{us / 1e3:.1f} ms" if us >= 1e4 else f"{us / 1e3:.2f} ms"
        assert want in row, (row, want)
    assert f"between {last} and {first} req/s" in sec.replace("\n", " "), sec
    # where PostgreSQL ran, and which roles shared, as plan.json records it
    pl = load(r, "plan.json")["placement"]
    flat = sec.replace("\n", " ")
    assert f"PostgreSQL CPUs {pl['db']} (by default)" in flat, sec
    assert (", disjoint" in flat) if pl["disjoint"] else (pl["note"] in flat), (pl, sec)
    # the host's PostgreSQL beside the papers' 16, as run.json records it
    ver = load(r, "run.json")["runtime_versions"]["postgresql"]
    assert f"the papers ran PostgreSQL 16; this run's is {ver} (run.json)" in flat, sec
    assert js["paper_knee"]["last_held_rps"] == last
    assert js["paper_knee"]["first_missed_rps"] == first
    # this run's knee follows from its own points' server verdicts
    held = [p["requested_rps"] for p in js["points"] if p["run"] and p["run"]["held"]]
    runs = [p for p in js["points"] if p["run"]]
    assert [p["requested_rps"] for p in runs] == [500, 1000]
    for p in runs:
        assert 0 <= p["run"]["delivery_fraction"] <= 1.5, p
        v = load(r, "points", f"gray-static-db-{p['requested_rps']}", "verdict.json")
        own = v.get("server_verdict") or v["verdict"]
        assert p["run"]["held"] is (own == "controlled"), (p, own)
    k = js["run_knee"]
    if held == [500, 1000]:
        assert k["last_held_rps"] == 1000 and k["first_missed_rps"] is None
        assert "every rate held up to 1000" in sec.replace("\n", " ")
    # the answer table's paper's-host column for db: the curve's highest held rate
    head = next(l for l in md.splitlines() if l.startswith("| rank |"))
    row = next(l for l in md.splitlines() if l.startswith("| 1 | gray-static |"))
    col = [c.strip() for c in head.split("|")].index("paper's host")
    assert [c.strip() for c in row.split("|")][col] == str(last), row


@test
def bad_db_cpus_refused_before_anything_starts():
    with tempfile.TemporaryDirectory(dir=BUILD) as d:
        r = subprocess.run([KB, "curve", "--profile", "db-readiness", "--run", d + "/r",
                            "--db-cpus", "0-x", *SHORT], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2 and "--db-cpus" in r.stderr and "0-x" in r.stderr, r.stderr
        r = subprocess.run([KB, "curve", "--profile", "db-readiness", "--routes", "json",
                            "--run", d + "/r2", "--db-cpus", "0", *SHORT],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "db route" in r.stderr, r.stderr
        assert not os.path.exists(d + "/r2/points")


def cleanup():
    for r in _runs.values():
        shutil.rmtree(r["base"], ignore_errors=True)


if __name__ == "__main__":
    try:
        exit_with("db-curve")
    finally:
        cleanup()
