#!/usr/bin/env python3
"""slow_host_server.py -- a stand-in fixture whose every response costs a known CPU time, for
the interleaving tests (test_interleave.py). It serves the contract's plaintext and json routes
(exact bytes, Content-Length, keep-alive) and burns --cost-us of its own CPU on each request,
twice that while --slow-file exists: a host whose speed halves mid-run, as a VM's does, felt by
every fixture alike. With --linger-s it goes on burning a CPU that long after the last request
of a load (not of a lone request, as a preflight sends), as an overloaded server working off
its backlog does."""
import collections
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
contract = json.load(open(args["--contract"]))
routes = {r["path"]: r for r in contract["routes"] if "body" in r}
COST_S = float(args.get("--cost-us", "0")) / 1e6
SLOW_FILE = args.get("--slow-file", "")
LINGER_S = float(args.get("--linger-s", "0"))
linger_until = [0.0]
recent = collections.deque(maxlen=5)


def burn(seconds):
    """This thread's own CPU time, not the wall clock: the cost holds however busy the host."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def lingering():
    while True:
        if time.monotonic() < linger_until[0]:
            burn(0.002)
        else:
            time.sleep(0.01)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "slow-host"
    sys_version = ""

    def do_GET(self):
        r = routes.get(self.path)
        burn(COST_S * (2 if SLOW_FILE and os.path.exists(SLOW_FILE) else 1))
        now = time.monotonic()
        recent.append(now)
        if LINGER_S and len(recent) == recent.maxlen and now - recent[0] < 0.5:
            linger_until[0] = now + LINGER_S
        body = r["body"].encode() if r else b"not found"
        self.send_response(r["status"] if r else 404)
        self.send_header("Content-Type", r["content_type"] if r else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


if LINGER_S:
    threading.Thread(target=lingering, daemon=True).start()
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer((args["--bind"], int(args["--port"])), Handler).serve_forever()
