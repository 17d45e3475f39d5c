"""bench_loadgen.py -- `make bench-loadgen`: measurements of the load generator, not a test.

Server pinned to CPU 0, client to CPU 1, side by side in one run:
  1. client CPU per completed request, kneebench vs Debian's wrk (closed loop, same route,
     same 4 threads x 256 connections), against gray-static's plaintext if build/gray-static
     exists, else kb-control; each split into user and kernel time, since the kernel's part
     of wrk's cost (loopback TCP, which every client pays per request) is the floor;
  2. achieved/requested at 20k, 45k and 60k req/s against that same target;
  3. at 45k against kb-control, the send quantum (contract default, 0, 100) and --eager-rx;
  4. against kb-control, the highest rate kneebench holds from one core with client CPU
     under 80 % and send-lag p99 under 1 ms (and delivery >= 0.995), climbing a ladder, with
     the contract's 4 threads and with one; a rung is tried twice before the climb stops;
  5. a rate sweep from 2k to 75k against kb-control with the curve's client (SCHED_FIFO,
     threads fitted to the client CPU): client CPU, its cost per request, send lag and rx
     delay p99 at each rate, and whether the client's CPU ever falls as the rate rises by
     more than 0.05 (the client must not cost most where the rate is lowest), beside
     --exact-threads (the contract's 4 threads on one CPU) at the same rates; every rate
     once per round over BENCH_SWEEP_ROUNDS (3) interleaved rounds, medians judged.
BENCH_SWEEP_ONLY=1 runs the sweep alone.
BENCH_RT=1 runs both sides SCHED_FIFO (for a busy shared host; measured here it protects
the send lag but raises the client's CPU per request, RT wake-ups across CPUs being dearer); BENCH_DURATION and
BENCH_ROUNDS size it. Prints a table and writes every figure to $BUILD/bench-loadgen.json. The machine is shared:
figures are noisy, compare them as ratios from one run.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
SERVER_CPU, CLIENT_CPU = "0", "1"
DURATION, WARMUP = float(os.environ.get("BENCH_DURATION", 5)), 1
TMP = tempfile.mkdtemp(prefix="kb-bench-")
# Private copies: the tree is shared and a rebuild mid-run must not pull a binary away.
KB = shutil.copy2(os.path.join(BUILD, "kneebench"), os.path.join(TMP, "kneebench"))
CONTROL = shutil.copy2(os.path.join(BUILD, "kb-control"), os.path.join(TMP, "kb-control"))
GRAY = os.path.join(BUILD, "gray-static")
if os.path.exists(GRAY):
    GRAY = shutil.copy2(GRAY, os.path.join(TMP, "gray-static"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 2))
# BENCH_RT=1: server and clients (wrk and kneebench alike) run SCHED_FIFO 1, so that other
# work on a shared host cannot starve either side of the comparison.
RT = ["chrt", "-f", "1"] if os.environ.get("BENCH_RT") == "1" else []


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"server on port {port} did not come up")


def start(name, argv, port):
    p = subprocess.Popen([*RT, "taskset", "-c", SERVER_CPU, *argv], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    wait_port(port, p)
    return p


def stop(p):
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def wrk(url):
    argv = [*RT, "taskset", "-c", CLIENT_CPU, "wrk", "-t4", "-c256", f"-d{int(DURATION)}s", url]
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.path.join(TMP, "wrk.out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    text = open(os.path.join(TMP, "wrk.out")).read()
    m = re.search(r"(\d+) requests in ([\d.]+)s", text)
    if status != 0 or not m:
        raise SystemExit(f"wrk failed: {text}")
    n, secs = int(m.group(1)), float(m.group(2))
    cpu = ru.ru_utime + ru.ru_stime
    errs = re.search(r"Socket errors: .*|Non-2xx.*", text)
    return {"requests": n, "seconds": secs, "rps": n / secs, "cpu_s": cpu,
            "cpu_us_per_request": cpu * 1e6 / n, "user_us_per_request": ru.ru_utime * 1e6 / n,
            "kernel_us_per_request": ru.ru_stime * 1e6 / n, "errors_line": errs.group(0) if errs else None}


def kneebench(url, route, rate, duration=DURATION, extra=()):
    out = os.path.join(TMP, f"kb-{rate}.json")
    argv = [*RT, KB, "load", "--url", url, "--route", route, "--rate", str(rate), "--duration",
            str(duration), "--warmup", str(WARMUP), "--cpus", CLIENT_CPU, "--json", out, "--quiet",
            *extra]
    log = os.path.join(TMP, "kb.log")
    pid = os.fork()
    if pid == 0:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    if status != 0:
        raise SystemExit(f"kneebench failed ({status}): {open(log).read()}")
    j = json.load(open(out))
    # The JSON's CPU covers the measured interval; the whole run's user/system split (setup
    # and warmup included) says how much of it is the kernel's.
    kernel_share = ru.ru_stime / max(ru.ru_utime + ru.ru_stime, 1e-9)
    return {"rate": rate, "delivery": j["delivery"], "achieved_rps": j["achieved_rps"],
            "kernel_share": kernel_share, "send_quantum_us": j["send_quantum_us"],
            "send_quantum_active": j["send_quantum_active"],
            "cpu_fraction": j["client_cpu_fraction"], "cpu_us_per_request": j["client_cpu_us_per_request"],
            "lag_p99_us": j["lag_us"]["p99"], "corrected_p99_us": j["corrected_us"]["p99"],
            "rx_delay_p99_us": (j.get("rx_delay_us") or {}).get("p99"), "threads": j["threads"],
            "uncorrected_p99_us": j["uncorrected_us"]["p99"], "errors": j["errors"]["total"],
            "mismatches": j["mismatches"]["total"]}


def holds(r):
    return r["cpu_fraction"] < 0.80 and r["lag_p99_us"] < 1000 and r["delivery"] >= 0.995 \
        and r["errors"] == 0


def row(label, r):
    print(f"  {label:<22} {r['rate']:>7} {r['achieved_rps']:>10.0f} {r['delivery']:>8.4f} "
          f"{100 * r['cpu_fraction']:>6.1f}% {r['cpu_us_per_request']:>7.2f} {r['lag_p99_us']:>8} "
          f"{r['corrected_p99_us']:>9} {r['errors']:>6}")


def header():
    print(f"  {'':<22} {'rate':>7} {'achieved':>10} {'delivery':>8} {'cpu':>7} {'us/req':>7} "
          f"{'lag p99':>8} {'corr p99':>9} {'errors':>6}")


SWEEP_RATES = (2000, 4000, 8000, 12000, 15625, 20000, 30000, 45000, 60000, 75000)


def monotone_violations(rows, slack=0.05):
    """Rates whose client CPU exceeds the next higher rate's by more than slack."""
    return [(a["rate"], b["rate"]) for a, b in zip(rows, rows[1:])
            if a["cpu_fraction"] > b["cpu_fraction"] + slack]


