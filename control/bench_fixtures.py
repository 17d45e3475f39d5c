"""bench_fixtures.py -- `make bench-fixtures`: what one response costs each server, not a test.

On a 2-CPU host the client cannot reach gray-static's knee, so the server's CPU per response
is how the suite tells the runtimes apart there. This command measures it for every fixture
and for kb-control (the raw-epoll floor: the same bytes, no framework) at the same fixed
rates, in one run, interleaved, each in the contract's sandbox exactly as the curve runs it:
it *is* a curve (`kneebench curve`, quick profile, --repeats N with the runtime order rotated
per repeat, --confirm 1), run on a contract derived from the tree's with kb-control added as
one more runtime, so no second sandbox exists. Every point's verdict.json already holds
server.cpu_us_per_response (the cgroup's CPU over the measured interval, over the responses
completed in it) and what the host stole from the server's CPUs (host.server_cpus).

Printed, per route and rate: each runtime's median CPU per response over the repeats (min-
max), its ratio to kb-control and to go (each the median of the per-repeat ratios: the two
ran minutes apart at most), corrected p99 and p99.9, largest RSS, the verdicts, and the
steal the host took from the server CPU in that runtime's points; then json/plaintext per
runtime, and /proc/stat's steal per CPU over the whole run with the load average at its ends.

Environment (all optional):
  BENCH_RUNTIMES  default control,gray-static,go,node,php-fpm (any contract runtime, control)
  BENCH_ROUTES    default plaintext,json          BENCH_RATES    default 30000,60000
  BENCH_REPEATS   default 3                       BENCH_PROFILE  default quick
  BENCH_DURATION  seconds per point (default: the profile's)
  BENCH_BASELINE  another gray-static binary (say, built from main), run as the runtime
                  "gray-static-base" beside the tree's: before and after in one run
  BENCH_VARIANTS  more gray-static binaries as name=path,name=path (each a runtime of
                  that name, run as gray-static is): one option against another
  BENCH_PERF=1    afterwards, profile gray-static and each variant with perf (cpu-clock on
                  the server CPU) at the highest rate on each route, one more single-point
                  curve each, and print the top of each profile and its kernel/library split
  BENCH_RUN       the run directory (default BUILD/bench-fixtures/<UTC time>)
Writes RUN/bench-fixtures.json with every figure; RUN is an ordinary curve run directory.
"""
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
ENV = os.environ.get
RUNTIMES = ENV("BENCH_RUNTIMES", "control,gray-static,go,node,php-fpm").split(",")
ROUTES = ENV("BENCH_ROUTES", "plaintext,json").split(",")
RATES = [int(r) for r in ENV("BENCH_RATES", "30000,60000").split(",")]
REPEATS = int(ENV("BENCH_REPEATS", "3"))
PROFILE = ENV("BENCH_PROFILE", "quick")
BASELINE = ENV("BENCH_BASELINE")
# Other gray-static binaries, each run as a runtime of its own name (gray-static's command).
VARIANTS = ([("gray-static-base", BASELINE)] if BASELINE else []) + [
    tuple(v.split("=", 1)) for v in ENV("BENCH_VARIANTS", "").split(",") if v]
RUN = os.path.abspath(ENV("BENCH_RUN") or os.path.join(
    BUILD, "bench-fixtures", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())))
BIN = os.path.join(RUN, "bin")
SERVER_CPU = 0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return None if not n else xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def proc_steal():
    """{cpu: (steal, total)} in /proc/stat's ticks, per CPU."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            name, *v = line.split()
            if name.startswith("cpu") and name != "cpu":
                ticks = [int(x) for x in v]
                out[name] = (ticks[7], sum(ticks[:8]))
    return out


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def private_bin():
    """Copies of what the run executes: the tree is shared and a rebuild during the run must
    neither pull a binary away nor change a fixture's identity mid-run (that fails a point)."""
    os.makedirs(BIN, exist_ok=True)
    for name in ("kneebench", "kb-control", "gray-static", "go-server"):
        src = os.path.join(BUILD, name)
        if os.path.exists(src):
            shutil.copy2(src, os.path.join(BIN, name))
    for name, path in VARIANTS:
        shutil.copy2(path, os.path.join(BIN, name))


def derived_contract():
    """The tree's contract with kb-control (and the gray-static variants) as runtimes."""
    with open(os.path.join(ROOT, "contract", "contract.json")) as f:
        c = json.load(f)
    ctl = c["control"]
    c["runtimes"].append({"name": "control", "port": ctl["port"], "command": ctl["command"],
                          "version": ["{build}/kb-control", "--help"], "sources": ["control"],
                          "executables": ["{build}/kb-control"]})
    gray = next(r for r in c["runtimes"] if r["name"] == "gray-static")
    for i, (name, _) in enumerate(VARIANTS):
        if any(r["name"] == name for r in c["runtimes"]):
            raise SystemExit(f"bench-fixtures: variant {name} is already a runtime's name")
        v = json.loads(json.dumps(gray).replace("{build}/gray-static", "{build}/" + name))
        v.update(name=name, port=gray["port"] + 100 + i)
        c["runtimes"].append(v)
    path = os.path.join(RUN, "bench-contract.json")
    with open(path, "w") as f:
        json.dump(c, f, indent=1)
    return path


