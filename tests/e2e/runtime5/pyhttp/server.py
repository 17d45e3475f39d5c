#!/usr/bin/env python3
"""pyhttp -- the fifth runtime of tests/e2e/runtime5: the contract's plaintext and json routes
from Python's standard library (socketserver, a thread per connection), added the way a user
adds a server of their own: this folder and one contract entry, nothing else in the tree.

    server.py --port N [--bind ADDR] [--contract FILE]

The routes' bytes come from the contract (its exact-body GET routes every runtime serves), so
the server cannot drift from it. HTTP/1.1 with keep-alive and pipelining; a request the
server cannot frame or does not accept is answered with the RFC's 4xx/5xx and the connection
closed (http.server's own parser would serve most of them, and run the conformance suite's
hostile requests as plain GETs). Any other path is 404, any other method 405 with Allow.
SIGTERM stops it with status 0.
"""
import argparse
import json
import os
import re
import signal
import socketserver
import sys
import threading
from email.utils import formatdate

HERE = os.path.dirname(os.path.abspath(__file__))
LINE_MAX = 8192          # bytes of a request line or a header line
HEADERS_MAX = 100
BODY_MAX = 1 << 20
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}")
TARGET = re.compile(r"/[\x21-\x7e]*")
VERSION = re.compile(r"HTTP/(\d)\.(\d)")
FIELD = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*")
HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]*)(:[0-9]*)?")
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           413: "Content Too Large", 414: "URI Too Long", 431: "Request Header Fields Too Large",
           501: "Not Implemented", 505: "HTTP Version Not Supported"}


class Refused(Exception):
    """A request answered with this status, then the connection closed."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def routes(contract_path):
    with open(contract_path) as f:
        contract = json.load(f)
    return {r["path"]: r for r in contract["routes"]
            if "body" in r and r["method"] == "GET" and "runtimes" not in r}


class Handler(socketserver.StreamRequestHandler):
    def line(self, too_long):
        raw = self.rfile.readline(LINE_MAX + 2)
        if raw and not raw.endswith(b"\n"):
            raise Refused(too_long)
        text = raw.decode("latin-1")
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
        if "\r" in text or "\0" in text:
            raise Refused(400)
        return raw, text

    def head(self):
        """(method, target, version, {name: [values]}), or None at a clean end of stream."""
        raw, text = self.line(414)
        if raw in (b"\r\n", b"\n"):          # one empty line before a request is allowed
            raw, text = self.line(414)
        if not raw:
            return None
        parts = text.split(" ")
        if len(parts) != 3 or not TOKEN.fullmatch(parts[0]) or not TARGET.fullmatch(parts[1]):
            raise Refused(400)
        v = VERSION.fullmatch(parts[2])
        if not v:
            raise Refused(400)
        if v.group(1) != "1":
            raise Refused(505)
        fields = {}
        for _ in range(HEADERS_MAX + 1):
            raw, text = self.line(431)
            if not raw:
                raise Refused(400)
            if not text:
                return parts[0], parts[1], parts[2], fields
            m = FIELD.fullmatch(text)
            if not m:
                raise Refused(400)
            fields.setdefault(m.group(1).lower(), []).append(m.group(2))
        raise Refused(431)

    def body(self, fields):
        """Read and drop the request's body, by its framing (RFC 9112 6)."""
        te, cl = fields.get("transfer-encoding"), fields.get("content-length")
        if te:
            if cl or len(te) != 1 or te[0].lower() != "chunked":
                raise Refused(400 if cl else 501)
            total = 0
            while True:
                _, size = self.line(400)
                if not re.fullmatch(r"[0-9A-Fa-f]{1,8}", size.split(";")[0]):
                    raise Refused(400)
                n = int(size.split(";")[0], 16)
                total += n
                if total > BODY_MAX:
                    raise Refused(413)
                if n == 0:
                    while self.line(400)[1]:
                        pass
                    return
                if len(self.rfile.read(n)) != n or self.rfile.read(2) != b"\r\n":
                    raise Refused(400)
        if cl:
            # a length no 64-bit counter holds is not a length (RFC 9110 8.6), as Go says
            if len(set(cl)) != 1 or not cl[0].isdigit() or int(cl[0]) >= 1 << 63:
                raise Refused(400)
            n = int(cl[0])
            if n > BODY_MAX:
                raise Refused(413)
            if len(self.rfile.read(n)) != n:
                raise Refused(400)

    def send(self, status, ctype, body, close, extra="", head_only=False):
        self.wfile.write((f"HTTP/1.1 {status} {REASONS[status]}\r\nServer: pyhttp\r\n"
                          f"Date: {formatdate(usegmt=True)}\r\nContent-Type: {ctype}\r\n"
                          f"Content-Length: {len(body)}\r\n{extra}"
                          f"{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n")
                         .encode("latin-1") + (b"" if head_only else body))
        self.wfile.flush()

    def one(self):
        """Serve one request; False when the connection is to close."""
        req = self.head()
        if req is None:
            return False
        method, target, version, fields = req
        hosts = fields.get("host", [])
        if (version == "HTTP/1.1" and len(hosts) != 1) or len(hosts) > 1 or \
                any(not HOST.fullmatch(h) for h in hosts):
            raise Refused(400)
        self.body(fields)
        conn = {t.strip().lower() for v in fields.get("connection", []) for t in v.split(",")}
        close = "close" in conn or (version == "HTTP/1.0" and "keep-alive" not in conn)
        r = self.server.routes.get(target)
        if not r:
            self.send(404, "text/plain", b"not found", close)
        elif method not in ("GET", "HEAD"):
            self.send(405, "text/plain", b"method not allowed", close, "Allow: GET, HEAD\r\n")
        else:
            self.send(r["status"], r["content_type"], r["body"].encode(), close,
                      head_only=method == "HEAD")
        return not close

    def handle(self):
        try:
            while self.one():
                pass
        except Refused as e:
            try:
                self.send(e.status, "text/plain", REASONS[e.status].encode(), True)
            except OSError:
                pass
        except OSError:
            pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--contract", default=os.path.join(HERE, "..", "..", "..", "..",
                                                       "contract", "contract.json"))
    args = ap.parse_args()
    srv = Server((args.bind, args.port), Handler)
    srv.routes = routes(args.contract)
    # SIGTERM: stop serving and exit 0 (shutdown() waits for serve_forever: from a thread)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    srv.serve_forever()
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
