"""loadlib -- what the load generator's end-to-end suites share beyond tests/lib/kbenv.py:
kb-control's path, the contract's routes, a scratch directory per suite process, and the
servers they start (kb-control or hostile_server.py), each ended by its own PID."""
import json
import os
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, CONTRACT, KB, here
from lineserver import LineServer

HERE = here(__file__)
CONTROL = os.path.join(BUILD, "kb-control")
ROUTES = {r["name"]: r for r in CONTRACT["routes"]}
TMP = tempfile.mkdtemp(prefix="kb-load-e2e-")


class Proc(LineServer):
    """A server this test started: its port, and stop() that ends it by its own PID."""

    def __init__(self, argv):
        super().__init__(argv, r"listening on \S*:(\d+)", stderr=subprocess.PIPE)
        self.port = int(self.m.group(1))


def hostile(mode, **kw):
    """hostile_server.py in MODE; its counters land in s.stats when it stops."""
    stats = os.path.join(TMP, f"stats-{mode}-{time.monotonic_ns()}.json")
    argv = [sys.executable, os.path.join(HERE, "hostile_server.py"), "--mode", mode, "--stats", stats]
    for k, v in kw.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    s = Proc(argv)
    s.stats = stats
    return s


def load(port, *extra, kb=KB, route="plaintext", rate=200, duration=2, warmup=0, threads=2,
         connections=4, drain=2, env=None):
    """One `kneebench load` run against 127.0.0.1:port that must complete: its JSON, and the
    finished process (stdout, stderr). The exit status must be what the counts say: 4 when
    any response was not right (non-2xx, a mismatch or malformed), else 5 when the client's lateness
    could have decided the verdict (a slow sanitizer build's can), said on stderr, else 0."""
    out = os.path.join(TMP, f"load-{time.monotonic_ns()}.json")
    argv = [kb, "load", "--url", f"http://127.0.0.1:{port}{ROUTES[route]['path']}", "--route", route,
            "--rate", str(rate), "--duration", str(duration), "--warmup", str(warmup),
            "--threads", str(threads), "--connections", str(connections), "--drain", str(drain),
            "--json", out, *extra]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode in (0, 4, 5), f"exit {p.returncode}: {p.stderr}{p.stdout}"
    assert "Sanitizer" not in p.stderr, p.stderr   # a TSan or ASan report, even at exit 0
    with open(out) as f:
        j = json.load(f)
    wrong = j["non2xx"] + j["mismatches"]["total"] + j["errors"]["malformed"]
    late = "warning: the client's own lateness" in p.stderr
    assert p.returncode == (4 if wrong else 5 if late else 0), (p.returncode, j["non2xx"],
                                                                 j["mismatches"], j["errors"], p.stderr)
    return j, p
