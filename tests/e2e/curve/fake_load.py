#!/usr/bin/env python3
"""fake_load.py -- stands in for `kneebench load` in the curve's tests: same arguments, sends
real requests (a few, blocking, via urllib) so a dead fixture shows as errors, and writes the
load generator's JSON shape with figures computed from what it did. FAKE_LOAD_P99_US and
FAKE_LOAD_CLIENT_CPU force latency / client-CPU figures so every verdict can be provoked;
FAKE_LOAD_KNEE_RPS makes every rate from it up uncontrolled, a knee the test knows;
FAKE_LOAD_HOLD_KNEE_RPS the same for points of half a second and longer (a hold's), a server
whose backlog shows only in a long point."""
import json, os, sys, time, urllib.request

def main(argv):
    a = dict(zip(argv[2::2], argv[3::2])) if argv[1] == "load" else {}
    rate = float(a["--rate"]); dur = float(a["--duration"])
    t_end = time.monotonic() + float(a["--warmup"]) + dur
    ok = err = 0; first = ""; lat = []
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(a["--url"], timeout=1) as r:
                r.read(); ok += 1
        except Exception as e:
            err += 1; first = first or str(e)
        lat.append((time.monotonic() - t0) * 1e6)
        time.sleep(0.05)
    p99 = float(os.environ.get("FAKE_LOAD_P99_US", sorted(lat)[int(0.99 * (len(lat) - 1))]))
    # a server whose knee is known: uncontrolled (p99 2 s) from FAKE_LOAD_KNEE_RPS up
    if rate >= float(os.environ.get("FAKE_LOAD_KNEE_RPS", "inf")):
        p99 = 2e6
    if dur >= 0.5 and rate >= float(os.environ.get("FAKE_LOAD_HOLD_KNEE_RPS", "inf")):
        p99 = 8e5
    frac = float(os.environ.get("FAKE_LOAD_CLIENT_CPU", "0.05"))
    completed = int(rate * dur) if err == 0 else int(rate * dur * ok / max(1, ok + err))
    # whole microseconds, as kneebench load writes every latency (and the curve copies it)
    L = lambda p: {"count": completed, "min": 1, "mean": round(p / 2), "p50": round(p / 2),
                   "p90": round(p / 1.5), "p99": round(p), "p999": round(p), "max": round(p)}
    out = {"requested_rps": rate, "achieved_rps": completed / dur, "delivery": completed / (rate * dur),
           "scheduled": int(rate * dur), "sent": int(rate * dur), "completed": completed,
           "timeouts": 0, "unfinished_at_drain_end": 0, "errors": {"total": err, "connect": err, "read": 0, "write": 0,
           "timeout": 0, "peer_close": 0, "malformed": 0}, "status": {"200": completed},
           "non2xx": 0, "mismatches": {"total": 0, "status": 0, "content_type": 0, "body": 0},
           "client_cpu_seconds": frac * dur, "client_cpus": 1, "client_cpu_fraction": frac,
           "corrected_us": L(p99), "uncorrected_us": L(p99), "lag_us": L(10.0),
           "first_error": first, "fake": True}
    for k in ("--hgrm", "--uncorrected-hgrm"):
        open(a[k], "w").write("       Value     Percentile TotalCount 1/(1-Percentile)\n")
    tmp = a["--json"] + ".tmp"
    json.dump(out, open(tmp, "w"), indent=1); os.rename(tmp, a["--json"])
    return 0

sys.exit(main(sys.argv))