def curve(run, contract, runtimes, routes, rates, repeats):
    argv = [os.path.join(BIN, "kneebench"), "curve", "--run", run, "--contract", contract,
            "--profile", PROFILE, "--runtimes", ",".join(runtimes), "--routes", ",".join(routes),
            "--rates", ",".join(map(str, rates)), "--repeats", str(repeats), "--confirm", "1",
            "--free-ports", "--build", BIN]
    if ENV("BENCH_DURATION"):
        argv += ["--duration", ENV("BENCH_DURATION")]
    rc = subprocess.call(argv, env=dict(os.environ, KB_ROOT=ROOT))
    if rc not in (0,):
        raise SystemExit(f"bench-fixtures: kneebench curve exited {rc}")


def points(run):
    out = []
    pdir = os.path.join(run, "points")
    for name in sorted(os.listdir(pdir)):
        path = os.path.join(pdir, name, "verdict.json")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            v = json.load(f)
        load, srv = v.get("load") or {}, v.get("server") or {}
        steal = ((v.get("host") or {}).get("server_cpus") or {})
        out.append({"id": v["point"], "runtime": v["runtime"], "route": v["route"],
                    "rate": v["rate"], "repeat": v["repeat"], "verdict": v["verdict"],
                    "us": srv.get("cpu_us_per_response"), "rss": srv.get("rss_max_bytes"),
                    "p99_us": (load.get("corrected_us") or {}).get("p99"),
                    "p999_us": (load.get("corrected_us") or {}).get("p999"),
                    "steal": steal.get("steal_fraction"), "steal_max": steal.get("steal_max_fraction")})
    return out


def cell(pts, rt, route, rate):
    return sorted((p for p in pts if (p["runtime"], p["route"], p["rate"]) == (rt, route, rate)),
                  key=lambda p: p["repeat"])


def ratio(pts, rt, ref, route, rate):
    """Median over repeats of rt's cost over ref's in the same repeat."""
    a = {p["repeat"]: p["us"] for p in cell(pts, rt, route, rate) if p["us"]}
    b = {p["repeat"]: p["us"] for p in cell(pts, ref, route, rate) if p["us"]}
    return median([a[k] / b[k] for k in a if k in b])


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def summarise(pts):
    rows = []
    print(f"\n{'route':<9} {'rate':>6} {'runtime':<16} {'us/resp':>7} {'min-max':>11} "
          f"{'/control':>8} {'/go':>5} {'p99 ms':>7} {'p99.9 ms':>8} {'RSS MiB':>7} "
          f"{'steal srv':>13}  verdicts")
    for route in ROUTES:
        for rate in RATES:
            for rt in sorted({p["runtime"] for p in pts}, key=lambda r: (r != "control", r)):
                c = cell(pts, rt, route, rate)
                us = [p["us"] for p in c if p["us"]]
                if not c:
                    continue
                r = {"route": route, "rate": rate, "runtime": rt, "us_median": median(us),
                     "us_min": min(us, default=None), "us_max": max(us, default=None),
                     "vs_control": ratio(pts, rt, "control", route, rate),
                     "vs_go": ratio(pts, rt, "go", route, rate),
                     "p99_us_median": median([p["p99_us"] for p in c if p["p99_us"] is not None]),
                     "p999_us_median": median([p["p999_us"] for p in c if p["p999_us"] is not None]),
                     "rss_max_bytes": max((p["rss"] or 0 for p in c), default=0),
                     "steal_mean": median([p["steal"] for p in c if p["steal"] is not None]),
                     "steal_max": max((p["steal_max"] or 0 for p in c), default=0),
                     "verdicts": [p["verdict"] for p in c]}
                rows.append(r)
                mm = f"{fmt(r['us_min'], '.2f')}-{fmt(r['us_max'], '.2f')}"
                st = f"{100 * (r['steal_mean'] or 0):.1f}%/{100 * r['steal_max']:.1f}%"
                print(f"{route:<9} {rate:>6} {rt:<16} {fmt(r['us_median'], '7.2f')} {mm:>11} "
                      f"{fmt(r['vs_control'], '8.2f')} {fmt(r['vs_go'], '5.2f')} "
                      f"{fmt(r['p99_us_median'] and r['p99_us_median'] / 1000, '7.2f')} "
                      f"{fmt(r['p999_us_median'] and r['p999_us_median'] / 1000, '8.2f')} "
                      f"{r['rss_max_bytes'] / 1048576:7.1f} {st:>13}  {','.join(r['verdicts'])}")
    print("(us/resp: median over repeats; /control, /go: median of per-repeat ratios; "
          "steal srv: the host's steal from CPU 0 in those points, median / largest second)")
    if "plaintext" in ROUTES and "json" in ROUTES:
        print("\njson / plaintext (median of per-repeat ratios):")
        for rt in sorted({p["runtime"] for p in pts}):
            for rate in RATES:
                a = {p["repeat"]: p["us"] for p in cell(pts, rt, "json", rate) if p["us"]}
                b = {p["repeat"]: p["us"] for p in cell(pts, rt, "plaintext", rate) if p["us"]}
                x = median([a[k] / b[k] for k in a if k in b])
                print(f"  {rt:<16} {rate:>6}  {fmt(x, '.3f')}")
    return rows


