#!/usr/bin/env python3
"""test_db.py -- gray-static's GET /db and GET /stats against a real throwaway cluster, in
its three designs: readiness (the default), --db-mode blocking (the baseline: task workers
parked on synchronous queries) and --db-mode inline (one synchronous query on the loop).
The semantic gates that apply to gray-static's /db route run here: overlapping slow queries
while other routes stay served, a client that leaves mid-query leaving the pool healthy; the
third, a handler with no response answering 500, is the server's own (test_server.c).

Run by tests/e2e/db/run.sh, which starts the cluster (gray-static/pgcluster.sh) and sets
KB_PG_CONNINFO, KB_PG_DIR, KB_GRAY_STATIC (the binary under test) and KB_SUITE (the name the
counts are recorded under: db, or db-asan for the ASan+UBSan build). Every server is started
on a free port, stopped with SIGTERM, and must exit 0 with no sanitizer report.
"""
import contextlib
import http.client
import json
import os
import re
import signal
import shutil
import socket
import subprocess
import sys
import threading
import tempfile
import time

from kbenv import BUILD, CONTRACT_PATH, ROOT
from kbtest import test, skip, exit_with

CONTRACT = json.load(open(os.environ.get("KNEEBENCH_CONTRACT", CONTRACT_PATH)))
DB_ROUTE = next(r for r in CONTRACT["routes"] if r["name"] == "db")
BODY_RE = re.compile(DB_ROUTE["body_regex"])
CONNINFO = os.environ.get("KB_PG_CONNINFO", "")
PGDIR = os.environ.get("KB_PG_DIR", "")
BINARY = os.environ.get("KB_GRAY_STATIC", os.path.join(BUILD, "gray-static"))
PGCLUSTER = os.path.join(ROOT, "gray-static", "pgcluster.sh")
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def need_cluster():
    if not CONNINFO:
        skip("KB_PG_CONNINFO not set (run through tests/e2e/db/run.sh)")
    if not os.access(BINARY, os.X_OK):
        raise AssertionError(f"{BINARY} is not built")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """One gray-static process on a free port; stop() checks a clean exit."""

    def __init__(self, *args):
        self.port = free_port()
        self.err_path = f"/tmp/kb-db-test-{os.getpid()}-{self.port}.err"
        self.err = open(self.err_path, "w+")
        self.proc = subprocess.Popen([BINARY, "--port", str(self.port), *args],
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"server did not start: {line!r} {self.stderr()}")

    def stderr(self):
        self.err.flush()
        with open(self.err_path) as f:
            return f.read()

    def get(self, path, timeout=10):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.getheader("Content-Type"), r.read().decode()
        finally:
            c.close()

    def stats(self):
        status, ctype, body = self.get("/stats")
        assert status == 200 and ctype == "application/json", (status, ctype, body)
        return json.loads(body)

    def wait_stats(self, pred, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            st = self.stats()
            if pred(st) or time.monotonic() > deadline:
                return st
            time.sleep(0.02)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("server did not stop on SIGTERM")
        err = self.stderr()
        self.err.close()
        os.unlink(self.err_path)
        assert not any(m in err for m in SANITIZER_MARKS), err
        assert rc == 0, f"exit {rc}: {err}"
        return err

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.stop()
        else:
            self.proc.kill()
            self.proc.wait()
            self.err.close()


def assert_quiet(srv, pool, wait_s=5.0):
    """Gauges where an idle server has them: nothing parked, queued or running, and every
    pool connection idle. A connection that is still (re)connecting -- the cluster may have
    just restarted for the previous test -- is given wait_s to come up; nothing else waits."""
    deadline = time.monotonic() + wait_s
    st = srv.stats()
    while st["pool_idle"] != pool and time.monotonic() < deadline:
        time.sleep(0.05)
        st = srv.stats()
    for k in ("suspended_now", "queries_in_flight", "queued", "pool_busy"):
        assert st[k] == 0, (k, st)
    assert st["pool_idle"] == pool, st


def psql_rows(ids):
    q = "SELECT id, randomnumber FROM world WHERE id IN (%s)" % ",".join(str(i) for i in ids)
    out = subprocess.run(["psql", "-X", "-A", "-t", "-F", " ", CONNINFO, "-c", q],
                         check=True, capture_output=True, text=True).stdout
    return {int(a): int(b) for a, b in (l.split() for l in out.splitlines() if l.strip())}


def backends():
    """Client backends on the test database other than this query's own."""
    q = "SELECT count(*) FROM pg_stat_activity WHERE datname = 'kb' AND pid <> pg_backend_pid()"
    return int(subprocess.run(["psql", "-X", "-A", "-t", CONNINFO, "-c", q], check=True,
                              capture_output=True, text=True).stdout.strip())


def fetch_many(srv, path, n, conns):
    """n GETs spread over `conns` keep-alive connections, all opened first and released
    together (a barrier), so the first requests really are concurrent; [(status, body)]."""
    results, lock = [], threading.Lock()
    per = [n // conns + (1 if i < n % conns else 0) for i in range(conns)]
    go = threading.Barrier(sum(1 for k in per if k))

    def worker(k):
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        try:
            c.connect()
            go.wait(timeout=30)
            for _ in range(k):
                c.request("GET", path)
                r = c.getresponse()
                item = (r.status, r.read().decode())
                with lock:
                    results.append(item)
        finally:
            c.close()

    ts = [threading.Thread(target=worker, args=(k,)) for k in per if k]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return results


@test
def db_rows_are_exact_and_match_the_table():
    need_cluster()
    with Server("--db", CONNINFO, "--db-pool", "4") as srv:
        seen = {}
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        for _ in range(200):   # one keep-alive connection: each answer arrives on it
            c.request("GET", DB_ROUTE["path"])
            r = c.getresponse()
            body = r.read().decode()
            assert r.status == DB_ROUTE["status"], (r.status, body)
            assert r.getheader("Content-Type") == DB_ROUTE["content_type"]
            for h in CONTRACT["headers"]["required"]:
                assert r.getheader(h), (h, r.getheaders())
            assert BODY_RE.match(body), body
            row = json.loads(body)
            assert list(row) == ["id", "randomNumber"], body
            assert 1 <= row["id"] <= CONTRACT["db"]["world_rows"], body
            seen[row["id"]] = row["randomNumber"]
        c.close()
        assert len(seen) > 150, f"ids not random: {len(seen)} distinct of 200"
        assert psql_rows(seen) == seen
        st = srv.stats()
        assert st["queries_total"] == 200 and st["errors"] == 0, st
        assert_quiet(srv, 4)


@test
def default_pool_is_the_contracts_and_no_db_means_no_libpq():
    need_cluster()
    with Server("--db", CONNINFO) as srv:
        st = srv.wait_stats(lambda s: s["pool_idle"] == s["pool_size"])
        assert st["pool_size"] == CONTRACT["db"]["pool_size"], st
        assert st["pool_idle"] == st["pool_size"], st
    deadline = time.monotonic() + 5          # the pool's backends exit after its server
    while backends() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert backends() == 0
    with Server() as srv:
        assert srv.get("/db")[0] == 404
        assert srv.get("/plaintext")[0] == 200
        st = srv.stats()
        assert st["db_enabled"] is False and st["pool_size"] == 0 and st["reconnects"] == 0, st
        time.sleep(0.2)
        assert backends() == 0, "a server without --db connected to PostgreSQL"


@test
def two_sleeping_queries_overlap_on_one_thread():
    need_cluster()
    with Server("--db", CONNINFO, "--db-pool", "2", "--test-routes") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 2)
        assert int(open(f"/proc/{srv.proc.pid}/status").read().split("Threads:")[1].split()[0]) == 1
        times = []

        def one():
            t0 = time.monotonic()
            status, _, body = srv.get("/db-sleep?ms=250")
            times.append((status, time.monotonic() - t0))

        t0 = time.monotonic()
        ts = [threading.Thread(target=one) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        total = time.monotonic() - t0
        assert [s for s, _ in times] == [200, 200], times
        assert all(d >= 0.25 for _, d in times), times
        # run one after the other they would take >= 0.5 s; overlapped, about 0.25 s
        print(f"     two 250 ms queries answered in {total:.3f} s together")
        assert total < 0.5, f"not overlapped: {total:.3f}s for two 250 ms queries"
        st = srv.stats()
        assert st["suspended_max"] >= 2, st
        assert_quiet(srv, 2)


@test
def pool_of_two_serves_fifty_concurrent_requests():
    need_cluster()
    with Server("--db", CONNINFO, "--db-pool", "2") as srv:
        res = fetch_many(srv, "/db", 50, 50)
        assert len(res) == 50
        bad = [r for r in res if r[0] != 200 or not BODY_RE.match(r[1])]
        assert not bad, bad[:3]
        st = srv.stats()
        assert st["queries_total"] == 50 and st["errors"] == 0 and st["unavailable"] == 0, st
        assert st["suspended_max"] > 2, st      # more parked than connections: they queued
        assert_quiet(srv, 2)


@test
def client_killed_mid_query_retires_the_connection():
    need_cluster()
    with Server("--db", CONNINFO, "--db-pool", "1", "--test-routes") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 1)
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"GET /db-sleep?ms=3000 HTTP/1.1\r\nHost: x\r\n\r\n")
        st = srv.wait_stats(lambda st: st["queries_in_flight"] == 1)
        assert st["suspended_now"] == 1, st
        t0 = time.monotonic()
        s.close()
        st = srv.wait_stats(lambda st: st["retired"] == 1 and st["pool_idle"] == 1)
        assert st["retired"] == 1 and st["pool_idle"] == 1, st
        assert time.monotonic() - t0 < 2.0, "retired only when the query ended"
        assert st["reconnects"] == 2, st                 # the pool refilled
        status, _, body = srv.get("/db")
        assert status == 200 and BODY_RE.match(body), (status, body)
        st = srv.stats()
        assert_quiet(srv, 1)
        err = srv.stop()
        srv.stop = lambda: None
        assert "connection retired" in err, err


