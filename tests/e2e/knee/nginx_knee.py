"""nginx_knee.py -- `kneebench knee` against a server nobody here wrote: nginx from Debian,
one worker pinned to a CPU, access log off, compressing a 4 KB text at gzip level 9 on
every request (about 605 bytes out). It locates the knee, then loads the held end and 1.1 x
(--over) the missed end as independent points of --point seconds, and prints the figures with the
host's steal beside each; with --wrk2 PATH it also loads fractions of the knee with
`kneebench load` (both dispatch models) and with wrk2 side by side, each at the same rate,
one after another, repeated --repeats times in a rotating order.

  tests/lib/py tests/e2e/knee/nginx_knee.py [--hold 30] [--point 30] [--over 1.1]
      [--wrk2 /path/wrk] [--fractions 0.5,0.8,0.9,1.0] [--repeats N] [--json OUT]

nginx runs as this user from a temporary directory on 127.0.0.1, started and stopped here
by its PID. Exit 0 when every step ran (what the figures say is for the reader or the test
that runs this), 1 when one could not, 77 when nginx is not installed."""
import argparse
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

from kbcontrol import Control
from kbenv import KB

SERVER_CPU, CLIENT_CPU = "0", "1"


def steal():
    """Per-CPU steal jiffies from /proc/stat."""
    out = {}
    with open("/proc/stat") as f:
        for ln in f:
            if re.match(r"cpu\d+ ", ln):
                v = ln.split()
                out[v[0]] = int(v[8])
    return out


def steal_pct(a, b, secs):
    hz = os.sysconf("SC_CLK_TCK")
    return {k: round(100.0 * (b[k] - a[k]) / hz / secs, 2) for k in a if k in b}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """nginx as the issue describes it, in its own directory, on a free loopback port."""

    def __init__(self, page_kb=4):
        self.nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.access(self.nginx, os.X_OK):
            raise FileNotFoundError("nginx is not installed")
        self.dir = tempfile.mkdtemp(prefix="kb-nginx-")
        os.chmod(self.dir, 0o755)      # its worker may run as another user than root
        self.port = free_port()
        words = "the quick brown fox jumps over the lazy dog and keeps running far away "
        with open(os.path.join(self.dir, "page.txt"), "w") as f:
            f.write((words * (15 * page_kb + 1))[:1024 * page_kb])
        os.makedirs(os.path.join(self.dir, "tmp"))
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""worker_processes 1;
worker_cpu_affinity {'1' if SERVER_CPU == '0' else '10'};
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {self.dir}/tmp;
    proxy_temp_path {self.dir}/tmp;
    fastcgi_temp_path {self.dir}/tmp;
    uwsgi_temp_path {self.dir}/tmp;
    scgi_temp_path {self.dir}/tmp;
    default_type text/plain;
    gzip on; gzip_comp_level 9; gzip_min_length 0; gzip_types text/plain;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.dir};
    }}
}}
""")
        self.p = subprocess.Popen(["taskset", "-c", SERVER_CPU, self.nginx, "-c", conf,
                                   "-p", self.dir], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError(f"nginx did not start: {self.p.stderr.read()!r}")
        self.url = f"http://127.0.0.1:{self.port}/page.txt"

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGQUIT)     # nginx's graceful stop, master and worker
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def knee(ng, run, hold, extra):
    t0, s0 = time.monotonic(), steal()
    p = subprocess.run([KB, "knee", ng.url, "-H", "Accept-Encoding: gzip", "--pid",
                        str(ng.p.pid), "--cpus", CLIENT_CPU, "--run", run, "--hold", str(hold),
                        "--quiet", *extra], capture_output=True, text=True, timeout=900)
    secs = time.monotonic() - t0
    rep = json.load(open(os.path.join(run, "report.json"))) if p.returncode in (0, 1) else {}
    return {"rc": p.returncode, "headline": p.stdout.splitlines()[0] if p.stdout else "",
            "stderr": p.stderr[-2000:], "seconds": round(secs, 1),
            "steal_pct": steal_pct(s0, steal(), secs), "lo": rep.get("lo_rps"),
            "hi": rep.get("hi_rps"), "samples": len(rep.get("samples", [])),
            "holds": [s for s in rep.get("samples", []) if s.get("hold")]}


def kb_load(ng, rate, secs, dispatch="any", warmup=5, stagger=None):
    out = tempfile.mktemp(prefix="kb-nginx-load-", suffix=".json")
    s0, t0 = steal(), time.monotonic()
    p = subprocess.run([KB, "load", ng.url, "-H", "Accept-Encoding: gzip", "-R", str(rate),
                        "-d", str(secs), "--warmup", str(warmup), "-t", "1", "-c", "256",
                        "--cpus", CLIENT_CPU, "--dispatch", dispatch, "--json", out, "--quiet",
                        *(["--stagger", stagger] if stagger else [])],
                       capture_output=True, text=True, timeout=secs + warmup + 60)
    st = steal_pct(s0, steal(), time.monotonic() - t0)
    if p.returncode not in (0, 4, 5) or not os.path.exists(out):
        return {"rate": rate, "rc": p.returncode, "error": p.stderr[-500:]}
    j = json.load(open(out))
    os.unlink(out)
    held = (j["corrected_us"]["p99"] < 100000 and j["delivery"] >= 0.95 and
            j["errors"]["total"] == 0 and j["non2xx"] == 0)
    tool = f"kneebench {dispatch}" + (f" stagger {stagger}" if stagger else "")
    return {"tool": tool, "rate": rate, "rc": p.returncode,
            "p99_ms": j["corrected_us"]["p99"] / 1000, "delivery": j["delivery"],
            "achieved_rps": j["achieved_rps"], "errors": j["errors"]["total"],
            "controlled": held, "steal_pct": st}


def wrk2(path, ng, rate, secs):
    """wrk2 -t1 -c256 -dS -R -L on the client's CPU: its p99 (corrected) and req/s."""
    s0, t0 = steal(), time.monotonic()
    p = subprocess.run(["taskset", "-c", CLIENT_CPU, path, "-t1", "-c256", f"-d{secs}s",
                        f"-R{rate}", "--latency", "-H", "Accept-Encoding: gzip", ng.url],
                       capture_output=True, text=True, timeout=secs + 60)
    st = steal_pct(s0, steal(), time.monotonic() - t0)
    m = re.search(r"^\s*99\.000%\s+([\d.]+)(us|ms|s|m)\b", p.stdout, re.M)
    rps = re.search(r"Requests/sec:\s+([\d.]+)", p.stdout)
    unit = {"us": 1e-3, "ms": 1, "s": 1e3, "m": 6e4}
    return {"tool": "wrk2", "rate": rate, "rc": p.returncode,
            "p99_ms": float(m.group(1)) * unit[m.group(2)] if m else None,
            "achieved_rps": float(rps.group(1)) if rps else None, "steal_pct": st}


