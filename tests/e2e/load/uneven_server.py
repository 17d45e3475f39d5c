"""uneven_server.py -- a server that serves its connections unevenly, for the tests of
`kneebench load --dispatch`: every request is answered at once, except one: the first request
after --after seconds on the first connection that asked anything is held --stall seconds.
Under any-free-connection dispatch that stall costs one request; under per-connection dispatch (wrk2's) it
holds back every request scheduled on that connection meanwhile.

Prints "listening on 127.0.0.1:PORT" when ready and runs until SIGTERM."""
import argparse
import asyncio
import signal
import time

BODY = b"uneven\n"


class Server:
    def __init__(self, after, stall):
        self.after, self.stall = after, stall
        self.first = None       # the first asking connection's writer
        self.t0 = None
        self.stalled = False

    async def handle(self, reader, writer):
        try:
            while True:
                try:
                    await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                if self.first is None:   # not the first accepted: a client may probe first
                    self.first = writer
                now = time.monotonic()
                if self.t0 is None:
                    self.t0 = now
                if writer is self.first and not self.stalled and now - self.t0 >= self.after:
                    self.stalled = True
                    await asyncio.sleep(self.stall)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY)
                await writer.drain()
        finally:
            writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after", type=float, default=1.0)
    ap.add_argument("--stall", type=float, default=1.2)
    a = ap.parse_args()
    s = Server(a.after, a.stall)
    srv = await asyncio.start_server(s.handle, "127.0.0.1", 0)
    print(f"listening on 127.0.0.1:{srv.sockets[0].getsockname()[1]}", flush=True)
    done = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, done.set)
    await done.wait()
    srv.close()


asyncio.run(main())
