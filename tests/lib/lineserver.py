"""lineserver -- a server a test starts that says where it listens on its first line of
stdout (limiter.go, hostile_server.py, python3 -m http.server): the line read back and
checked, and the server stopped by its own PID on leaving (SIGTERM, SIGKILL past 10 s)."""
import re
import signal
import subprocess


class LineServer:
    def __init__(self, argv, expect, stderr=None):
        """Start argv; its first line must match the regular expression expect (the match
        is self.m, the line self.line)."""
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, text=True)
        self.line = self.p.stdout.readline()
        self.m = re.search(expect, self.line)
        if not self.m:
            self.stop()
            why = self.p.stderr.read() if stderr == subprocess.PIPE else ""
            raise AssertionError(f"{argv[0]} did not say where it listens: {self.line!r} {why}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """Its exit status."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.p.stdout.close()
        return self.p.returncode