def show(what, r):
    print(f"  {what}  {r.get('tool', '?'):26s} p99 {r.get('p99_ms') or 0:9.2f} ms  req/s "
          f"{r.get('achieved_rps') or 0:9.0f}  [steal {r['steal_pct']}]", flush=True)


def floor(a, k, out):
    """The clients' floor: wrk2 and kneebench per-connection against kb-control at the
    fractions' rates, the same windows as the side-by-side loads."""
    # on the server's CPU: a server whose own latency is tens of microseconds, so that what a
    # client reports against it at a rate is that client's own floor
    with Control(prefix=["taskset", "-c", SERVER_CPU]) as c:
        for f in (float(x) for x in a.fractions.split(",")):
            rate = round(f * k["lo"])
            warm = 10 if a.point >= 20 else 0
            for r in (kb_load(c, rate, a.point - warm, "per-connection", warm),
                      kb_load(c, rate, a.point - warm, "per-connection", warm, "even"),
                      wrk2(a.wrk2, c, rate, a.point)):
                out.setdefault("floor", []).append(dict(r, fraction=f))
                show(f"kb-control at {rate} req/s", r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hold", type=float, default=30)
    ap.add_argument("--point", type=int, default=30, help="the independent loads' seconds")
    ap.add_argument("--over", default="1.1", help="multiples of the missed end loaded too")
    ap.add_argument("--checks", type=int, default=1,
                    help="rounds of the independent points (held end, then the --over ones)")
    ap.add_argument("--floor", action="store_true",
                    help="with --wrk2: the same rates against kb-control, the clients' own floor")
    ap.add_argument("--wrk2")
    ap.add_argument("--fractions", default="0.5,0.8,0.9,1.0")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--knee-args", default="", help="extra `kneebench knee` arguments")
    ap.add_argument("--page-kb", type=int, default=4,
                    help="the page's size: a larger one lowers the knee, where wrk2's own "
                         "floor is small beside nginx's latency")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        ng = Nginx(a.page_kb)
    except FileNotFoundError as e:
        print(f"nginx_knee: {e}", file=sys.stderr)
        return 77
    out = {"hold_s": a.hold, "point_s": a.point}
    run = tempfile.mkdtemp(prefix="kb-nginx-knee-")
    try:
        k = out["knee"] = knee(ng, run, a.hold, a.knee_args.split())
        print(f"knee: {k['headline']}  [{k['seconds']} s, {k['samples']} samples, "
              f"steal {k['steal_pct']}]", flush=True)
        if not (k["lo"] and k["hi"]):
            print(k["stderr"], file=sys.stderr)
            return 1
        over = [(f"{x} x missed end", round(float(x) * k["hi"])) for x in a.over.split(",")]
        for name, rate in ([("held end", k["lo"])] + over) * a.checks:
            r = kb_load(ng, rate, a.point)
            out.setdefault("points", []).append(dict(r, what=name))
            print(f"{name} {rate} req/s as a {a.point} s point: p99 {r.get('p99_ms', 0):.1f} ms, "
                  f"delivery {100 * r.get('delivery', 0):.2f} %, errors {r.get('errors')}, "
                  f"{'controlled' if r.get('controlled') else 'NOT controlled'}  "
                  f"[steal {r['steal_pct']}]", flush=True)
        if a.wrk2:
            for rep in range(a.repeats):
                for f in (float(x) for x in a.fractions.split(",")):
                    rate = round(f * k["lo"])
                    # wrk2 calibrates for its first ~10 s and records after that: kneebench
                    # warms up as long and measures the rest, so the windows coincide
                    warm = 10 if a.point >= 20 else 0
                    # per-connection with wrk2's 5 ms stagger (the default) and with its
                    # phases spread evenly: what wrk2's connection phases alone change
                    loads = [lambda: kb_load(ng, rate, a.point - warm, "any", warm),
                             lambda: kb_load(ng, rate, a.point - warm, "per-connection", warm),
                             lambda: kb_load(ng, rate, a.point - warm, "per-connection", warm,
                                             "even"),
                             lambda: wrk2(a.wrk2, ng, rate, a.point)]
                    for i in range(len(loads)):
                        r = loads[(i + rep) % len(loads)]()
                        out.setdefault("side_by_side", []).append(dict(r, fraction=f, repeat=rep))
                        show(f"{f:.1f} x knee = {rate} req/s", r)
        if a.wrk2 and a.floor:
            floor(a, k, out)
    finally:
        ng.stop()
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
