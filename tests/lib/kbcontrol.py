"""kbcontrol -- kb-control, the known-fast control server, as the suites start it: on a free
port (--port 0, read back from its first line), optionally behind a wrapper (taskset), and
stopped by its own PID, continued first in case a test left it stopped."""
import os
import signal
import subprocess

from kbenv import BUILD, need


class Control:
    def __init__(self, prefix=()):
        self.prefix = list(prefix)

    def __enter__(self):
        exe = os.path.join(BUILD, "kb-control")
        need(exe)
        self.p = subprocess.Popen([*self.prefix, exe, "--port", "0"], stdout=subprocess.PIPE,
                                  text=True)
        line = self.p.stdout.readline()
        if "127.0.0.1:" not in line:
            self.__exit__()
            raise AssertionError(f"kb-control did not report its port: {line!r}")
        self.port = int(line.rsplit(":", 1)[1].split()[0])
        self.url = f"http://127.0.0.1:{self.port}/plaintext"
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGCONT)
            self.p.terminate()
        self.p.wait(10)
        self.p.stdout.close()
