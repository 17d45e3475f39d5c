#!/usr/bin/env python3
"""test_relocate -- a built tree copied elsewhere runs unchanged (issue 11: no compiled-in
paths; runner/util/root.h finds the tree at run time).

The checkout is copied to a scratch directory (without .git, runs/ and build/'s objects,
sanitizer builds and test results). From the copy, a one-point `kneebench curve` (gray-static,
plaintext, one low rate, about a second) and `kneebench report` run with the original
checkout hidden under an empty tmpfs in a private mount namespace (unshare -m; where that is
not possible the copy is named with --root and the original stays visible), and no file of
the run or its report may name the original tree. Then how the tree is found: beside the
executable, by --root (which wins over the executable's tree) and by $KB_ROOT; a --root or
$KB_ROOT naming no tree, and an executable outside any tree, are refused with a message
that says how to name one.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from kbenv import BUILD, CONTRACT, ROOT, need
from kbtest import exit_with, test

ORIG = os.path.realpath(ROOT)
TMP = tempfile.mkdtemp(prefix="kb-relocate-")
COPY = os.path.join(TMP, "tree")
KB_COPY = os.path.join(COPY, "build", "kneebench")
# the contract's version, as `kneebench version` prints it
CONTRACT_VERSION = CONTRACT["contract_version"]
SKIP_TOP = {".git", "runs", "build"}


def env_without_tree():
    """This environment minus anything that names a tree or a contract."""
    return {k: v for k, v in os.environ.items() if k not in ("KB_ROOT", "KNEEBENCH_CONTRACT")}


def copy_tree():
    """The checkout and build/'s programs (its top-level files), once."""
    if os.path.exists(KB_COPY):
        return
    for exe in ("kneebench", "gray-static"):
        need(os.path.join(BUILD, exe))
    os.makedirs(os.path.join(COPY, "build"))
    for name in os.listdir(ROOT):
        if name in SKIP_TOP:
            continue
        src, dst = os.path.join(ROOT, name), os.path.join(COPY, name)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
    for name in os.listdir(BUILD):
        src = os.path.join(BUILD, name)
        if os.path.isfile(src):
            shutil.copy2(src, os.path.join(COPY, "build", name))
    os.chmod(TMP, 0o755)


