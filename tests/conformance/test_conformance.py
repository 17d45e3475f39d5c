#!/usr/bin/env python3
"""Conformance suite: every fixture in contract/contract.json, started for real, against the
contract's bytes.

For each runtime (in the contract's run order) it expands the runtime's argv template
({root} {build} {port} {bind} {rundir} {cpus}) and env, starts the fixture in a process group
of its own on a free loopback port, waits until it answers, and checks with a raw-socket
HTTP/1.1 client written here: exact status, Content-Type, body bytes and Content-Length,
Date (IMF-fixdate, current, changing across seconds), Server, keep-alive for 100 requests,
a request split across TCP writes, ten pipelined requests, 404, 405 with Allow, and forty
kinds of malformed or hostile request, each of which must be answered with a 4xx or a close
while a second client on another connection keeps getting exact answers. Last, SIGTERM must
stop the fixture with status 0 and leave none of its processes behind (with --asan: and no
sanitizer report).

Stdlib only. Usage:
  test_conformance.py [--build DIR] [--runtime NAME ...] [--asan] [--name RESULTS_NAME]
                      [--contract FILE]

A fixture that knowingly answers one of these otherwise (a runtime's parser this suite does
not own) names the test in its contract entry's conformance_skips, with what it does: the
test is skipped with that reason.
"""
import argparse
import calendar
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, CONTRACT, ROOT
import kbtest

BIND = "127.0.0.1"
IO_TIMEOUT = 5.0          # seconds a well-behaved exchange may take
HOSTILE_TIMEOUT = 5.0     # seconds a fixture has to answer or close a hostile request
READY_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0       # ASan's leak check at exit takes a moment
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "SUMMARY: UndefinedBehaviorSanitizer", "SUMMARY: AddressSanitizer")


# ---------------------------------------------------------------------------------------
# A raw-socket HTTP/1.1 client with an incremental response parser.

class Closed(Exception):
    """The peer closed (FIN or RST) before a complete response; .data holds what came."""

    def __init__(self, msg, data=b""):
        super().__init__(msg)
        self.data = data


class NoAnswer(Exception):
    """Nothing conclusive within the deadline."""


class BadResponse(Exception):
    """Bytes that are not an HTTP/1.x response."""


class Response:
    def __init__(self, version, status, reason, headers, body, chunked):
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers      # list of (name, value) as received, in order
        self.body = body
        self.chunked = chunked

    def values(self, name):
        n = name.lower()
        return [v for k, v in self.headers if k.lower() == n]

    def one(self, name):
        vs = self.values(name)
        if len(vs) != 1:
            raise AssertionError(f"expected exactly one {name} header, got {vs!r}")
        return vs[0]

    def tokens(self, name):
        return [t.strip().lower() for v in self.values(name) for t in v.split(",") if t.strip()]

    def __repr__(self):
        return f"<{self.version} {self.status} {self.headers!r} {self.body[:80]!r}>"


