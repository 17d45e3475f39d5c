#!/usr/bin/env python3
"""hostile_server -- an HTTP/1.1 server that misbehaves on purpose (stdlib only).

It proves that `kneebench load` keeps exact counts and stays alive when the target does.
Usage: hostile_server.py MODE [--bind 127.0.0.1] [--port 0] [--route plaintext]
It binds (port 0 = a free ephemeral port), prints "PORT <n>" on stdout, then serves until
SIGTERM/SIGINT or --max-seconds. One thread per connection; the suite's tests use a few.

Modes (each request of a connection gets the mode's treatment):
  ok        a valid response with the contract route's exact bytes
  stall     accepts, reads requests, never answers
  close     sends half of a valid response, then closes the connection
  reset     reads the request, then closes with SO_LINGER 0 (the peer sees an RST)
  garbage   answers a line that is no HTTP status line, then closes
  trickle   a valid response, one byte at a time (--trickle-ms between bytes)
  cl-long   Content-Length larger than the body sent, then closes after a short pause
  cl-short  Content-Length smaller than the body sent (the rest follows on the wire)
  big       a 10 MB body with a correct Content-Length (the body differs from the route's)
  mixed     most requests fine; every --every'th request closes, resets or answers garbage
"""
import argparse
import json
import os
import signal
import socket
import struct
import sys
import threading
import time
from email.utils import formatdate

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODES = ("ok", "stall", "close", "reset", "garbage", "trickle", "cl-long", "cl-short", "big",
         "mixed", "cl-and-te")
BIG_BODY_BYTES = 10 * 1024 * 1024


def load_route(name):
    path = os.environ.get("KNEEBENCH_CONTRACT", os.path.join(ROOT, "contract", "contract.json"))
    with open(path) as f:
        contract = json.load(f)
    for r in contract["routes"]:
        if r["name"] == name:
            return r
    raise SystemExit(f"hostile_server: no route {name!r} in {path}")


def response(route, body=None, content_length=None):
    """The route's response bytes; body/content_length override to lie on purpose."""
    body = route["body"].encode() if body is None else body
    n = len(body) if content_length is None else content_length
    head = (f"HTTP/1.1 {route['status']} OK\r\n"
            f"Content-Type: {route['content_type']}\r\n"
            f"Content-Length: {n}\r\n"
            f"Date: {formatdate(usegmt=True)}\r\n"
            "Server: hostile\r\n\r\n")
    return head.encode() + body


class Conn:
    """One accepted connection: reads whole requests, answers each per the mode."""

    def __init__(self, srv, sock):
        self.srv, self.sock, self.buf = srv, sock, b""

    def next_request(self):
        while b"\r\n\r\n" not in self.buf:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return False
            if not chunk:
                return False
            self.buf += chunk
        _, self.buf = self.buf.split(b"\r\n\r\n", 1)
        return True

    def serve(self):
        try:
            while not self.srv.stopping.is_set() and self.next_request():
                n = self.srv.count()
                if not self.answer(self.srv.mode_for(n)):
                    return
        except OSError:
            pass
        finally:
            try:
                self.sock.close()
            except OSError:
                pass

    def answer(self, mode):
        """Treat one request; False when the connection is finished."""
        route, s = self.srv.route, self.sock
        if mode == "ok":
            s.sendall(response(route))
        elif mode == "stall":
            self.srv.stopping.wait()
            return False
        elif mode == "close":
            r = response(route)
            s.sendall(r[: len(r) // 2])
            return False
        elif mode == "reset":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        elif mode == "garbage":
            s.sendall(b"SPLUNGE 42 what\r\nnot: http\r\n\r\n")
            return False
        elif mode == "trickle":
            for b in response(route):
                s.sendall(bytes([b]))
                time.sleep(self.srv.trickle_s)
        elif mode == "cl-long":
            body = route["body"].encode()
            s.sendall(response(route, body=body, content_length=len(body) + 100))
            time.sleep(0.05)
            return False
        elif mode == "cl-short":
            body = route["body"].encode()
            s.sendall(response(route, body=body, content_length=max(1, len(body) // 2)))
        elif mode == "big":
            s.sendall(response(route, body=self.srv.big_body))
        elif mode == "cl-and-te":
            # the route's bytes, chunked, with a Content-Length beside the Transfer-Encoding
            # (RFC 9112 6.3: a smuggling sign, never a response to take)
            body = route["body"].encode()
            chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
            head = response(route, body=b"", content_length=len(chunked)).replace(
                b"\r\n\r\n", b"\r\nTransfer-Encoding: chunked\r\n\r\n", 1)
            s.sendall(head + chunked)
        return True


class Server:
    def __init__(self, args):
        self.mode, self.every = args.mode, args.every
        self.route = load_route(args.route)
        self.trickle_s = args.trickle_ms / 1000.0
        self.big_body = b"x" * BIG_BODY_BYTES if args.mode == "big" else b""
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.requests = 0
        self.lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind((args.bind, args.port))
        self.lsock.listen(512)
        self.lsock.settimeout(0.2)

    def count(self):
        with self.lock:
            self.requests += 1
            return self.requests

    def mode_for(self, n):
        if self.mode != "mixed":
            return self.mode
        if n % self.every:
            return "ok"
        return ("close", "reset", "garbage")[(n // self.every) % 3]

    def run(self, max_seconds):
        deadline = time.monotonic() + max_seconds
        while not self.stopping.is_set() and time.monotonic() < deadline:
            try:
                sock, _ = self.lsock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=Conn(self, sock).serve, daemon=True).start()
        self.stopping.set()
        self.lsock.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=MODES)
    ap.add_argument("--bind", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--route", default="plaintext")
    ap.add_argument("--every", type=int, default=5, help="mixed: every Nth request misbehaves")
    ap.add_argument("--trickle-ms", type=float, default=0.5)
    ap.add_argument("--max-seconds", type=float, default=120.0,
                    help="stop by itself after this long (tests must not leave it behind)")
    args = ap.parse_args()
    srv = Server(args)
    signal.signal(signal.SIGTERM, lambda *_: srv.stopping.set())
    signal.signal(signal.SIGINT, lambda *_: srv.stopping.set())
    print(f"PORT {srv.lsock.getsockname()[1]}", flush=True)
    srv.run(args.max_seconds)
    print(f"REQUESTS {srv.requests}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
