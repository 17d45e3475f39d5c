"""synthrun -- a run directory laid out as `kneebench curve` writes it, with figures chosen by
the test (for the report's writers: charts, report.html), and a PNG decoder for checking what
a renderer drew. Stdlib only."""
import json
import os
import struct
import zlib

from kbenv import CONTRACT

CRIT = CONTRACT["comparison"]["criteria"]
DURATION, DRAIN = 3.0, 1.0


def hist(p99, bound, count):
    """corrected_us as load.json has it (us); p99 None: an empty histogram."""
    if p99 is None:
        return {"count": 0, "min": None, "mean": None, "p50": None, "p90": None, "p99": None,
                "p999": None, "max": None, "bounded": 0, "bound_from_us": None,
                "is_bound": {k: False for k in ("min", "mean", "p50", "p90", "p99", "p999", "max")}}
    return {"count": count, "min": 40, "mean": p99 / 3, "p50": p99 / 4, "p90": p99 / 2,
            "p99": p99, "p999": p99 * 1.2, "max": p99 * 1.5,
            "bounded": 10 if bound else 0, "bound_from_us": p99 if bound else None,
            "is_bound": {"min": False, "mean": False, "p50": False, "p90": False, "p99": bound,
                         "p999": bound, "max": bound}}


def synth_point(d, p, verdict, server, achieved, p99, bound, errors, cpu_us=20.0):
    """One finished point, p = {id, runtime, route, rate}, as the curve leaves it."""
    scheduled = int(p["rate"] * DURATION)
    load = {"kneebench_load": 1, "route": p["route"], "requested_rps": float(p["rate"]),
            "threads": 1, "threads_requested": 4, "client_cpus": 1, "connections": 256,
            "warmup_s": 1.0, "duration_s": DURATION, "drain_s": DRAIN,
            "scheduled": scheduled, "completed": scheduled - errors,
            "achieved_rps": float(achieved), "delivery": achieved / p["rate"],
            "errors": {"total": errors, "timeout": errors}, "non2xx": 0,
            "mismatches": {"total": 0}, "client_cpu_fraction": 0.4,
            "corrected_us": hist(p99, bound, scheduled), "lag_us": hist(80, False, scheduled),
            "rx_delay_us": hist(60, False, scheduled)}
    v = {"point": p["id"], "runtime": p["runtime"], "route": p["route"], "rate": p["rate"],
         "repeat": 1, "verdict": verdict, "reason": "" if verdict == "controlled" else verdict,
         "client_trust": {"ok": verdict != "client-limited",
                          "reason": "send lag p99 > 1 ms" if verdict == "client-limited" else ""},
         "unconstrained": False,
         "server": {"cpu_mean_fraction": 0.5, "rss_max_bytes": 1 << 20,
                    "cpu_us_per_response": cpu_us},
         "load": load}
    if server is not None:
        v["server_verdict"] = server
        v["server_reason"] = "" if server == "controlled" else server
    pd = os.path.join(d, "points", p["id"])
    os.makedirs(pd)
    json.dump({"point": p["id"]}, open(os.path.join(pd, "command.json"), "w"))
    json.dump(load, open(os.path.join(pd, "load.json"), "w"))
    json.dump(v, open(os.path.join(pd, "verdict.json"), "w"))
    json.dump({"point": p["id"], "verdict": verdict}, open(os.path.join(pd, "DONE"), "w"))


def synth_run(d, runtimes, routes, rates, points, baseline=None):
    """A run directory as `kneebench curve` writes it; points[(rt, route, rate)] gives
    (verdict, server_verdict, achieved, p99_us, p99_is_bound, errors[, cpu_us_per_response]).
    baseline: the plan's comparison baseline (none when not given)."""
    ids = [{"id": f"{rt}-{route}-{rate}", "runtime": rt, "route": route, "rate": rate,
            "repeat": 1} for rt in runtimes for route in routes for rate in rates]
    plan = {"profile": "quick", "duration_s": DURATION, "warmup_s": 1.0, "drain_s": DRAIN,
            "threads": 1, "connections": 256, "repeats": 1, "runtimes": runtimes,
            "routes": routes, "rates": rates, "backend": "native", "unconstrained": False,
            "server_cpus": "0", "client_cpus": "1", "criteria": CRIT, "points": ids}
    if baseline:
        plan["baseline"] = baseline
    os.makedirs(d)
    json.dump(plan, open(os.path.join(d, "plan.json"), "w"), indent=1)
    json.dump({"started": "2026-01-01T00:00:00Z", "command_line": ["kneebench", "curve"],
               "host": {}, "backend": "native", "unconstrained": False},
              open(os.path.join(d, "run.json"), "w"))
    for rt in runtimes:
        fx = os.path.join(d, "fixtures", rt)
        os.makedirs(fx)
        json.dump({"cpus": 1}, open(os.path.join(fx, "limits.json"), "w"))
        json.dump({"sha256": "synthetic"}, open(os.path.join(fx, "identity.json"), "w"))
        json.dump({"failed": False, "reason": ""}, open(os.path.join(fx, "preflight.json"), "w"))
    for p in ids:
        synth_point(d, p, *points[(p["runtime"], p["route"], p["rate"])])


def decode_png(data):
    """A non-interlaced 8-bit RGB or RGBA PNG (what rsvg-convert writes) into RGB rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw, stride, prev, rows, i = zlib.decompress(idat), w * bpp, bytearray(w * bpp), [], 0
    for _ in range(h):
        ft, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