SWEEP_ROUNDS = int(os.environ.get("BENCH_SWEEP_ROUNDS", 3))


def sweep_rounds(curl, extra):
    """Every rate once per round, ascending then descending in turn: the host drifts by
    several points of client CPU within minutes (measured here: the same 2k point at 13 %
    and 22 % ten minutes apart), so rates run one after another would read the drift as a
    rate effect. Each rate's figures are the median over the rounds, min-max beside."""
    per = {rate: [] for rate in SWEEP_RATES}
    for rnd in range(SWEEP_ROUNDS):
        for rate in (SWEEP_RATES if rnd % 2 == 0 else SWEEP_RATES[::-1]):
            per[rate].append(kneebench(curl, "plaintext", rate, extra=extra))
    rows = []
    for rate in SWEEP_RATES:
        rs = per[rate]
        row = {k: median([r[k] for r in rs]) for k in
               ("cpu_fraction", "cpu_us_per_request", "lag_p99_us", "delivery")}
        rx = [r["rx_delay_p99_us"] for r in rs if r["rx_delay_p99_us"] is not None]
        row.update(rate=rate, threads=rs[0]["threads"], rx_delay_p99_us=median(rx) if rx else None,
                   cpu_fraction_min=min(r["cpu_fraction"] for r in rs),
                   cpu_fraction_max=max(r["cpu_fraction"] for r in rs), rounds=rs)
        rows.append(row)
    return rows


