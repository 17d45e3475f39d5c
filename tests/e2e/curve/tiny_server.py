#!/usr/bin/env python3
"""tiny_server.py -- a stand-in fixture for the curve's identity test: serves the contract's
plaintext and json routes (exact bytes, Content-Length, Date, Server, keep-alive) with the
standard library. The test copies it into its own directory and edits the copy mid-run."""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
contract = json.load(open(args["--contract"]))
routes = {r["path"]: r for r in contract["routes"] if "body" in r}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tiny"
    sys_version = ""

    def do_GET(self):
        r = routes.get(self.path)
        body = r["body"].encode() if r else b"not found"
        self.send_response(r["status"] if r else 404)
        self.send_header("Content-Type", r["content_type"] if r else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer((args["--bind"], int(args["--port"])), Handler).serve_forever()
