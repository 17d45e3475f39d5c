#!/usr/bin/env python3
"""test_install -- the installed tool load-tests without a checkout (issue 22, item 5).

`make install PREFIX=<scratch>` puts kneebench, kb-control and the contract under the
prefix (PREFIX/share/kneebench/contract.json). Then, from / and with $KB_ROOT and
$KNEEBENCH_CONTRACT unset, so that no tree is found above the executables nor in the current
directory: the installed kb-control serves on a free loopback port, the installed
`kneebench load` drives it for one second at 200 req/s and writes its JSON (exit 0, every
request answered and matching the contract); `kneebench --version` names the installed
contract and its version; `kneebench curve` is still refused, naming --root, since it needs
the fixtures of a tree. Every document the installed man page names is installed under
PREFIX/share/doc/kneebench/ at its path in the tree. `make uninstall` removes the contract, after which `load` from / is
refused with exit 2 and says where it looked.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from kbenv import BUILD, CONTRACT, CONTRACT_PATH, ROOT, need
from kbtest import exit_with, test

TMP = tempfile.mkdtemp(prefix="kb-install-")
PREFIX = os.path.join(TMP, "prefix")
KB = os.path.join(PREFIX, "bin", "kneebench")
CONTROL = os.path.join(PREFIX, "bin", "kb-control")
INSTALLED = os.path.join(os.path.realpath(TMP), "prefix", "share", "kneebench", "contract.json")
CONTRACT_VERSION = CONTRACT["contract_version"]


def bare_env():
    """This environment without anything that names a tree or a contract."""
    return {k: v for k, v in os.environ.items() if k not in ("KB_ROOT", "KNEEBENCH_CONTRACT")}


def make(*targets):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    p = subprocess.run(["make", "-s", "-C", ROOT, f"BUILD={BUILD}", *targets, f"PREFIX={PREFIX}"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr


def installed():
    """The scratch prefix, installed once."""
    for exe in ("kneebench", "kb-control"):
        need(os.path.join(BUILD, exe))
    if not os.path.exists(KB):
        make("install")
    # nothing above the installed programs may be a tree, or the test proves nothing
    d = os.path.dirname(KB)
    while d != "/":
        assert not os.path.exists(os.path.join(d, "contract", "contract.json")), d
        d = os.path.dirname(d)


def from_root(*argv, timeout=60):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, cwd="/",
                          env=bare_env())


class Control:
    """The installed kb-control on a free port (--port 0), started from /, stopped by PID."""

    def __enter__(self):
        self.p = subprocess.Popen([CONTROL, "--port", "0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd="/", env=bare_env())
        line = self.p.stdout.readline()
        if "127.0.0.1:" not in line:
            self.__exit__()
            raise AssertionError(f"kb-control did not start: {line!r} {self.p.stderr.read()}")
        self.port = int(line.rsplit(":", 1)[1].split()[0])
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        self.p.wait(10)
        self.p.stdout.close()
        self.p.stderr.close()


@test
def install_puts_the_contract_in_share():
    installed()
    with open(INSTALLED, "rb") as a, open(CONTRACT_PATH, "rb") as b:
        assert a.read() == b.read(), "the installed contract differs from the tree's"


@test
def installed_version_names_the_installed_contract():
    installed()
    p = from_root(KB, "--version")
    assert p.returncode == 0, p.stderr
    assert f"contract version {CONTRACT_VERSION} ({INSTALLED})" in p.stdout, p.stdout


@test
def installed_load_runs_from_the_root_directory():
    installed()
    out = os.path.join(TMP, "load.json")
    with Control() as ctl:
        p = from_root(KB, "load", "-t1", "-c4", "-d1s", "-R200",
                      f"http://127.0.0.1:{ctl.port}/plaintext", "--json", out, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    with open(out) as f:
        j = json.load(f)
    assert j["route"] == "plaintext" and j["requested_rps"] == 200, j
    assert j["scheduled"] == 200 and j["completed"] == 200, j
    assert j["errors"]["total"] == 0 and j["mismatches"]["total"] == 0, j
    assert j["corrected_us"]["count"] == 200 and j["corrected_us"]["p99"] > 0, j["corrected_us"]


@test
def installed_curve_still_needs_a_tree():
    installed()
    run = os.path.join(TMP, "never")
    p = from_root(KB, "curve", "--run", run)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "--root DIR" in p.stderr, p.stderr
    assert not os.path.exists(run)


def man_text():
    """The installed man page as text (help2man's roff, escapes undone), or the text it is
    made of where help2man is missing."""
    page = os.path.join(PREFIX, "share", "man", "man1", "kneebench.1")
    if os.path.exists(page):
        return open(page).read().replace("\\-", "-").replace("\\e", "\\")
    kb = os.path.join(BUILD, "kneebench")
    out = subprocess.run(["bash", os.path.join(ROOT, "runner/cli/man-include.sh"), kb],
                         capture_output=True, text=True, timeout=60)
    return out.stdout


@test
def every_document_the_man_page_names_is_installed():
    installed()
    text = man_text()
    named = set(re.findall(r"(?<![\w/.-])((?:docs/|runner/)?[A-Za-z][\w-]*\.md)\b", text))
    named -= {"report.md"}                     # a file a run writes, not a document
    assert {"README.md", "docs/protocol.md", "runner/README-load.md"} <= named, named
    doc = os.path.join(PREFIX, "share", "doc", "kneebench")
    for rel in sorted(named):
        with open(os.path.join(doc, rel), "rb") as a, open(os.path.join(ROOT, rel), "rb") as b:
            assert a.read() == b.read(), rel
    assert "share/doc/kneebench/" in text, "the man page does not say where they are"


@test
def uninstalled_contract_is_missed_clearly():
    installed()
    make("uninstall")
    try:
        assert not os.path.exists(INSTALLED)
        assert not os.path.exists(KB)
        assert not os.path.exists(os.path.join(PREFIX, "share", "doc", "kneebench"))
        # the programs are gone with it; a copy of kneebench where they were finds nothing
        os.makedirs(os.path.dirname(KB), exist_ok=True)
        shutil.copy2(os.path.join(BUILD, "kneebench"), KB)
        p = from_root(KB, "load", "-t1", "-c1", "-d1s", "-R1", "http://127.0.0.1:9/plaintext")
        assert p.returncode == 2, (p.returncode, p.stderr)
        assert "no installed contract at" in p.stderr and "--contract FILE" in p.stderr, p.stderr
    finally:
        shutil.rmtree(PREFIX, ignore_errors=True)


if __name__ == "__main__":
    try:
        exit_with("e2e-install", sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
