#!/usr/bin/env python3
"""Closed-loop throughput of every fixture and route with Debian's wrk, side by side in one run.

Each fixture is started from the contract's argv template exactly as the conformance suite
starts it, pinned with taskset to the contract's server CPUs; wrk runs pinned to the next
CPU, one fixture and route after the other. This is a sanity figure (closed loop, so it
says nothing about latency under a fixed rate); the comparison proper is the open-loop curve.

  wrk_closed_loop.py --build DIR [--duration 5s] [--threads 2] [--connections 256]
                     [--repeat N]

With --repeat N the whole sequence runs N times, the runtime order rotated each time (the
host is shared and noisy), and the summary gives the median with the min-max range.
Beside wrk's req/s it gives requests per CPU-second the fixture's processes consumed
(utime+stime from /proc): on a shared host a server pinned to a busy CPU gets only part of
it, and this figure is what it would do with the whole CPU.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

import test_conformance as tc


def client_cpu(server_cpus):
    """The first CPU after the server's (the contract's client_cpus is an open range)."""
    last = max(int(p.split("-")[-1]) for p in server_cpus.split(","))
    if last + 1 >= os.cpu_count():
        raise SystemExit("no CPU left for the client")
    return str(last + 1)


def cpu_seconds(root_pid):
    """utime+stime of every process of the fixture (all its threads included)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in tc.descendants(root_pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


def run_wrk(port, path, args, cpu):
    cmd = ["taskset", "-c", cpu, "wrk", f"-t{args.threads}", f"-c{args.connections}",
           f"-d{args.duration}", f"http://{tc.BIND}:{port}{path}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout
    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: (.*)", out)
    return (float(rps.group(1)) if rps else None,
            int(total.group(1)) if total else 0,
            int(non2xx.group(1)) if non2xx else 0,
            sock.group(1).strip() if sock else "none",
            " ".join(cmd))


def measure(rt, args, server_cpus, cpu, results):
    fx = tc.Fixture(rt, os.path.abspath(args.build), False)
    reason = fx.missing()
    if reason:
        print(f"{rt['name']}: skipped ({reason})", flush=True)
        return
    fx.rt = dict(rt, command=["taskset", "-c", server_cpus] + rt["command"])
    try:
        fx.start()
        for route in tc.exact_routes(rt["name"]):
            cpu0 = cpu_seconds(fx.proc.pid)
            rps, total, non2xx, sock, cmd = run_wrk(fx.port, route["path"], args, cpu)
            used = cpu_seconds(fx.proc.pid) - cpu0
            per_cpu = total / used if used > 0 else None
            ok = non2xx == 0 and sock == "none"
            results.setdefault((rt["name"], route["name"]), []).append(
                (rps, per_cpu) if ok else None)
            print(f"{rt['name']:12} {route['name']:10} {rps or 0:10.0f} req/s  "
                  f"{per_cpu or 0:10.0f} req/CPU-s  "
                  f"non-2xx {non2xx}  socket errors: {sock}   [{cmd}]", flush=True)
        if not fx.running():
            print(f"{rt['name']}: exited during the run", flush=True)
    finally:
        fx.stop()
        fx.cleanup()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--duration", default="5s")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--connections", type=int, default=256)
    ap.add_argument("--runtime", action="append")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed")
    server_cpus = tc.CONTRACT["limits"]["server_cpus"]
    cpu = client_cpu(server_cpus)
    # a variant (gray-static-blocking) differs from its runtime on /db only: not measured here
    runtimes = [rt for rt in tc.CONTRACT["runtimes"]
                if rt["name"] in (args.runtime or []) or
                (not args.runtime and not rt.get("variant_of"))]
    results = {}
    for r in range(args.repeat):
        k = r % len(runtimes)
        for rt in runtimes[k:] + runtimes[:k]:
            measure(rt, args, server_cpus, cpu, results)
    print(f"\nruntime      route       req/s (median of {args.repeat}; min-max)"
          "      req per server CPU-second (median; min-max)")
    for rt in runtimes:
        for route in tc.exact_routes(rt["name"]):
            v = [x for x in results.get((rt["name"], route["name"]), []) if x is not None]
            if v:
                a = [x[0] for x in v if x[0]]
                b = [x[1] for x in v if x[1]]
                print(f"{rt['name']:12} {route['name']:10} {statistics.median(a):8.0f}"
                      f"  ({min(a):.0f}-{max(a):.0f})"
                      f"      {statistics.median(b):8.0f}  ({min(b):.0f}-{max(b):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