def sweep(curl, results):
    print(f"  rate sweep against kb-control (client --rt as in the curve), {SWEEP_ROUNDS} interleaved "
          f"rounds, medians:")
    print(f"  {'':<22} {'rate':>7} {'thr':>3} {'cpu':>7} {'cpu min-max':>13} {'us/req':>7} "
          f"{'lag p99':>8} {'rx p99':>8} {'delivery':>8}")
    for label, extra, key in (("fitted threads", ("--rt",), "sweep"),
                              ("--exact-threads (4)", ("--rt", "--exact-threads"), "sweep_exact_threads")):
        rows = sweep_rounds(curl, extra)
        for r in rows:
            rx = "-" if r["rx_delay_p99_us"] is None else f"{r['rx_delay_p99_us']:.0f}"
            print(f"  {label:<22} {r['rate']:>7} {r['threads']:>3} {100 * r['cpu_fraction']:>6.1f}% "
                  f"{100 * r['cpu_fraction_min']:>5.1f}-{100 * r['cpu_fraction_max']:>5.1f}% "
                  f"{r['cpu_us_per_request']:>7.2f} {r['lag_p99_us']:>8.0f} {rx:>8} {r['delivery']:>8.4f}")
        bad = monotone_violations(rows)
        results[key] = {"rounds": SWEEP_ROUNDS, "rows": rows, "monotone_within_0_05": not bad,
                        "violations": bad}
        print(f"  {label}: median client CPU never above the next higher rate's + 0.05: "
              f"{'yes' if not bad else 'NO, at ' + ', '.join(f'{a} > {b}' for a, b in bad)}")


