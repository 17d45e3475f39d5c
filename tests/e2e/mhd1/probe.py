#!/usr/bin/env python3
"""probe.py -- the behaviours gray-static's MHD_VERSION-guarded code exists for, asserted
exactly (the conformance suite accepts "a 4xx or a close" for hostile input; these want the
precise answer). Written for libmicrohttpd 1.0 inside the mhd1 container, and equally true of
0.9.75 on the host:

  - two requests on one connection both answered, no Connection: close, the connection still
    open for a third (the response is queued on the handler's second call);
  - Content-Type, Content-Length (= body length), Date (IMF-fixdate), Server on every route;
  - 400 (not a close) for a NUL inside a header value, whitespace before a colon, a header
    line without a colon, and HTTP/1.1 without Host (the strict-client option);
  - a request with bare-LF line ends served (200), as 0.9.75 serves it;
  - 405 with an Allow header that names GET; 404 for an unknown path;
  - the server keeps serving after all of that, and SIGTERM stops it with status 0 (with
    --asan: and no sanitizer report).

Usage: probe.py --build DIR [--asan] [--name RESULTS_NAME]
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

from kbenv import CONTRACT, ROOT
import kbtest

RUNTIME = next(r for r in CONTRACT["runtimes"] if r["name"] == "gray-static")
ROUTES = [r for r in CONTRACT["routes"] if "body" in r]   # exact-bytes routes (no db here)
IMF = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|"
                 r"Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$")
MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
         "SUMMARY: UndefinedBehaviorSanitizer")
H = b"Host: 127.0.0.1\r\n"
P = ROUTES[0]["path"].encode()                           # an exact route's path
STATE = {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def close(self):
        self.s.close()

    def _more(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("closed by the server")
        self.buf += d

    def response(self):
        """(status, {lower name: [values]}, body); EOFError when closed before one."""
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            hdrs.setdefault(k.strip().lower(), []).append(v.strip())
        n = int(hdrs.get("content-length", ["0"])[0])
        while len(self.buf) < n:
            self._more()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hdrs, body

    def ask(self, raw):
        self.s.sendall(raw)
        return self.response()


def get(path):
    return f"GET {path} HTTP/1.1\r\n".encode() + H + b"\r\n"


def one(hdrs, name):
    v = hdrs.get(name, [])
    assert len(v) == 1, f"{name}: want exactly one, got {v}"
    return v[0]


def start(build, asan):
    port = free_port()
    subst = {"{build}": build, "{port}": str(port), "{bind}": "127.0.0.1", "{root}": ROOT}
    argv = []
    for a in RUNTIME["command"]:
        for k, v in subst.items():
            a = a.replace(k, v)
        argv.append(a)
    err = tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    STATE.update(proc=proc, port=port, err=err, asan=asan)


def stderr_text():
    e = STATE["err"]
    e.seek(0)
    return e.read().decode("utf-8", "replace")


def need_server():
    p = STATE["proc"]
    if p.poll() is not None:
        raise AssertionError(f"gray-static is not running (status {p.returncode}): "
                             f"{stderr_text()[-2000:]}")


@kbtest.test
def keepalive_and_headers():
    need_server()
    c = Conn(STATE["port"])
    try:
        for i, route in enumerate(ROUTES + ROUTES[:1]):
            status, hdrs, body = c.ask(get(route["path"]))
            assert status == route["status"], f"request {i + 1} {route['path']}: {status}"
            assert body == route["body"].encode(), f"{route['path']}: body {body!r}"
            assert one(hdrs, "content-type") == route["content_type"], hdrs
            assert int(one(hdrs, "content-length")) == len(body), hdrs
            assert IMF.match(one(hdrs, "date")), f"Date {hdrs['date']}"
            assert one(hdrs, "server"), hdrs
            conn = ",".join(hdrs.get("connection", [])).lower()
            assert "close" not in conn, f"request {i + 1}: Connection: {conn} (queued too early?)"
    finally:
        c.close()


def exact(raw, want):
    need_server()
    c = Conn(STATE["port"])
    try:
        try:
            status, hdrs, _ = c.ask(raw)
        except (EOFError, ConnectionResetError):
            raise AssertionError(f"closed without an answer, want {want}")
        assert status == want, f"status {status}, want {want}"
        return hdrs
    finally:
        c.close()


@kbtest.test
def nul_in_header_value_400():
    exact(b"GET " + P + b" HTTP/1.1\r\n" + H + b"X-Nul: a\x00b\r\n\r\n", 400)


@kbtest.test
def nul_in_last_header_value_400():
    exact(b"GET " + P + b" HTTP/1.1\r\nX-Nul: a\x00b\r\n" + H + b"\r\n", 400)


@kbtest.test
def space_before_colon_400():
    exact(b"GET " + P + b" HTTP/1.1\r\n" + H + b"X-Spaced : value\r\n\r\n", 400)


@kbtest.test
def header_without_colon_400():
    exact(b"GET " + P + b" HTTP/1.1\r\n" + H + b"No colon in this line\r\n\r\n", 400)


@kbtest.test
def missing_host_400():
    exact(b"GET " + P + b" HTTP/1.1\r\n\r\n", 400)


@kbtest.test
def bare_lf_line_ends_200():
    """RFC 9112 2.2 lets a server take a bare LF as a line end; 0.9.75's strict mode does, and
    1.0 at discipline level 1 would not (400), hence level 0 there."""
    need_server()
    c = Conn(STATE["port"])
    try:
        status, _, body = c.ask(b"GET " + P + b" HTTP/1.1\nHost: t\nX-A: b\n\n")
        assert status == 200, f"status {status}"
        assert body == ROUTES[0]["body"].encode(), body
    finally:
        c.close()


@kbtest.test
def method_not_allowed_405_allow():
    path = ROUTES[0]["path"]
    hdrs = exact(f"POST {path} HTTP/1.1\r\n".encode() + H + b"Content-Length: 0\r\n\r\n", 405)
    allow = [m.strip() for m in one(hdrs, "allow").split(",")]
    assert "GET" in allow, f"Allow: {allow}"


@kbtest.test
def unknown_path_404():
    exact(get("/no-such-route"), 404)


@kbtest.test
def still_serving():
    keepalive_and_headers()


@kbtest.test
def sigterm_exit_0():
    p = STATE["proc"]
    need_server()
    p.send_signal(signal.SIGTERM)
    try:
        status = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise AssertionError("still running 10 s after SIGTERM")
    err = stderr_text()
    if STATE["asan"]:
        marks = [m for m in MARKS if m in err]
        assert not marks, f"sanitizer report: {err[-3000:]}"
    assert status == 0, f"exit status {status}: {err[-2000:]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--asan", action="store_true")
    ap.add_argument("--name", default="probe")
    args = ap.parse_args()
    start(os.path.abspath(args.build), args.asan)
    try:
        return kbtest.run(args.name)
    finally:
        p = STATE["proc"]
        if p.poll() is None:
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
