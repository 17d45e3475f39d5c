"""test_fulldisk -- a full disk is the harness's failure, never the server's.

Issue 38: a curve whose run directory filled up recorded the point as `failed` ("missing
load evidence: load generator exited 1: ... requests.log: No space left on device"), marked
it DONE, exited 0, and a re-run kept it. Here the run directory is a small tmpfs this suite
mounts (and unmounts, whatever happens), filled until the point's small files fit but its
requests log does not: `load` exits 6, "cannot write output"; `curve` shows the point
incomplete, writes its incomplete.json and no DONE, judges nothing (no verdict.json) and
exits 1; once room is made, the re-run redoes the point and exits 0.
"""
import json
import os
import shutil
import subprocess
import tempfile

from kbenv import BUILD, KB, need
from kbtest import exit_with, skip, test
from kbcontrol import Control

TMP = tempfile.mkdtemp(prefix="kb-fulldisk-e2e-")
# what a point's files other than requests.log take is about 50 KB, its requests log at
# 10,000/s for a second about 300 KB: 250 KB free holds the one and never the other
SIZE_KB, FREE_KB = 4096, 250


class FullDisk:
    """A tmpfs of SIZE_KB at TMP/mnt with all but FREE_KB filled; unmounted on exit."""

    def __enter__(self):
        if os.geteuid() != 0:
            skip("mounting a tmpfs needs root")
        self.mnt = os.path.join(TMP, "mnt")
        os.makedirs(self.mnt, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_KB}k", "tmpfs", self.mnt],
                       check=True)
        self.fill = os.path.join(self.mnt, "fill")
        try:
            with open(self.fill, "wb") as f:
                f.write(b"\0" * ((SIZE_KB - FREE_KB) * 1024))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", self.mnt], check=False)
        os.rmdir(self.mnt)


@test
def load_exits_6_when_its_output_cannot_be_written():
    """The run itself went well; only its requests log did not fit: 6, not 1 (a load that
    could not run), so that a runner can tell its own failure from the server's."""
    need(KB)
    with FullDisk() as d, Control() as s:
        r = subprocess.run([KB, "load", "-R", "10000", "-d", "1", "-t1", "-c8", "--quiet",
                            "--json", f"{d.mnt}/load.json", "--requests-log",
                            f"{d.mnt}/requests.log", s.url],
                           capture_output=True, text=True, timeout=60)
    assert r.returncode == 6, (r.returncode, r.stderr)
    assert "cannot write output" in r.stderr and "No space left" in r.stderr, r.stderr


@test
def a_full_disk_leaves_the_curve_point_incomplete_and_a_rerun_redoes_it():
    if os.geteuid() != 0 or not os.path.exists("/sys/fs/cgroup/cgroup.controllers") and \
            not os.access("/sys/fs/cgroup/pids", os.W_OK):
        skip("the native sandbox needs root and writable cgroups")
    need(KB, os.path.join(BUILD, "go-server"))
    with FullDisk() as d:
        run = f"{d.mnt}/c"
        argv = [KB, "curve", "--run", run, "--build", BUILD, "--runtimes", "go", "--routes",
                "plaintext", "--rates", "10000", "--duration", "1", "--warmup", "0.5",
                "--drain", "0.5", "--free-ports", "--confirm", "1", "--requests-log", "all",
                "--order", "sequential"]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        pt = f"{run}/points/go-plaintext-10000"
        assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
        assert " incomplete " in r.stdout and "failed" not in r.stdout, r.stdout
        assert not os.path.exists(f"{pt}/DONE")
        assert not os.path.exists(f"{pt}/verdict.json"), "the server was judged"
        inc = json.load(open(f"{pt}/incomplete.json"))
        assert "exited 6" in inc["reason"] and "No space left" in inc["reason"], inc
        assert "requests.log" in inc["reason"], inc
        os.unlink(d.fill)
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        assert "(kept)" not in r.stdout, r.stdout
        assert os.path.exists(f"{pt}/DONE") and not os.path.exists(f"{pt}/incomplete.json")
        assert os.path.isfile(f"{pt}/requests.log")


if __name__ == "__main__":
    try:
        exit_with("e2e-fulldisk")
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