@test
def stats_return_to_zero_after_load():
    need_cluster()
    with Server("--db", CONNINFO, "--db-pool", "8") as srv:
        res = fetch_many(srv, "/db", 800, 32)
        assert all(r[0] == 200 for r in res), [r for r in res if r[0] != 200][:3]
        st = srv.wait_stats(lambda s: s["suspended_now"] == 0)
        assert_quiet(srv, 8)
        assert st["queries_total"] == 800, st
        assert st["suspended_total"] == 800, st     # every request was parked exactly once


@contextlib.contextmanager
def cluster_stopped(srv, what):
    """The cluster stopped for the block and started again after it (even when the block
    failed); then /db must answer 200 within 10 s, and nothing but 503 meanwhile."""
    subprocess.run([PGCLUSTER, "stop", PGDIR], check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run([PGCLUSTER, "start", PGDIR], check=True, capture_output=True)
    deadline = time.monotonic() + 10
    status = None
    while time.monotonic() < deadline and status != 200:
        status, _, body = srv.get("/db")
        assert status in (200, 503), (status, body)
        if status != 200:
            time.sleep(0.05)
    assert status == 200, f"{what} did not reconnect after the database came back"


def statuses_until_three_503(srv):
    """/db's statuses, asked until three 503s in a row or 5 s: only 200 and 503 allowed."""
    statuses = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and statuses[-3:] != [503] * 3:
        statuses.append(srv.get("/db")[0])
    assert set(statuses) <= {200, 503} and statuses[-3:] == [503] * 3, statuses
    return statuses


@test
def postgres_stopped_gives_503_then_service_resumes():
    need_cluster()
    if not PGDIR:
        skip("KB_PG_DIR not set: cannot stop and restart the cluster")
    with Server("--db", CONNINFO, "--db-pool", "4") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 4)
        assert srv.get("/db")[0] == 200
        with cluster_stopped(srv, "the pool"):
            statuses_until_three_503(srv)
            st = srv.stats()
            assert st["db_reachable"] is False and st["unavailable"] >= 3, st
        res = fetch_many(srv, "/db", 40, 8)
        assert all(r[0] == 200 for r in res), res[:3]
        st = srv.wait_stats(lambda s: s["pool_idle"] == 4)
        assert st["db_reachable"] is True, st
        assert_quiet(srv, 4)
        err = srv.stop()
        srv.stop = lambda: None
        assert "database unreachable" in err and "reachable again" in err, err


