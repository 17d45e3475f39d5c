"""any_server.py -- a server outside the contract, for `kneebench load URL`'s tests.

Answers every GET on any path with --status (200), the body "hello from any\n" as
text/html and the header "X-Served-By: any". Counts the requests that carried the header
"X-Token: abc", so a test can tell that -H reached the server. Prints "listening on
127.0.0.1:PORT" when ready; on SIGTERM writes {"requests", "with_token"} to --stats.
"""
import argparse
import asyncio
import json
import signal

BODY = b"hello from any\n"


class Server:
    def __init__(self, status):
        self.status = status
        self.requests = self.with_token = 0

    async def handle(self, reader, writer):
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                self.requests += 1
                lines = head.decode("latin-1").lower().split("\r\n")
                self.with_token += "x-token: abc" in lines
                writer.write(f"HTTP/1.1 {self.status} X\r\nContent-Type: text/html\r\n"
                             f"X-Served-By: any\r\nContent-Length: {len(BODY)}\r\n\r\n"
                             .encode() + BODY)
                await writer.drain()
        finally:
            writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--status", type=int, default=200)
    ap.add_argument("--stats", required=True)
    a = ap.parse_args()
    s = Server(a.status)
    srv = await asyncio.start_server(s.handle, "127.0.0.1", 0)
    print(f"listening on 127.0.0.1:{srv.sockets[0].getsockname()[1]}", flush=True)
    done = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, done.set)
    await done.wait()
    srv.close()
    with open(a.stats, "w") as f:
        json.dump({"requests": s.requests, "with_token": s.with_token}, f)


asyncio.run(main())