def hidden(argv):
    """argv run with the original checkout hidden (an empty tmpfs over it, in a mount
    namespace of its own), or None where that cannot be done here."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return None
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    script = ('mount -t tmpfs -o size=1m,mode=755 kb-hidden "$0" || exit 97; '
              '[ ! -e "$0/contract/contract.json" ] || exit 98; exec "$@"')
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, ORIG, *argv]


def limits_args():
    """The cgroup sandbox where this host allows it, else --no-limits."""
    if os.geteuid() == 0 and (os.access("/sys/fs/cgroup/pids", os.W_OK) or
                              os.path.exists("/sys/fs/cgroup/cgroup.controllers")):
        return []
    return ["--no-limits"]


def files_naming(top, needle):
    """Every file under top whose bytes hold needle."""
    found = []
    for d, _, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p):
                continue
            with open(p, "rb") as fh:
                if needle.encode() in fh.read():
                    found.append(os.path.relpath(p, top))
    return found


@test
def copied_tree_runs_curve_and_report_without_the_original():
    copy_tree()
    run = os.path.join(TMP, "run")
    curve = [KB_COPY, "curve", "--run", run, "--profile", "quick", "--confirm", "1",
             "--runtimes", "gray-static",
             "--routes", "plaintext", "--rates", "100", "--duration", "1", "--warmup", "0.5",
             "--drain", "0.5", "--free-ports", *limits_args()]
    wrapped = hidden(curve)
    if wrapped is None:
        # the original stays visible: name the copy, so that nothing falls back to it
        print("note: cannot hide the original checkout here; --root names the copy")
        wrapped = [KB_COPY, "--root", COPY, *curve[1:]]
    p = subprocess.run(wrapped, capture_output=True, text=True, timeout=300, cwd=TMP,
                       env=env_without_tree())
    assert p.returncode == 0, f"curve exit {p.returncode}: {p.stderr}{p.stdout}"
    rep = [KB_COPY, "report", run]
    p = subprocess.run(hidden(rep) or rep, capture_output=True, text=True, timeout=120, cwd=TMP,
                       env=env_without_tree())
    assert p.returncode == 0, f"report exit {p.returncode}: {p.stderr}{p.stdout}"
    assert os.path.isfile(os.path.join(run, "report.md"))
    with open(os.path.join(run, "run.json")) as f:
        rj = json.load(f)
    assert rj["contract"] == os.path.join(os.path.realpath(COPY), "contract", "contract.json"), rj
    # the fixture's own libmicrohttpd, from gray-static's version line
    assert isinstance(rj.get("libmicrohttpd"), str) and rj["libmicrohttpd"][0].isdigit(), rj
    assert "libmicrohttpd" not in rj["host"], rj["host"]
    cmds = [os.path.join(d, "command.json") for d, _, fs in os.walk(run) if "command.json" in fs]
    assert cmds, "no point ran"
    naming = files_naming(run, ORIG)
    assert not naming, f"these name the original tree {ORIG}: {naming}"


def version_of(argv, **kw):
    p = subprocess.run(argv + ["version"], capture_output=True, text=True, timeout=30, **kw)
    assert p.returncode == 0, p.stderr
    return p.stdout


@test
def tree_found_beside_the_executable_by_root_and_by_env():
    copy_tree()
    copy_contract = os.path.join(os.path.realpath(COPY), "contract", "contract.json")
    # beside the executable, whatever the current directory
    out = version_of([KB_COPY], cwd="/", env=env_without_tree())
    assert f"contract version {CONTRACT_VERSION} ({copy_contract})" in out, out
    # --root wins over the executable's own tree, in both spellings
    orig_kb = os.path.join(BUILD, "kneebench")
    for argv in ([orig_kb, "--root", COPY], [orig_kb, f"--root={COPY}"]):
        assert copy_contract in version_of(argv, env=env_without_tree()), argv
    # and $KB_ROOT too
    env = dict(env_without_tree(), KB_ROOT=COPY)
    assert copy_contract in version_of([orig_kb], env=env)


@test
def no_tree_is_a_clear_error():
    copy_tree()
    lonely = os.path.join(TMP, "lonely")
    os.makedirs(lonely, exist_ok=True)
    kb = os.path.join(lonely, "kneebench")
    shutil.copy2(KB_COPY, kb)
    env = env_without_tree()
    run = os.path.join(TMP, "never")

    def refused(argv, env, want):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=lonely, env=env)
        assert p.returncode == 2, (argv, p.returncode, p.stderr)
        assert want in p.stderr, (argv, p.stderr)
        assert not os.path.exists(run), "a refused curve must not start a run"

    refused([kb, "curve", "--run", run], env, "--root DIR")
    refused([kb, "calibrate", "--out", run], env, "--root DIR")
    refused([kb, "load", "--url", "http://127.0.0.1:9/plaintext", "--rate", "1", "--duration",
             "1"], env, "--contract FILE")
    refused([kb, "--root", lonely, "curve", "--run", run], env, f"--root {lonely} is not")
    refused([kb, "--root"], env, "--root needs a directory")
    refused([kb, "curve", "--run", run], dict(env, KB_ROOT=lonely), f"$KB_ROOT {lonely} is not")
    # what needs no tree still works
    for argv in ([kb, "--help"], [kb, "curve", "--help"], [kb, "version"]):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=lonely, env=env)
        assert p.returncode == 0, (argv, p.stderr)


if __name__ == "__main__":
    try:
        exit_with("e2e-relocate", sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