def profile(contract, runtime, route, rate):
    """One more point of a gray-static runtime under perf (cpu-clock on the server CPU only:
    no hardware counters in this VM); the top of the flat profile of its own samples, and
    how they split between the kernel and each library."""
    name = f"perf-{runtime}-{route}-{rate}"
    run, data = os.path.join(RUN, name), os.path.join(RUN, name + ".data")
    rec = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-C",
                            str(SERVER_CPU), "-o", data], stdout=subprocess.DEVNULL)
    try:
        curve(run, contract, [runtime], [route], [rate], 1)
    finally:
        rec.send_signal(2)
        rec.wait()
    rep = subprocess.run(["perf", "report", "-i", data, "--comm", runtime[:15], "--stdio",
                          "--no-children", "--percentage", "relative", "--sort", "dso,sym"],
                         capture_output=True, text=True)
    rows = [ln for ln in rep.stdout.splitlines() if ln.strip() and not ln.startswith("#")]
    split = {}
    for ln in rows:
        f = ln.split()
        if len(f) >= 4 and f[0].endswith("%"):
            key = "kernel" if f[2] == "[k]" else f[1]
            split[key] = split.get(key, 0.0) + float(f[0][:-1])
    with open(os.path.join(RUN, name + ".txt"), "w") as f:
        f.write(rep.stdout)
    print(f"\nperf, {runtime}, {route} at {rate}/s (share of its own samples on CPU "
          f"{SERVER_CPU}; whole report in {run}.txt):")
    print("  " + ", ".join(f"{k} {v:.1f} %" for k, v in sorted(split.items(), key=lambda x: -x[1])))
    for ln in rows[:25]:
        print("  " + ln.rstrip())
    return {"split": split, "top": rows[:40]}


def main():
    if os.cpu_count() < 2:
        raise SystemExit("bench-fixtures needs two CPUs (server on 0, client on 1)")
    os.makedirs(RUN, exist_ok=True)
    private_bin()
    contract = derived_contract()
    runtimes = RUNTIMES + [name for name, _ in VARIANTS]
    s0, la0, t0 = proc_steal(), loadavg(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"bench-fixtures: {','.join(runtimes)} x {','.join(ROUTES)} x "
          f"{','.join(map(str, RATES))} req/s, {REPEATS} repeats, profile {PROFILE}, into {RUN}")
    print(f"  start {t0}, load average {la0}")
    curve(RUN, contract, runtimes, ROUTES, RATES, REPEATS)
    s1, la1 = proc_steal(), loadavg()
    rows = summarise(points(RUN))
    steal = {cpu: (s1[cpu][0] - s0[cpu][0]) / max(s1[cpu][1] - s0[cpu][1], 1) for cpu in s1 if cpu in s0}
    print("\nhost steal over the run (/proc/stat): " +
          ", ".join(f"{cpu} {100 * f:.2f} %" for cpu, f in sorted(steal.items())) +
          f"; load average {la0} at the start, {la1} at the end")
    results = {"started_at": t0, "runtimes": runtimes, "routes": ROUTES, "rates": RATES,
               "repeats": REPEATS, "profile": PROFILE, "rows": rows, "steal_fraction": steal,
               "loadavg": [la0, la1], "variants": dict(VARIANTS)}
    if ENV("BENCH_PERF") == "1":
        grays = [r for r in runtimes if r == "gray-static" or r in dict(VARIANTS)]
        results["perf"] = {f"{rt} {route}": profile(contract, rt, route, max(RATES))
                           for route in ROUTES for rt in grays}
    out = os.path.join(RUN, "bench-fixtures.json")
    with open(out + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.rename(out + ".tmp", out)
    print(f"  figures: {out}")


if __name__ == "__main__":
    main()