def main():
    if os.cpu_count() < 2:
        raise SystemExit("bench-loadgen needs two CPUs (server on 0, client on 1)")
    for tool in ("taskset", "wrk"):
        if not shutil.which(tool):
            raise SystemExit(f"bench-loadgen needs {tool}")
    results = {"server_cpu": SERVER_CPU, "client_cpu": CLIENT_CPU, "duration_s": DURATION,
               "warmup_s": WARMUP, "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    gray = GRAY
    cport = free_port()
    control = start("kb-control", [CONTROL, "--port", str(cport)], cport)
    if os.environ.get("BENCH_SWEEP_ONLY") == "1":
        try:
            sweep(f"http://127.0.0.1:{cport}/plaintext", results)
        finally:
            stop(control)
        return write_results(results)
    try:
        if os.path.exists(gray):
            gport = free_port()
            target = start("gray-static", [gray, "--port", str(gport), "--bind", "127.0.0.1"], gport)
            tname, turl = "gray-static", f"http://127.0.0.1:{gport}/plaintext"
        else:
            target, tname, turl = None, "kb-control", f"http://127.0.0.1:{cport}/plaintext"
        try:
            print(f"bench-loadgen: server CPU {SERVER_CPU}, client CPU {CLIENT_CPU}, target {tname} "
                  f"({turl}), {DURATION:.0f}s per run{', SCHED_FIFO' if RT else ''}")
            results["sched_fifo"] = bool(RT)
            results["target"] = tname
            # Two interleaved rounds (wrk, then kneebench at each rate), medians reported:
            # the machine is shared, so side by side and twice is the least it takes.
            rounds = []
            header()
            for rnd in range(ROUNDS):
                w = wrk(turl)
                print(f"  wrk -t4 -c256 closed loop: {w['rps']:.0f} req/s, {w['cpu_s']:.2f} CPU s, "
                      f"{w['cpu_us_per_request']:.2f} us CPU per request ({w['user_us_per_request']:.2f} user, "
                      f"{w['kernel_us_per_request']:.2f} kernel) {w['errors_line'] or ''}")
                rs = []
                for rate in (20000, 45000, 60000):
                    r = kneebench(turl, "plaintext", rate)
                    rs.append(r)
                    row(f"kneebench -> {tname}", r)
                rounds.append({"wrk": w, "kneebench": rs})
            results["rounds"] = rounds
            wrk_us = median([rd["wrk"]["cpu_us_per_request"] for rd in rounds])
            wrk_kernel = median([rd["wrk"]["kernel_us_per_request"] for rd in rounds])
            results["wrk_cpu_us_per_request_median"] = wrk_us
            results["wrk_kernel_us_per_request_median"] = wrk_kernel
            runs = []
            for k, rate in enumerate((20000, 45000, 60000)):
                per = [rd["kneebench"][k] for rd in rounds]
                r = {"rate": rate,
                     "cpu_us_per_request": median([x["cpu_us_per_request"] for x in per]),
                     "kernel_share": median([x["kernel_share"] for x in per]),
                     "delivery": median([x["delivery"] for x in per])}
                r["vs_wrk_cpu_per_request"] = r["cpu_us_per_request"] / wrk_us
                runs.append(r)
            results["rates"] = runs
            print(f"  medians of {ROUNDS} rounds: wrk {wrk_us:.2f} us CPU per request, {wrk_kernel:.2f} of it "
                  f"in the kernel ({100 * wrk_kernel / wrk_us:.0f} %)")
            for r in runs:
                print(f"  at {r['rate']}: kneebench {r['cpu_us_per_request']:.2f} us ({100 * r['kernel_share']:.0f} % kernel), "
                      f"/wrk = {r['vs_wrk_cpu_per_request']:.2f} "
                      f"(target <= 0.5); delivery {r['delivery']:.4f} (target >= 0.995 unless the server saturates)")
            # The floor: every client sends and receives each request through the same loopback
            # TCP, so the kernel's part of wrk's cost is a bound no user-space design goes under.
            results["kernel_floor"] = {"wrk_kernel_share": wrk_kernel / wrk_us,
                                       "cpu_fraction_at_75k": wrk_kernel * 75000 / 1e6}
            print(f"  floor: wrk's kernel time alone is {wrk_kernel / wrk_us:.2f}x wrk's cost per request, and "
                  f"{100 * wrk_kernel * 75000 / 1e6:.0f} % of a CPU at 75000 req/s")
        finally:
            if target:
                stop(target)
        curl = f"http://127.0.0.1:{cport}/plaintext"
        print("  send quantum and receive mode at 45000 against kb-control (interleaved):")
        header()
        variants = (("default (contract)", ()), ("--send-quantum-us 0", ("--send-quantum-us", "0")),
                    ("--send-quantum-us 100", ("--send-quantum-us", "100")), ("--eager-rx", ("--eager-rx",)))
        modes = {name: [] for name, _ in variants}
        for _ in range(ROUNDS):
            for name, extra in variants:
                r = kneebench(curl, "plaintext", 45000, extra=extra)
                modes[name].append(r)
                row(name, r)
        results["modes_45k"] = modes
        sweep(curl, results)
        for name, rs in modes.items():
            print(f"    {name:<22} median {median([x['cpu_us_per_request'] for x in rs]):.2f} us CPU/request, "
                  f"lag p99 median {median([x['lag_p99_us'] for x in rs]):.0f} us")
        print("  ladder against kb-control (holds: CPU < 80 %, lag p99 < 1 ms, delivery >= 0.995, no errors):")
        header()
        for label, extra, key in (("contract (4 threads)", (), "ladder"),
                                  ("--threads 1", ("--threads", "1"), "ladder_threads_1")):
            ladder, best = [], 0
            for rate in (30000, 45000, 60000, 75000, 90000, 105000, 120000):
                # Two tries per rung, as kneebench calibrate does: one stall of this host
                # misses the lag bound at any rate. Both are printed and kept.
                for attempt in range(2):
                    r = kneebench(curl, "plaintext", rate, extra=extra)
                    r["holds"], r["attempt"] = holds(r), attempt + 1
                    ladder.append(r)
                    row(label + (" (again)" if attempt else "") if r["holds"] else "  (not held)", r)
                    if r["holds"]:
                        break
                if not r["holds"]:
                    break
                best = rate
            results[key] = ladder
            results["highest_held_rps" if key == "ladder" else "highest_held_rps_threads_1"] = best
            print(f"  highest rate held from one core, {label}: {best} req/s (target >= 75000)")
    finally:
        stop(control)
    write_results(results)


def write_results(results):
    out = os.path.join(BUILD, "bench-loadgen.json")
    with open(out + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.rename(out + ".tmp", out)
    print(f"  figures: {out}")


if __name__ == "__main__":
    main()
