#!/usr/bin/env python3
"""flood -- hold idle and slowloris connections open against a server on 127.0.0.1.

    flood.py --port P [--idle N] [--slow N] [--settle S] [--seconds S] [--no-reopen]

Opens N idle connections (connect, send nothing) and N slowloris connections (a request
line and a header started, then one more byte of an endless header every second), all
non-blocking on one epoll. A connection the server closes is opened again at once, as an
attacker holding a flood would, unless --no-reopen. Prints

    READY established=E open=O pending=P closed=C

once every connection has been established and no close has come for half a second, or
after --settle seconds (a server that stops accepting leaves connections in SYN retries),
then holds the floods until SIGTERM or --seconds, and prints

    DONE established=E closed=C reopened=R open=O

(E: connects completed, counting reopens; C: connections the server closed; O: established
and open at the end). Stdlib only; bounded by --seconds whatever the server does.
"""
import argparse
import errno
import os
import resource
import select
import signal
import socket
import sys
import time

HEAD = b"GET /plaintext HTTP/1.1\r\nHost: flood\r\nX-Pad: "
TRICKLE = b"a"          # the header's value never ends: no CR LF ever follows
TICK_S = 0.1            # a tenth of the slowloris connections gets its byte each tick
QUIET_S = 0.5           # no close for this long: the server is done making room


class Flood:
    def __init__(self, port, reopen):
        self.port = port
        self.reopen = reopen
        self.ep = select.epoll()
        self.socks = {}         # fd -> [sock, kind, established]
        self.slow = []          # established slowloris sockets, trickled in turn
        self.next_slow = 0
        self.established = self.closed = self.reopened = 0
        self.stop = False

    def open(self, kind):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        rc = s.connect_ex(("127.0.0.1", self.port))
        if rc not in (0, errno.EINPROGRESS):
            s.close()
            return False
        self.socks[s.fileno()] = [s, kind, False]
        self.ep.register(s.fileno(), select.EPOLLOUT)
        return True

    def drop(self, fd):
        s, kind, est = self.socks.pop(fd)
        self.ep.unregister(fd)
        s.close()
        if est:
            self.closed += 1
        if self.reopen and not self.stop and self.open(kind):
            self.reopened += 1

    def connected(self, fd):
        s, kind, _ = self.socks[fd]
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
            self.drop(fd)
            return
        self.socks[fd][2] = True
        self.established += 1
        if kind == "slow":
            try:
                s.send(HEAD)
            except OSError:
                self.drop(fd)
                return
            self.slow.append(s)
        self.ep.modify(fd, select.EPOLLIN | select.EPOLLRDHUP)

    def events(self, timeout):
        for fd, ev in self.ep.poll(timeout, 1024):
            if fd not in self.socks:
                continue
            if not self.socks[fd][2]:
                if ev & (select.EPOLLOUT | select.EPOLLERR | select.EPOLLHUP):
                    self.connected(fd)
            else:
                self.drop(fd)   # data, EOF or reset: the server is done with it

    def trickle(self):
        """One byte to the next tenth of the slowloris connections; closed ones drop out."""
        self.slow = [s for s in self.slow if s.fileno() >= 0]
        if not self.slow:
            return
        for _ in range(max(1, len(self.slow) // round(1 / TICK_S))):
            s = self.slow[self.next_slow % len(self.slow)]
            self.next_slow += 1
            try:
                s.send(TRICKLE)
            except OSError:
                pass            # the server's close shows as an event

    def counts(self):
        est = sum(1 for v in self.socks.values() if v[2])
        return est, len(self.socks) - est


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            print(f"NOFILE hard limit {hard} < {want}", flush=True)
            sys.exit(3)
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--slow", type=int, default=0)
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--no-reopen", action="store_true")
    a = ap.parse_args()
    raise_nofile(a.idle + a.slow + 256)
    f = Flood(a.port, not a.no_reopen)
    signal.signal(signal.SIGTERM, lambda *_: setattr(f, "stop", True))
    t_end = time.monotonic() + a.seconds
    for kind, n in (("idle", a.idle), ("slow", a.slow)):
        for i in range(n):
            f.open(kind)
            if i % 200 == 0:
                f.events(0)
    # Ready once every connection was established and the server has stopped closing them
    # (its room-making is over), or after --settle seconds whatever the server did.
    settle_end = time.monotonic() + a.settle
    quiet_since, closed = time.monotonic(), f.closed
    while time.monotonic() < min(settle_end, t_end) and not f.stop:
        f.events(0.05)
        if f.closed != closed:
            quiet_since, closed = time.monotonic(), f.closed
        if f.counts()[1] == 0 and time.monotonic() - quiet_since >= QUIET_S:
            break
    est, pend = f.counts()
    print(f"READY established={f.established} open={est} pending={pend} closed={f.closed}",
          flush=True)
    next_tick = time.monotonic()
    while not f.stop and time.monotonic() < t_end:
        f.events(max(0.0, next_tick - time.monotonic()))
        if time.monotonic() >= next_tick:
            f.trickle()
            next_tick += TICK_S
    f.stop = True
    est, _ = f.counts()
    print(f"DONE established={f.established} closed={f.closed} reopened={f.reopened} open={est}",
          flush=True)
    for v in f.socks.values():
        v[0].close()


if __name__ == "__main__":
    main()
