"""hostile_server.py -- a test HTTP server for kneebench load's end-to-end tests.

Serves the contract's plaintext route correctly, except that every K-th request (--every)
gets the misbehaviour named by --mode, or, for --mode stall, every response is held once for
--stall-ms after --stall-after seconds. Prints "listening on 127.0.0.1:PORT" when ready; on
SIGTERM writes {"connections", "requests", "events"} to --stats and exits, so a test can
compare the client's counts with what the server actually did.
"""
import argparse
import asyncio
import json
import os
import signal
import socket
import struct
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def contract_route(name):
    with open(os.environ.get("KNEEBENCH_CONTRACT", os.path.join(ROOT, "contract", "contract.json"))) as f:
        for r in json.load(f)["routes"]:
            if r["name"] == name:
                return r
    raise SystemExit(f"no route {name}")


def response(ct, body, length=None):
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
    n = len(body) if length is None else length
    return (f"HTTP/1.1 200 OK\r\nServer: hostile\r\nDate: {date}\r\nContent-Type: {ct}\r\n"
            f"Content-Length: {n}\r\n\r\n").encode() + body


class Server:
    def __init__(self, a):
        self.a = a
        r = contract_route("plaintext")
        self.ct, self.body = r["content_type"], r["body"].encode()
        self.connections = self.requests = self.events = 0
        self.first = None
        self.stall_end = None

    async def handle(self, reader, writer):
        self.connections += 1
        try:
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests += 1
                if not await self.respond(self.requests, writer):
                    return
        finally:
            writer.close()

    async def respond(self, n, w):
        a, now = self.a, time.monotonic()
        self.first = self.first or now
        if a.mode == "stall":
            if self.stall_end is None and now - self.first >= a.stall_after:
                self.stall_end = now + a.stall_ms / 1000.0
                self.events += 1
            if self.stall_end and now < self.stall_end:
                await asyncio.sleep(self.stall_end - now)
        hostile = a.mode != "stall" and a.every and n % a.every == 0
        if not hostile:
            w.write(response(self.ct, self.body))
            await w.drain()
            return True
        self.events += 1
        ok = response(self.ct, self.body)
        if a.mode == "close_mid":
            w.write(ok[: len(ok) // 2])
            await w.drain()
            return False
        if a.mode == "reset":
            sock = w.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.transport.abort()
            return False
        if a.mode == "garbage":
            w.write(b"garbage, not HTTP\r\n\r\n")
            await w.drain()
            return True
        if a.mode == "trickle":
            for i in range(len(ok)):
                w.write(ok[i:i + 1])
                await w.drain()
                await asyncio.sleep(0.001)
            return True
        if a.mode == "short_length":   # declares fewer bytes than it sends
            w.write(response(self.ct, self.body, len(self.body) - 3))
            await w.drain()
            return True
        if a.mode == "long_length":    # declares more bytes than it sends
            w.write(response(self.ct, self.body, len(self.body) + 7))
            await w.drain()
            return True
        if a.mode == "big":
            w.write(response(self.ct, b"x" * (10 * 1024 * 1024)))
            await w.drain()
            return True
        if a.mode == "conn_close":     # a correct response that ends the connection
            w.write(ok.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
            await w.drain()
            return False
        if a.mode == "chunked":
            w.write(ok.split(b"Content-Length")[0] + b"Transfer-Encoding: chunked\r\n\r\n" +
                    b"".join(b"%x\r\n%s\r\n" % (1, self.body[i:i + 1]) for i in range(len(self.body))) +
                    b"0\r\n\r\n")
            await w.drain()
            return True
        if a.mode == "double":         # two responses to one request, in one write
            w.write(ok + ok)
            await w.drain()
            return True
        if a.mode == "double_late":    # the second response after the first was read
            w.write(ok)
            await w.drain()
            await asyncio.sleep(0.05)
            w.write(ok)
            await w.drain()
            return True
        if a.mode == "silent":
            await asyncio.sleep(3600)
            return False
        raise SystemExit(f"unknown mode {a.mode}")


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="ok")
    p.add_argument("--every", type=int, default=0)
    p.add_argument("--stall-after", type=float, default=1.0)
    p.add_argument("--stall-ms", type=float, default=500)
    p.add_argument("--stats", required=True)
    a = p.parse_args()
    s = Server(a)
    srv = await asyncio.start_server(s.handle, "127.0.0.1", 0, backlog=1024)
    port = srv.sockets[0].getsockname()[1]
    print(f"listening on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    tmp = a.stats + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"connections": s.connections, "requests": s.requests, "events": s.events}, f)
    os.rename(tmp, a.stats)
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())