STATUS_RE = re.compile(rb"^HTTP/(\d)\.(\d) (\d{3})(?: (.*))?$")
TOKEN_RE = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class Client:
    """One TCP connection. Responses are parsed incrementally from self.buf."""

    def __init__(self, port, timeout=IO_TIMEOUT):
        self.port = port
        self.timeout = timeout
        self.sock = socket.create_connection((BIND, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def reset(self):
        """Close with RST instead of FIN (SO_LINGER with a zero timeout)."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def request_bytes(self, method, path, extra=b""):
        return (f"{method} {path} HTTP/1.1\r\nHost: {BIND}:{self.port}\r\n".encode()
                + extra + b"\r\n")

    def get(self, path, method="GET", extra=b""):
        self.send(self.request_bytes(method, path, extra))
        return self.read_response(head=(method == "HEAD"))

    # -- incremental reading -------------------------------------------------------------
    def _fill(self, deadline):
        if self.eof:
            raise Closed("connection closed", self.buf)
        left = deadline - time.monotonic()
        if left <= 0:
            raise NoAnswer(f"no complete response within {self.timeout}s; have {self.buf[:200]!r}")
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            raise NoAnswer(f"no complete response within {self.timeout}s; have {self.buf[:200]!r}")
        except (ConnectionResetError, BrokenPipeError) as e:
            self.eof = True
            raise Closed(f"connection reset ({e})", self.buf)
        if not chunk:
            self.eof = True
            raise Closed("connection closed", self.buf)
        self.buf += chunk

    def _line(self, deadline, limit=1 << 20):
        while b"\r\n" not in self.buf:
            if len(self.buf) > limit:
                raise BadResponse("line too long")
            self._fill(deadline)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n, deadline):
        while len(self.buf) < n:
            self._fill(deadline)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _head(self, deadline):
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > 1 << 20:
                raise BadResponse("response head over 1 MiB")
            if self.buf and not b"HTTP/".startswith(self.buf[:5]) and not self.buf.startswith(b"HTTP/"):
                raise BadResponse(f"not an HTTP/1.x response: {self.buf[:80]!r}")
            self._fill(deadline)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.split(b"\r\n")
        m = STATUS_RE.match(lines[0])
        if not m:
            raise BadResponse(f"bad status line {lines[0][:80]!r}")
        headers = []
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep or not TOKEN_RE.match(name):
                raise BadResponse(f"bad header line {line[:80]!r}")
            headers.append((name.decode("latin1"), value.strip(b" \t").decode("latin1")))
        version = f"HTTP/{m.group(1).decode()}.{m.group(2).decode()}"
        return version, int(m.group(3)), (m.group(4) or b"").decode("latin1"), headers

    def read_response(self, head=False, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            version, status, reason, headers = self._head(deadline)
            if 100 <= status < 200:
                continue            # interim responses carry no body
            break
        resp = Response(version, status, reason, headers, b"", False)
        if head or status in (204, 304):
            return resp
        if "chunked" in resp.tokens("Transfer-Encoding"):
            resp.chunked = True
            resp.body = self._chunked(deadline)
        elif resp.values("Content-Length"):
            lengths = set(resp.values("Content-Length"))
            if len(lengths) != 1 or not next(iter(lengths)).isdigit():
                raise BadResponse(f"bad Content-Length {resp.values('Content-Length')!r}")
            resp.body = self._take(int(next(iter(lengths))), deadline)
        else:
            # No framing: the body runs to the close.
            try:
                while True:
                    self._fill(deadline)
            except Closed:
                pass
            resp.body, self.buf = self.buf, b""
        return resp

    def _chunked(self, deadline):
        body = b""
        while True:
            size_line = self._line(deadline).split(b";", 1)[0].strip()
            if not size_line or not re.match(rb"^[0-9A-Fa-f]+$", size_line):
                raise BadResponse(f"bad chunk size {size_line[:40]!r}")
            size = int(size_line, 16)
            if size == 0:
                while self._line(deadline):     # trailers up to the empty line
                    pass
                return body
            body += self._take(size, deadline)
            if self._take(2, deadline) != b"\r\n":
                raise BadResponse("chunk not followed by CRLF")

    def drain_to_close(self, timeout):
        """Read until the peer closes; True when it did within the timeout."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._fill(deadline)
        except Closed:
            return True
        except NoAnswer:
            return False


# ---------------------------------------------------------------------------------------
# The checks drawn from the contract.

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
IMF_RE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (%s) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$"
                    % "|".join(MONTHS))


def parse_imf_fixdate(value):
    """Seconds since the epoch for an IMF-fixdate (RFC 9110 5.6.7); AssertionError otherwise."""
    m = IMF_RE.match(value)
    if not m:
        raise AssertionError(f"Date {value!r} is not an IMF-fixdate")
    day, mon, year = int(m.group(2)), MONTHS.index(m.group(3)) + 1, int(m.group(4))
    hh, mm, ss = int(m.group(5)), int(m.group(6)), int(m.group(7))
    t = calendar.timegm((year, mon, day, hh, mm, ss, 0, 0, 0))
    if DAYS[time.gmtime(t).tm_wday] != m.group(1) or time.gmtime(t)[:6] != (year, mon, day, hh, mm, ss):
        raise AssertionError(f"Date {value!r} names an impossible day or weekday")
    return t


def routes_for(runtime):
    return [r for r in CONTRACT["routes"] if "runtimes" not in r or runtime in r["runtimes"]]


def exact_routes(runtime):
    """Routes whose body is fixed bytes: the ones every check and the witness can use."""
    return [r for r in routes_for(runtime) if "body" in r]


def check_common(resp, when):
    """Headers every response from a fixture carries, and keep-alive."""
    for h in CONTRACT["headers"]["required"]:
        if not resp.values(h):
            raise AssertionError(f"{when}: no {h} header in {resp!r}")
    date = parse_imf_fixdate(resp.one("Date"))
    now = time.time()
    if not now - 5 <= date <= now + 1:
        raise AssertionError(f"{when}: Date {resp.one('Date')!r} is not current")
    if not resp.one("Server").strip():
        raise AssertionError(f"{when}: empty Server header")
    if resp.chunked or resp.values("Transfer-Encoding"):
        raise AssertionError(f"{when}: sent with Transfer-Encoding, not Content-Length")
    if resp.one("Content-Length") != str(len(resp.body)):
        raise AssertionError(f"{when}: Content-Length {resp.one('Content-Length')} for "
                             f"{len(resp.body)} body bytes")
    if CONTRACT["headers"]["keep_alive"]:
        if resp.version != "HTTP/1.1" or "close" in resp.tokens("Connection"):
            raise AssertionError(f"{when}: connection not kept alive: {resp!r}")


def check_route(resp, route):
    when = f"GET {route['path']}"
    if resp.status != route["status"]:
        raise AssertionError(f"{when}: status {resp.status}, contract {route['status']}: {resp!r}")
    ctype = resp.one("Content-Type")
    if ctype != route["content_type"]:
        raise AssertionError(f"{when}: Content-Type {ctype!r}, contract {route['content_type']!r}")
    if "body" in route and resp.body != route["body"].encode():
        raise AssertionError(f"{when}: body {resp.body!r}, contract {route['body'].encode()!r}")
    if "body_regex" in route and not re.match(route["body_regex"], resp.body.decode("latin1")):
        raise AssertionError(f"{when}: body {resp.body!r} does not match {route['body_regex']}")
    check_common(resp, when)


# ---------------------------------------------------------------------------------------
# Starting and stopping a fixture for real.

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((BIND, 0))
        return s.getsockname()[1]


def proc_stat(pid):
    """(ppid, state, starttime) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    return int(fields[1]), fields[0], fields[19]


def descendants(root_pid):
    """{pid: starttime} of root_pid and everything below it (php-fpm leaves our process group
    with setsid, so the group alone does not find it)."""
    children = {}
    stats = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st:
                stats[int(name)] = st
                children.setdefault(st[0], []).append(int(name))
    found, todo = {}, [root_pid]
    while todo:
        pid = todo.pop()
        if pid in stats and pid not in found:
            found[pid] = stats[pid][2]
            todo.extend(children.get(pid, []))
    return found


def alive(pid, starttime):
    st = proc_stat(pid)
    return st is not None and st[1] != "Z" and st[2] == starttime


class Fixture:
    def __init__(self, runtime, build, asan):
        self.rt = runtime
        self.name = runtime["name"]
        self.build = build
        self.asan = asan
        self.proc = None
        self.base = None
        self.port = None
        self.start_error = None
        self.tracked = {}

    def expand(self, s):
        for k, v in (("{root}", ROOT), ("{build}", self.build), ("{port}", str(self.port)),
                     ("{bind}", BIND), ("{rundir}", os.path.join(self.base or "", "run")),
                     ("{cpus}", str(CONTRACT["limits"]["cpus"]))):
            s = s.replace(k, v)
        return s

    def missing(self):
        """Why this fixture cannot run here, or None."""
        prog = self.rt["command"][0]
        if "/" in prog:
            path = self.expand(prog)
            if not os.access(path, os.X_OK):
                return f"{path} does not exist (not built)"
        elif not shutil.which(prog):
            return f"{prog} is not on PATH"
        return None

    def ensure_started(self):
        if self.proc is None and self.start_error is None:
            try:
                self.start()
            except Exception as e:
                self.start_error = f"{type(e).__name__}: {e}"
        if self.start_error:
            raise AssertionError(f"{self.name} did not start: {self.start_error}")
        if self.proc.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.proc.returncode}: {self.stderr_tail()}")

    def start(self):
        self.base = tempfile.mkdtemp(prefix=f"kb-conformance-{self.name}-")
        # Traversable, so that a fixture that drops privileges (php-fpm's workers and nginx's
        # worker as www-data when run as root) can reach its sockets in the run directory.
        os.chmod(self.base, 0o711)
        os.mkdir(os.path.join(self.base, "run"))
        self.port = free_port()
        argv = [self.expand(a) for a in self.rt["command"]]
        env = dict(os.environ)
        for k, v in self.rt.get("env", {}).items():
            env[k] = self.expand(v)
        self.out = open(os.path.join(self.base, "stdout"), "wb")
        self.err = open(os.path.join(self.base, "stderr"), "wb")
        # A process group of our own, so that the whole fixture can be found and stopped.
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.err, start_new_session=True)
        self.wait_ready()

    def wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT
        probe = exact_routes(self.name)[0]
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"exited with {self.proc.returncode} while starting: "
                                   f"{self.stderr_tail()}")
            try:
                c = Client(self.port, timeout=2)
                try:
                    r = c.get(probe["path"])
                    if r.status == probe["status"]:
                        return
                    last = r
                finally:
                    c.close()
            except (OSError, Closed, NoAnswer, BadResponse) as e:
                last = e
            time.sleep(0.05)
        raise RuntimeError(f"not ready within {READY_TIMEOUT}s (last: {last!r}): "
                           f"{self.stderr_tail()}")

    def stderr_tail(self, n=2000):
        try:
            with open(os.path.join(self.base, "stderr"), "rb") as f:
                return f.read().decode("latin1")[-n:]
        except OSError:
            return ""

    def stderr_all(self):
        return self.stderr_tail(n=1 << 30)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM to the fixture's leader; returns (exit status, leftovers). Whatever is
        still alive afterwards is killed by PID (only processes this suite started)."""
        if self.proc is None:
            return None, []
        self.tracked.update(descendants(self.proc.pid))
        status = self.proc.poll()
        if status is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                status = self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                status = None
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(alive(p, s) for p, s in self.tracked.items()):
            time.sleep(0.05)
        left = [p for p, s in self.tracked.items() if alive(p, s)]
        self.kill_rest()
        return status, left

    def kill_rest(self):
        if self.proc is None:
            return
        self.tracked.update(descendants(self.proc.pid) if self.proc.poll() is None else {})
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        for p, s in self.tracked.items():
            if alive(p, s):
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def cleanup(self):
        self.kill_rest()
        for f in (getattr(self, "out", None), getattr(self, "err", None)):
            if f:
                f.close()
        if self.base:
            shutil.rmtree(self.base, ignore_errors=True)
            self.base = None


# ---------------------------------------------------------------------------------------
# Checks, each a function of a running fixture.

def witness_round(fx, witness):
    """The second client: every exact route, correct, on its own persistent connection."""
    for route in exact_routes(fx.name):
        witness.send(witness.request_bytes(route["method"], route["path"]))
        check_route(witness.read_response(), route)


def check_routes(fx, route):
    if "body" not in route:
        kbtest.skip(f"route {route['name']} needs a PostgreSQL the fixture command does not "
                    "provision; its own tests cover it")
    c = Client(fx.port)
    try:
        check_route(c.get(route["path"], method=route["method"]), route)
        # The connection is really reused, not just labelled keep-alive.
        check_route(c.get(route["path"], method=route["method"]), route)
    finally:
        c.close()


def check_keepalive_100(fx):
    routes = exact_routes(fx.name)
    c = Client(fx.port)
    try:
        for i in range(100):
            route = routes[i % len(routes)]
            try:
                check_route(c.get(route["path"]), route)
            except Closed as e:
                raise AssertionError(f"connection closed after {i} requests: {e}")
    finally:
        c.close()


def check_date_changes(fx):
    route = exact_routes(fx.name)[0]
    c = Client(fx.port)
    try:
        r1 = c.get(route["path"])
        check_route(r1, route)
        time.sleep(1.1)
        r2 = c.get(route["path"])
        check_route(r2, route)
        d1, d2 = parse_imf_fixdate(r1.one("Date")), parse_imf_fixdate(r2.one("Date"))
        if d2 <= d1:
            raise AssertionError(f"Date did not advance over 1.1 s: {r1.one('Date')!r} then "
                                 f"{r2.one('Date')!r}")
    finally:
        c.close()


def check_split_writes(fx):
    c = Client(fx.port)
    try:
        for route in exact_routes(fx.name):
            raw = c.request_bytes("GET", route["path"])
            cuts = [2, 7, len(raw) // 2, len(raw) - 3, len(raw)]
            prev = 0
            for cut in cuts:
                c.send(raw[prev:cut])
                prev = cut
                time.sleep(0.03)
            check_route(c.read_response(), route)
    finally:
        c.close()


def check_pipelined(fx):
    """Ten requests in one write (HTTP/1.1 pipelining): ten exact answers, in order."""
    routes = exact_routes(fx.name)
    order = [routes[i % len(routes)] for i in range(10)]
    c = Client(fx.port)
    try:
        c.send(b"".join(c.request_bytes("GET", r["path"]) for r in order))
        for route in order:
            check_route(c.read_response(), route)
    finally:
        c.close()


def fixture_usage(root_pid):
    """(tasks, PSS bytes) of a fixture: every thread of every process below root_pid (the
    pids limit counts threads) and the proportional set size they hold together."""
    tasks = pss_kb = 0
    for pid in descendants(root_pid):
        try:
            tasks += len(os.listdir(f"/proc/{pid}/task"))
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss_kb += int(line.split()[1])
        except OSError:
            pass                # exited meanwhile
    return tasks, pss_kb * 1024


def check_connections_and_limits(fx):
    """The contract's connection count opened at once, one request on each, every answer
    exact; meanwhile the fixture stays within the contract's pids and memory limits."""
    n = CONTRACT["comparison"]["connections"]
    routes = exact_routes(fx.name)
    clients = []
    try:
        for _ in range(n):
            clients.append(Client(fx.port))
        for i, c in enumerate(clients):
            c.send(c.request_bytes("GET", routes[i % len(routes)]["path"]))
        tasks, pss = fixture_usage(fx.proc.pid)
        for i, c in enumerate(clients):
            check_route(c.read_response(), routes[i % len(routes)])
    finally:
        for c in clients:
            c.close()
    limits = CONTRACT["limits"]
    if tasks > limits["pids"]:
        raise AssertionError(f"{tasks} tasks with {n} connections open, limit {limits['pids']}")
    if pss > limits["memory_bytes"]:
        raise AssertionError(f"PSS {pss >> 20} MiB with {n} connections open, "
                             f"limit {limits['memory_bytes'] >> 20} MiB")
    print(f"     {n} connections: {tasks} tasks, PSS {pss / 1048576:.1f} MiB", flush=True)


def check_not_found(fx):
    for path in ("/no-such-route", "/plaintext/extra", "/PLAINTEXT"):
        c = Client(fx.port)
        try:
            r = c.get(path)
        finally:
            c.close()
        if r.status != 404:
            raise AssertionError(f"GET {path}: status {r.status}, want 404: {r!r}")
        check_common(r, f"GET {path}")


def check_method_not_allowed(fx):
    for route in exact_routes(fx.name):
        for method, extra in (("POST", b"Content-Length: 0\r\n"), ("DELETE", b""),
                              ("PUT", b"Content-Length: 0\r\n")):
            c = Client(fx.port)
            try:
                r = c.get(route["path"], method=method, extra=extra)
            finally:
                c.close()
            when = f"{method} {route['path']}"
            if r.status != 405:
                raise AssertionError(f"{when}: status {r.status}, want 405: {r!r}")
            allow = r.tokens("Allow")
            if "get" not in allow:
                raise AssertionError(f"{when}: Allow {r.values('Allow')!r} does not name GET")
            check_common(r, when)


def hostile_outcome(c, timeout=HOSTILE_TIMEOUT):
    """What a fixture did with a hostile request: ('response', Response),
    ('closed', bytes_before_close), ('garbage', bytes, closed) or ('silent', bytes)."""
    try:
        return ("response", c.read_response(timeout=timeout))
    except Closed as e:
        return ("closed", e.data)
    except NoAnswer:
        return ("silent", c.buf)
    except BadResponse:
        closed = c.drain_to_close(2.0)
        return ("garbage", c.buf, closed)


def judge(kind, outcome, also_ok=()):
    """A 4xx (or one of also_ok) or a close is an answer; anything else fails."""
    if outcome[0] == "response":
        r = outcome[1]
        if 400 <= r.status < 500 or r.status in also_ok:
            return f"{r.status}"
        raise AssertionError(f"{kind}: answered {r.status}, want a 4xx or a close: {r!r}")
    if outcome[0] == "closed":
        return "close"
    if outcome[0] == "garbage":
        raise AssertionError(f"{kind}: unparseable reply {outcome[1][:120]!r}")
    raise AssertionError(f"{kind}: neither answered nor closed within {HOSTILE_TIMEOUT}s")


def send_while_reading(c, data, chunk=65536):
    """Send a large payload, but stop as soon as the peer answers or closes: a server that
    rejects an oversized head need not read the rest of it."""
    c.sock.setblocking(False)
    try:
        off = 0
        while off < len(data):
            r, w, _ = select.select([c.sock], [c.sock], [], IO_TIMEOUT)
            if not r and not w:
                raise AssertionError("peer neither read nor answered for 5 s")
            if r:
                return
            try:
                off += c.sock.send(data[off:off + chunk])
            except (BlockingIOError, InterruptedError):
                continue
            except (BrokenPipeError, ConnectionResetError):
                return
    finally:
        c.sock.setblocking(True)


def with_witness(fx, act):
    """Run one hostile act between rounds of a witness on its own connection, then check the
    fixture is still alive and still serving, on the old witness and on a new connection."""
    witness = Client(fx.port)
    try:
        witness_round(fx, witness)
        result = act(witness)
        witness_round(fx, witness)
    finally:
        witness.close()
    if not fx.running():
        raise AssertionError(f"{fx.name} exited ({fx.proc.returncode}): {fx.stderr_tail()}")
    fresh = Client(fx.port)
    try:
        witness_round(fx, fresh)
    finally:
        fresh.close()
    return result


def one_shot(fx, kind, payload, also_ok=(), allow_http09=False):
    def act(witness):
        c = Client(fx.port)
        try:
            if len(payload) > 65536:
                send_while_reading(c, payload)
            else:
                try:
                    c.send(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass
            witness_round(fx, witness)      # served while the hostile one is pending
            outcome = hostile_outcome(c)
            if allow_http09 and outcome[0] == "garbage" and outcome[2]:
                return "HTTP/0.9-style reply and close"
            if (allow_http09 and outcome[0] == "response"
                    and "close" in outcome[1].tokens("Connection")):
                # Served as the obsolete version it is, then closed: also an honest answer.
                if not c.drain_to_close(2.0):
                    raise AssertionError(f"{kind}: said Connection: close, kept the connection")
                return f"{outcome[1].status} and close"
            return judge(kind, outcome, also_ok)
        finally:
            c.close()
    return with_witness(fx, act)


H = b"Host: 127.0.0.1\r\n"
HOSTILE = [
    # (name, payload, extra accepted statuses, HTTP/0.9 bare reply accepted)
    ("bad_request_line", b"THIS IS NOT HTTP AT ALL\r\n\r\n", (), False),
    # (A lone token with no colon, "NoColon", nginx takes for an invalid header it ignores
    # (ignore_invalid_headers) and serves 200; a line of words it rejects like the others.)
    ("header_without_colon", b"GET /plaintext HTTP/1.1\r\n" + H + b"No colon in this line\r\n\r\n",
     (), False),
    ("space_before_colon", b"GET /plaintext HTTP/1.1\r\n" + H + b"X-Spaced : value\r\n\r\n",
     (), False),
    ("oversized_header", b"GET /plaintext HTTP/1.1\r\n" + H + b"X-Big: " + b"a" * (2 << 20)
     + b"\r\n\r\n", (), False),
    ("oversized_uri", b"GET /" + b"a" * (64 << 10) + b" HTTP/1.1\r\n" + H + b"\r\n", (), False),
    ("nul_in_target", b"GET /plain\x00text HTTP/1.1\r\n" + H + b"\r\n", (), False),
    ("nul_in_header", b"GET /plaintext HTTP/1.1\r\n" + H + b"X-Nul: a\x00b\r\n\r\n", (), False),
    ("bogus_content_length", b"POST /plaintext HTTP/1.1\r\n" + H + b"Content-Length: banana\r\n\r\n",
     (), False),
    ("bad_chunked_body", b"POST /plaintext HTTP/1.1\r\n" + H
     + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nnot a chunk\r\n0\r\n\r\n", (), False),
    ("missing_host", b"GET /plaintext HTTP/1.1\r\n\r\n", (), False),
    ("http09_request", b"GET /plaintext\r\n\r\n", (), True),
    ("absurd_method", b"Z" * 4096 + b" /plaintext HTTP/1.1\r\n" + H + b"\r\n", (), False),
    ("bad_version_token", b"GET /plaintext HTTP/1.Q\r\n" + H + b"\r\n", (), False),
    # 505 is the RFC's own answer to a well-formed but unsupported major version.
    ("unsupported_version", b"GET /plaintext HTTP/7.0\r\n" + H + b"\r\n", (505,), False),
    # Binary bytes (a TLS record header first, as a TLS client would send) ended by a blank
    # line, so that a server waiting for the end of the request line has it.
    ("binary_garbage", bytes.fromhex("160301") + bytes(b for b in range(1, 256) if b not in (10, 13))
     + b"\r\n\r\n", (), False),
]


# Request framing (RFC 9112 6.1, 6.3; RFC 9110 5.5, 7.2): each must be refused with a 4xx (or
# 501 for a transfer coding the server lacks) and the connection closed, since the bytes that
# follow cannot be framed; with GET, so that no 405 hides the answer. A fixture that does
# otherwise says so in its contract entry (conformance_skips: test -> what it does), probed by
# hand (node 20's llhttp, Go's net/http), so its run skips with that reason instead of
# failing on a runtime this suite does not own.
FRAMING = [
    # (name, payload, refusal statuses)
    ("conflicting_content_length", b"GET /plaintext HTTP/1.1\r\n" + H
     + b"Content-Length: 0\r\nContent-Length: 44\r\n\r\nGET /json HTTP/1.1\r\n" + H + b"\r\n",
     (400,)),
    ("duplicate_host", b"GET /plaintext HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", (400,)),
    ("invalid_host", b"GET /plaintext HTTP/1.1\r\nHost: a b/c@d\r\n\r\n", (400,)),
    ("bare_cr_in_value", b"GET /plaintext HTTP/1.1\r\n" + H + b"X-A: a\rb\r\n\r\n", (400,)),
    ("transfer_encoding_identity", b"GET /plaintext HTTP/1.1\r\n" + H
     + b"Transfer-Encoding: identity\r\n\r\n", (400, 501)),
    ("transfer_encoding_xchunked", b"GET /plaintext HTTP/1.1\r\n" + H
     + b"Transfer-Encoding: xchunked\r\n\r\n", (400, 501)),
    ("transfer_encoding_chunked_gzip", b"GET /plaintext HTTP/1.1\r\n" + H
     + b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", (400, 501)),
]


# Request-line and field syntax (RFC 9112 3, 5.1; RFC 9110 5.5): what Go and nginx (and
# node) answer with 400 and a close, every fixture must (issue 27: gray-static served the
# first four, answered 404 or 405 for the others). Probed by hand against Go 1.26, node 20
# and nginx 1.22; a control byte in a field value, which nginx serves, is not here.
SYNTAX = [
    ("nul_cuts_the_target", b"GET /plaintext\x00junk HTTP/1.1\r\n" + H + b"\r\n"),
    ("control_in_target", b"GET /plain\x01text HTTP/1.1\r\n" + H + b"\r\n"),
    ("del_in_target", b"GET /plain\x7ftext HTTP/1.1\r\n" + H + b"\r\n"),
    ("tab_in_target", b"GET /plain\ttext HTTP/1.1\r\n" + H + b"\r\n"),
    ("space_in_target", b"GET /plain text HTTP/1.1\r\n" + H + b"\r\n"),
    ("target_without_slash", b"GET plaintext HTTP/1.1\r\n" + H + b"\r\n"),
    ("control_in_method", b"G\x01T /plaintext HTTP/1.1\r\n" + H + b"\r\n"),
    ("eight_bit_method", b"G\xc3\xa9T /plaintext HTTP/1.1\r\n" + H + b"\r\n"),
    ("empty_field_name", b"GET /plaintext HTTP/1.1\r\n" + H + b": v\r\nX-B: c\r\n\r\n"),
    ("empty_field_name_last", b"GET /plaintext HTTP/1.1\r\n" + H + b": v\r\n\r\n"),
    ("nul_ends_a_value", b"GET /plaintext HTTP/1.1\r\nX-A: b\x00\r\n" + H + b"\r\n"),
    ("nul_ends_the_last_value", b"GET /plaintext HTTP/1.1\r\nHost: t\x00\r\n\r\n"),
    ("content_length_past_64_bits", b"POST /plaintext HTTP/1.1\r\n" + H
     + b"Content-Length: 9223372036854775808\r\n\r\n"),
]


def check_syntax(fx, kind, payload):
    """400 and a close, while the witness is served."""
    return check_framing(fx, kind, payload, (400,))


def check_answered_once(fx, kind, payload, statuses):
    """One 4xx status line of statuses, then the close: no second head after the answer
    (issue 27: libmicrohttpd 0.9.75's own answer sent its status line and headers twice)."""

    def act(witness):
        c = Client(fx.port)
        try:
            c.send(payload)
            witness_round(fx, witness)
            outcome = hostile_outcome(c)
            if outcome[0] != "response" or outcome[1].status not in statuses:
                raise AssertionError(f"{kind}: want one of {statuses}, got {outcome[:2]!r}")
            closed = c.drain_to_close(2.0)
            # a second head read as the first one's body, or after it (a status line, not the
            # words "HTTP/1.1 request" an error page may hold)
            second = re.compile(rb"HTTP/1\.[01] [0-9]{3} ")
            if second.search(outcome[1].body) or second.search(c.buf):
                raise AssertionError(f"{kind}: a second status line followed the first: "
                                     f"{(outcome[1].body + c.buf)[:200]!r}")
            if not closed:
                raise AssertionError(f"{kind}: answered {outcome[1].status}, then kept the "
                                     "connection open")
            return f"{outcome[1].status} once and close"
        finally:
            c.close()
    return with_witness(fx, act)


# libmicrohttpd 0.9.75 answered the two Content-Lengths here itself, before gray-static saw
# the request, with its status line and headers twice; gray-static now answers them once from
# the library's error logger (gray-static/mhd09.h). Past 64 bits, libmicrohttpd 1.0 answers 413
# where Go, node, nginx and gray-static on 0.9 answer 400.
ONCE = [
    ("missing_host", b"GET /plaintext HTTP/1.1\r\n\r\n", (400,)),
    ("content_length_not_a_number", b"POST /plaintext HTTP/1.1\r\n" + H
     + b"Content-Length: banana\r\n\r\n", (400,)),
    ("content_length_past_64_bits_unparsed", b"POST /plaintext HTTP/1.1\r\n" + H
     + b"Content-Length: 18446744073709551616\r\n\r\n", (400, 413)),
]


def check_length_too_large(fx):
    """A body far past what a route takes (no route reads one): answered at once (a 4xx:
    gray-static and nginx 413, Go the route's 405), not a wait for bytes that never come
    (issue 27: gray-static waited out its head timeout, then closed without a word)."""
    def act(witness):
        c = Client(fx.port)
        try:
            c.send(b"POST /plaintext HTTP/1.1\r\n" + H
                   + b"Content-Length: 9223372036854775807\r\n\r\n")
            witness_round(fx, witness)
            outcome = hostile_outcome(c, timeout=2.0)
            if fx.name == "gray-static" and (outcome[0] != "response" or
                                             outcome[1].status != 413):
                raise AssertionError(f"want 413 at once, got {outcome[:2]!r}")
            return judge("content_length_too_large", outcome)
        finally:
            c.close()
    return with_witness(fx, act)


def check_framing(fx, kind, payload, statuses):
    """Refused with one of statuses, and then closed, while the witness is served."""
    def act(witness):
        c = Client(fx.port)
        try:
            c.send(payload)
            witness_round(fx, witness)
            outcome = hostile_outcome(c)
            if outcome[0] != "response" or outcome[1].status not in statuses:
                raise AssertionError(f"{kind}: want {statuses} and a close, got {outcome[:2]!r}")
            if not c.drain_to_close(2.0):
                raise AssertionError(f"{kind}: answered {outcome[1].status}, then kept the "
                                     f"connection open (more: {c.buf[:80]!r})")
            return f"{outcome[1].status} and close"
        finally:
            c.close()
    return with_witness(fx, act)


def check_length_with_chunked(fx):
    """Content-Length beside Transfer-Encoding: chunked may be refused or served by the chunked
    framing alone, but the connection must close after the answer (RFC 9112 6.1)."""
    def act(witness):
        c = Client(fx.port)
        try:
            c.send(b"GET /plaintext HTTP/1.1\r\n" + H + b"Content-Length: 5\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
            witness_round(fx, witness)
            outcome = hostile_outcome(c)
            if outcome[0] == "response" and not c.drain_to_close(2.0):
                raise AssertionError(f"answered {outcome[1].status}, then kept the connection")
            return judge("length_with_chunked", outcome, also_ok=(200,))
        finally:
            c.close()
    return with_witness(fx, act)


def check_slow_trickle(fx):
    """A valid request one byte at a time (~1 s in all) while the witness is served between
    bytes; the trickled request gets the exact answer, or a 4xx or a close."""
    route = exact_routes(fx.name)[0]

    def act(witness):
        c = Client(fx.port)
        try:
            raw = c.request_bytes("GET", route["path"])
            try:
                for i in range(len(raw)):
                    c.send(raw[i:i + 1])
                    time.sleep(1.0 / len(raw))
                    if i % 8 == 0:
                        witness_round(fx, witness)
            except (BrokenPipeError, ConnectionResetError):
                pass
            outcome = hostile_outcome(c)
        finally:
            c.close()
        if outcome[0] == "response" and outcome[1].status == 200:
            check_route(outcome[1], route)
            return "200"
        return judge("slow_trickle", outcome)
    with_witness(fx, act)


def check_rst_mid_request(fx):
    def act(witness):
        c = Client(fx.port)
        c.send(b"GET /plaintext HTTP/1.1\r\nHo")
        time.sleep(0.05)
        c.reset()
        time.sleep(0.05)
        witness_round(fx, witness)
    with_witness(fx, act)


def check_rst_after_request(fx):
    """The fixture writes its answer into a connection that is already reset (EPIPE /
    ECONNRESET on its side): it must shrug that off."""
    def act(witness):
        for route in exact_routes(fx.name):
            for _ in range(20):
                c = Client(fx.port)
                c.send(c.request_bytes("GET", route["path"]))
                c.reset()
        time.sleep(0.1)
        witness_round(fx, witness)
    with_witness(fx, act)


def check_connect_and_close(fx):
    def act(witness):
        for _ in range(20):
            Client(fx.port).close()
        witness_round(fx, witness)
    with_witness(fx, act)


def check_stop(fx):
    """SIGTERM to the leader stops the whole fixture: status 0, no process left behind and,
    for a sanitizer build, no report on stderr."""
    if not fx.running():
        raise AssertionError(f"{fx.name} was not running before SIGTERM "
                             f"(status {fx.proc.returncode}): {fx.stderr_tail()}")
    status, left = fx.stop()
    if left:
        raise AssertionError(f"processes left after SIGTERM: {left}")
    if status is None:
        raise AssertionError(f"did not exit within {STOP_TIMEOUT}s of SIGTERM")
    err = fx.stderr_all()
    if fx.asan:
        marks = [m for m in SANITIZER_MARKS if m in err]
        if marks:
            raise AssertionError(f"sanitizer report on stderr ({marks}): {err[-3000:]}")
    if status != 0:
        raise AssertionError(f"exit status {status} after SIGTERM, want 0: {err[-2000:]}")


# ---------------------------------------------------------------------------------------
# Registration: per runtime, in the contract's order; the fixture starts at its first test
# and is stopped by its last.

def cases(routes):
    """(label, check, args) of every test of a fixture serving routes, in the order run."""
    out = [("starts", lambda f: None, ())]
    out += [(f"route_{route['name']}", check_routes, (route,)) for route in routes]
    out += [("keepalive_100", check_keepalive_100, ()), ("date_changes", check_date_changes, ()),
            ("split_writes", check_split_writes, ()), ("pipelined_10", check_pipelined, ()),
            ("connections_and_limits", check_connections_and_limits, ()),
            ("not_found_404", check_not_found, ()),
            ("method_not_allowed_405", check_method_not_allowed, ())]
    out += [(f"hostile_{name}", one_shot, (name, payload, also_ok, http09))
            for name, payload, also_ok, http09 in HOSTILE]
    out += [(f"framing_{name}", check_framing, (name, payload, statuses))
            for name, payload, statuses in FRAMING]
    out += [(f"syntax_{name}", check_syntax, (name, payload)) for name, payload in SYNTAX]
    out += [(f"answered_once_{name}", check_answered_once, (name, payload, statuses))
            for name, payload, statuses in ONCE]
    out += [("content_length_too_large", check_length_too_large, ())]
    out += [("framing_length_with_chunked", check_length_with_chunked, ()),
            ("hostile_slow_trickle", check_slow_trickle, ()),
            ("hostile_rst_mid_request", check_rst_mid_request, ()),
            ("hostile_rst_after_request", check_rst_after_request, ()),
            ("hostile_connect_and_close", check_connect_and_close, ()),
            ("stops_on_sigterm", check_stop, ())]
    return out


def labels():
    return [label for label, _, _ in cases(CONTRACT["routes"])]


def register(fx):
    """The fixture's tests, each skipped with its reason where the fixture cannot run here
    or where its contract entry's conformance_skips names it."""
    known = fx.rt.get("conformance_skips", {})

    def add(label, fn, args):
        def case():
            reason = fx.missing()
            if reason:
                kbtest.skip(reason)
            if label in known:
                kbtest.skip(f"{fx.name}: {known[label]} (its contract entry's conformance_skips)")
            fx.ensure_started()
            fn(fx, *args)
        case.__name__ = f"{fx.name}.{label}"
        kbtest.test(case)

    for label, fn, args in cases(routes_for(fx.name)):
        add(label, fn, args)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=BUILD,
                    help="build directory ({build}; default $KB_BUILD, else build/)")
    ap.add_argument("--runtime", action="append", help="only this runtime (repeatable)")
    ap.add_argument("--asan", action="store_true",
                    help="sanitizer build: also require no ASan/UBSan report on stderr")
    ap.add_argument("--name", default="conformance", help="name the counts are recorded under")
    ap.add_argument("--only", action="append", help="only tests whose name contains this")
    ap.add_argument("--contract", help="another contract (a runtime added in a copy of it)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if args.contract:
        global CONTRACT
        with open(args.contract) as f:
            CONTRACT = json.load(f)
    unknown = {k for rt in CONTRACT["runtimes"] for k in rt.get("conformance_skips", {})} - \
        set(labels())
    if unknown:
        print(f"conformance_skips names no test of this suite: {sorted(unknown)}", file=sys.stderr)
        return 2
    fixtures = []
    for rt in CONTRACT["runtimes"]:
        if args.runtime and rt["name"] not in args.runtime:
            continue
        # A variant starts one of the others differently for its db route alone (gray-static-
        # blocking: --db-mode blocking), which needs a database this suite does not run; its
        # plaintext and json are that program's, tested once under its own name.
        if rt.get("variant_of") and not args.runtime:
            continue
        fx = Fixture(rt, build, args.asan)
        fixtures.append(fx)
        register(fx)
    if args.runtime and len(fixtures) != len(set(args.runtime)):
        print(f"unknown runtime in {args.runtime}", file=sys.stderr)
        return 2
    try:
        return kbtest.run(args.name, args.only)
    finally:
        for fx in fixtures:
            fx.cleanup()


if __name__ == "__main__":
    sys.exit(main())