@test
def a_cluster_under_a_deep_directory_answers_on_a_short_socket():
    """A run directory deep enough that DIR/sock would pass a unix socket's 107 bytes (as
    a clone at a long path, or a user's deep RUN, makes it): the socket lies in a private
    /tmp/kb-pg.* directory instead, gray-static reaches the database through the conninfo,
    and stopping the cluster removes that directory."""
    need_cluster()
    base = tempfile.mkdtemp(prefix="kb-deep-pg-")
    os.chmod(base, 0o755)          # the cluster's owner (postgres, under root) walks into it
    deep = os.path.join(base, "d" * 120, "pg")
    try:
        p = subprocess.run([PGCLUSTER, "start", deep], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        conninfo = p.stdout.strip()
        sock = conninfo.split()[0].split("=", 1)[1]
        assert sock.startswith("/tmp/kb-pg.") and os.stat(sock).st_mode & 0o777 == 0o700, sock
        with Server("--db", conninfo, "--db-pool", "2") as srv:
            srv.wait_stats(lambda st: st["pool_idle"] == 2)
            status, _, body = srv.get("/db")
            assert status == 200 and BODY_RE.fullmatch(body), (status, body)
        subprocess.run([PGCLUSTER, "stop", deep], check=True, capture_output=True, timeout=60)
        assert not os.path.exists(sock), f"{sock} left behind"
    finally:
        subprocess.run([PGCLUSTER, "stop", deep], capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def libpq_mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        return any("libpq" in line for line in f)


@test
def libpq_is_loaded_only_for_the_database():
    need_cluster()
    with Server() as srv:
        assert srv.get("/plaintext")[0] == 200 and srv.get("/json")[0] == 200
        assert not libpq_mapped(srv.proc.pid), "libpq mapped by a server without --db"
    for mode in ("readiness", "blocking", "inline"):
        with Server("--db", CONNINFO, "--db-mode", mode) as srv:
            assert srv.get("/db")[0] == 200
            assert libpq_mapped(srv.proc.pid), f"{mode}: /db answered without libpq mapped?"
            assert srv.stats()["db_mode"] == mode


@test
def db_mode_flags_that_mean_nothing_are_refused():
    need_cluster()
    for args, why in ((["--db-mode", "blocking"], "needs --db"),
                      (["--db", CONNINFO, "--db-mode", "blocking", "--db-pool", "4"], "--db-pool"),
                      (["--db", CONNINFO, "--db-mode", "inline", "--db-pool", "4"], "--db-pool"),
                      (["--db", CONNINFO, "--db-workers", "4"], "--db-workers"),
                      (["--db", CONNINFO, "--db-mode", "inline", "--db-queue", "4"], "--db-queue"),
                      (["--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "0"], "bad --db-workers"),
                      (["--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "9999"], "bad --db-workers"),
                      (["--db", CONNINFO, "--db-mode", "eventually"], "readiness, blocking or inline")):
        p = subprocess.run([BINARY, "--port", "0", *args], capture_output=True, text=True,
                           timeout=10)
        assert p.returncode == 2 and why in p.stderr, (args, p.returncode, p.stderr)


@test
def inline_rows_are_exact_one_connection_nothing_parked():
    need_cluster()
    with Server("--db", CONNINFO, "--db-mode", "inline") as srv:
        res = fetch_many(srv, "/db", 200, 8)
        bad = [r for r in res if r[0] != 200 or not BODY_RE.match(r[1])]
        assert len(res) == 200 and not bad, bad[:3]
        rows = {json.loads(b)["id"]: json.loads(b)["randomNumber"] for _, b in res}
        assert psql_rows(rows) == rows
        st = srv.stats()
        assert st["db_mode"] == "inline" and st["pool_size"] == 1, st
        assert st["queries_total"] == 200 and st["errors"] == 0, st
        assert st["suspended_total"] == 0 and st["suspended_max"] == 0, st   # never parked
        assert_quiet(srv, 1)
        assert backends() == 1, "the inline design holds exactly one connection"


@test
def only_the_inline_query_holds_every_other_connection():
    """What the inline design is: while one request's query runs on the loop, a /plaintext
    request on another connection waits for it; in the readiness design, and in the blocking
    design whose query runs on a task worker, it does not. The query sleeps 2 s (room for a
    slow psql to see it start); /plaintext is sent once PostgreSQL shows it running, and must
    wait at least 0.3 s (inline) or answer within 0.5 s (the others)."""
    need_cluster()
    for mode in ("inline", "blocking", "readiness"):
        with Server("--db", CONNINFO, "--db-mode", mode, "--test-routes") as srv:
            srv.wait_stats(lambda s: s["pool_idle"] == s["pool_size"])
            slow = threading.Thread(target=srv.get, args=("/db-sleep?ms=2000",))
            slow.start()
            deadline = time.monotonic() + 5
            while not sleeping() and time.monotonic() < deadline:
                time.sleep(0.01)
            t0 = time.monotonic()
            status = srv.get("/plaintext")[0]
            waited = time.monotonic() - t0
            slow.join()
            assert status == 200
            print(f"     {mode}: /plaintext during a 2 s query took {waited * 1000:.0f} ms")
            if mode == "inline":
                assert waited >= 0.3, f"inline: /plaintext was not held ({waited:.3f} s)"
            else:
                assert waited < 0.5, f"{mode}: /plaintext was held ({waited:.3f} s)"


def sleeping():
    """1 while a pg_sleep query of the test database is running."""
    q = ("SELECT count(*) FROM pg_stat_activity WHERE datname = 'kb' AND state = 'active' "
         "AND query LIKE 'SELECT pg_sleep%'")
    return int(subprocess.run(["psql", "-X", "-A", "-t", CONNINFO, "-c", q], check=True,
                              capture_output=True, text=True).stdout.strip()) > 0


@test
def inline_database_stopped_gives_503_then_service_resumes():
    need_cluster()
    if not PGDIR:
        skip("KB_PG_DIR not set: cannot stop and restart the cluster")
    with Server("--db", CONNINFO, "--db-mode", "inline") as srv:
        assert srv.get("/db")[0] == 200
        with cluster_stopped(srv, "the inline route"):
            statuses = [srv.get("/db")[0] for _ in range(3)]
            assert statuses == [503] * 3, statuses
            st = srv.stats()
            assert st["db_reachable"] is False and st["pool_down"] == 1, st
            assert st["unavailable"] >= 3, st
        st = srv.stats()
        assert st["db_reachable"] is True and st["reconnects"] >= 2, st
        err = srv.stop()
        srv.stop = lambda: None
        assert "connection lost" in err or "connect failed" in err, err


# ---- the blocking design: task workers parked on synchronous queries (dbworkers.h) ----

def threads(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(f.read().split("Threads:")[1].split()[0])


def raw_get(srv, path):
    """A request on a socket of its own, left for the caller to read or drop."""
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return s


@test
def blocking_workers_hold_a_connection_each_and_rows_are_exact():
    need_cluster()
    with Server("--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "4") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 4)
        assert threads(srv.proc.pid) == 5, "the loop and four workers"
        assert backends() == 4, "one connection per worker"
        res = fetch_many(srv, "/db", 200, 16)
        bad = [r for r in res if r[0] != 200 or not BODY_RE.match(r[1])]
        assert len(res) == 200 and not bad, bad[:3]
        rows = {json.loads(b)["id"]: json.loads(b)["randomNumber"] for _, b in res}
        assert psql_rows(rows) == rows
        st = srv.stats()
        assert st["db_mode"] == "blocking" and st["pool_size"] == 4, st
        assert st["queries_total"] == 200 and st["errors"] == 0 and st["unavailable"] == 0, st
        assert st["suspended_total"] == 200, st      # every /db parked for its worker
        assert st["suspended_max"] > 4, st           # more waiting than workers: they queued
        assert st["reconnects"] == 4, st
        assert_quiet(srv, 4)


@test
def blocking_slow_queries_overlap_and_queue_while_plaintext_is_served():
    """Gate: overlapping slow queries. Eight 300 ms queries on four workers overlap four at a
    time: two waves, about 0.6 s in all (one after the other: 2.4 s; on one worker: the same),
    the second wave queued; meanwhile /plaintext answers at once from the loop."""
    need_cluster()
    with Server("--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "4",
                "--test-routes") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 4)
        out = []
        t0 = time.monotonic()
        slow = threading.Thread(target=lambda: out.extend(fetch_many(srv, "/db-sleep?ms=300", 8, 8)))
        slow.start()
        st = srv.wait_stats(lambda s: s["queued"] > 0)
        assert st["pool_busy"] == 4 and st["queued"] == 4, st
        t1 = time.monotonic()
        status = srv.get("/plaintext")[0]
        waited = time.monotonic() - t1
        slow.join()
        total = time.monotonic() - t0
        assert status == 200
        assert [r[0] for r in out] == [200] * 8, out
        print(f"     eight 300 ms queries on 4 workers: {total:.3f} s; /plaintext meanwhile "
              f"{waited * 1000:.0f} ms")
        assert waited < 0.25, f"/plaintext waited {waited:.3f} s behind the queries"
        assert 0.6 <= total < 1.5, f"not two overlapped waves: {total:.3f} s"
        st = srv.stats()
        assert st["suspended_max"] == 8 and st["queries_total"] == 8, st
        assert_quiet(srv, 4)


@test
def blocking_client_gone_mid_query_leaves_the_pool_healthy():
    """Gate: cancellation and pool health. On one worker, a client leaves while its 800 ms
    query runs and another while its query is still queued. The queued query never runs; the
    running one ends on its worker, whose connection stays in use (no reconnect); every gauge
    is back at zero and the next /db is answered on the same connection."""
    need_cluster()
    with Server("--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "1",
                "--test-routes") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 1)
        running = raw_get(srv, "/db-sleep?ms=800")
        srv.wait_stats(lambda s: s["pool_busy"] == 1)
        queued = raw_get(srv, "/db-sleep?ms=800")
        st = srv.wait_stats(lambda s: s["queued"] == 1)
        assert st["queued"] == 1 and st["suspended_now"] == 2, st
        running.close()
        queued.close()
        st = srv.wait_stats(lambda s: s["suspended_now"] == 0, timeout=2)
        assert st["suspended_now"] == 0, st           # both clients' requests let go at once
        st = srv.wait_stats(lambda s: s["pool_idle"] == 1 and s["queued"] == 0, timeout=3)
        assert st["queries_total"] == 1, st           # the running one ended; the queued never ran
        assert st["reconnects"] == 1 and st["pool_down"] == 0, st
        status, _, body = srv.get("/db")
        assert status == 200 and BODY_RE.match(body), (status, body)
        assert backends() == 1
        assert_quiet(srv, 1)
        assert srv.stats()["reconnects"] == 1


@test
def blocking_queue_full_answers_503_at_once():
    need_cluster()
    with Server("--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "1",
                "--db-queue", "1", "--test-routes") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 1)
        a = raw_get(srv, "/db-sleep?ms=500")
        srv.wait_stats(lambda s: s["pool_busy"] == 1)
        b = raw_get(srv, "/db-sleep?ms=10")
        srv.wait_stats(lambda s: s["queued"] == 1)
        t0 = time.monotonic()
        status, ctype, body = srv.get("/db")
        assert status == 503 and ctype == "application/json", (status, body)
        assert json.loads(body) == {"error": "database queue full"}, body
        assert time.monotonic() - t0 < 0.3, "the refusal waited for a worker"
        for s in (a, b):
            s.settimeout(5)
            assert s.recv(4096).startswith(b"HTTP/1.1 200"), "a queued request was lost"
            s.close()
        st = srv.stats()
        assert st["unavailable"] == 1 and st["queries_total"] == 2, st
        assert_quiet(srv, 1)


@test
def blocking_database_stopped_gives_503_then_service_resumes():
    need_cluster()
    if not PGDIR:
        skip("KB_PG_DIR not set: cannot stop and restart the cluster")
    with Server("--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "2") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 2)
        assert srv.get("/db")[0] == 200
        with cluster_stopped(srv, "the workers"):
            statuses_until_three_503(srv)
            st = srv.stats()
            assert st["db_reachable"] is False and st["pool_down"] == 2, st
        st = srv.wait_stats(lambda s: s["pool_idle"] == 2)
        assert st["db_reachable"] is True and st["reconnects"] >= 4, st
        assert_quiet(srv, 2)


@test
def blocking_stop_cuts_a_running_query_short_and_joins_the_workers():
    """SIGTERM while a worker is parked on a 5 s query: the server cancels it, joins every
    worker and exits 0 well before the query would have ended."""
    need_cluster()
    with Server("--db", CONNINFO, "--db-mode", "blocking", "--db-workers", "3",
                "--test-routes") as srv:
        srv.wait_stats(lambda s: s["pool_idle"] == 3)
        s = raw_get(srv, "/db-sleep?ms=5000")
        srv.wait_stats(lambda st: st["pool_busy"] == 1)
        t0 = time.monotonic()
        srv.stop()
        srv.stop = lambda: None
        took = time.monotonic() - t0
        s.close()
        assert took < 2.5, f"stop waited for the query: {took:.2f} s"


if __name__ == "__main__":
    exit_with(os.environ.get("KB_SUITE", "db"), sys.argv[1:] or None)
