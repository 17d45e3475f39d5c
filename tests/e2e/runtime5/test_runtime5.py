"""A fifth runtime, added as docs/adding-a-runtime.md says: one folder and one contract entry.

The folder is tests/e2e/runtime5/pyhttp/ (the contract's plaintext and json routes from
Python's standard library); the entry goes into a copy of the contract, passed with
--contract as a user passes their own. Nothing in runner/, the report code, the Makefile,
the completion or docker/ is edited. Then:

- the build's check accepts the entry, and refuses, naming the runtime and the module.mk it
  lacks, one whose {build}/ program no module builds; in a scratch tree (links to this one)
  a new folder's module.mk is found by the Makefile's */module.mk with no list to edit;
- the generated completion and README table, and the image plan, hold the new runtime;
- the conformance suite passes on it, honours a conformance_skips entry and refuses one
  naming no test;
- a two-rate curve (200 and 400 req/s, 1 s points, 32 connections) runs it, and its report
  ranks it, tabulates both points and charts it.

The host is shared and its CPU stolen at times: no verdict is asserted beyond its being one
the curve gives (a point may be client-limited there); what is asserted is that the
evidence exists and the runtime is in the report.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from kbenv import BUILD, CONTRACT, KB, ROOT, here, need
from kbtest import exit_with, test

HERE = here(__file__)
GEN = os.path.join(ROOT, "contract", "runtimes.py")
TMP = tempfile.mkdtemp(prefix="kb-runtime5-")
NAME = "pyhttp"
FOLDER = os.path.relpath(os.path.join(HERE, NAME), ROOT)
VERDICTS = {"controlled", "uncontrolled", "failed", "client-limited"}

# The one contract entry: how the runtime starts, what identifies it, what it says it is.
ENTRY = {
    "name": NAME,
    "about": "Python's standard library (socketserver), a thread per connection",
    "port": 8086,
    "command": ["python3", "{root}/" + FOLDER + "/server.py", "--port", "{port}",
                "--bind", "{bind}"],
    "version": ["python3", "--version"],
    "sources": [FOLDER],
    "executables": ["python3"],
}


def contract(*extra):
    """A copy of the tree's contract with extra runtime entries, written to TMP."""
    c = json.loads(json.dumps(CONTRACT))
    c["runtimes"] += [json.loads(json.dumps(e)) for e in extra]
    path = os.path.join(TMP, f"contract-{len(os.listdir(TMP))}.json")
    with open(path, "w") as f:
        json.dump(c, f, indent=2)
    return path


def sh(argv, timeout=120, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def make(*args, where=ROOT):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return sh(["make", "-s", "--no-print-directory", "-C", where, *args], env=env)


@test
def build_check_takes_the_entry_and_names_a_missing_module():
    r = make("check-runtimes", f"KB_CONTRACT={contract(ENTRY)}")
    assert r.returncode == 0, r.stdout + r.stderr
    ghost = {**ENTRY, "name": "ghost", "sources": ["ghost"],
             "command": ["{build}/ghost-server", "--port", "{port}"],
             "executables": ["{build}/ghost-server"]}
    r = make("check-runtimes", f"KB_CONTRACT={contract(ghost)}")
    assert r.returncode != 0, r.stdout + r.stderr
    assert "runtime ghost: its folder ghost/ (sources) does not exist" in r.stderr, r.stderr
    assert "runtime ghost: {build}/ghost-server is built by no module: ghost/module.mk" \
        in r.stderr, r.stderr


@test
def a_new_folders_module_is_found_without_a_list():
    """A scratch tree of links to this one, plus ghost/ with a module.mk building
    {build}/ghost-server: the Makefile includes it unasked; without it the build stops."""
    tree = os.path.join(TMP, "tree")
    os.mkdir(tree)
    for name in os.listdir(ROOT):
        if name not in (".git", "build", "runs"):
            os.symlink(os.path.join(ROOT, name), os.path.join(tree, name))
    os.mkdir(os.path.join(tree, "ghost"))
    with open(os.path.join(tree, "ghost", "server.sh"), "w") as f:
        f.write(f'#!/bin/sh\nexec python3 "$(dirname "$0")/../{FOLDER}/server.py" "$@"\n')
    with open(os.path.join(tree, "ghost", "module.mk"), "w") as f:
        f.write("$(BUILD)/ghost-server: ghost/server.sh\n"
                "\t@mkdir -p $(dir $@) && install -m 755 $< $@\n"
                "PROGRAMS += $(BUILD)/ghost-server\n")
    ghost = {**ENTRY, "name": "ghost", "sources": ["ghost"],
             "command": ["{build}/ghost-server", "--port", "{port}"],
             "executables": ["{build}/ghost-server"]}
    cpath = contract(ghost)
    r = make("check-runtimes", f"KB_CONTRACT={cpath}", where=tree)
    assert r.returncode == 0, r.stdout + r.stderr
    r = make("-n", "build/ghost-server", where=tree)
    assert r.returncode == 0 and "install -m 755 ghost/server.sh build/ghost-server" in r.stdout, \
        r.stdout + r.stderr
    os.unlink(os.path.join(tree, "ghost", "module.mk"))
    r = make("check-runtimes", f"KB_CONTRACT={cpath}", where=tree)
    assert r.returncode != 0 and "ghost/module.mk, which would build it, does not exist" \
        in r.stderr, r.stdout + r.stderr


@test
def completion_readme_and_image_plan_hold_it():
    cpath = contract(ENTRY)
    into = os.path.join(TMP, "gen")
    r = sh([sys.executable, GEN, "--contract", cpath, "generate", "--into", into])
    assert r.returncode == 0, r.stderr
    script = os.path.join(into, "runner", "cli", "kneebench.bash-completion")
    p = sh(["bash", "-c", f"source {script}; COMP_WORDS=(kneebench curve --runtimes py); "
            "COMP_CWORD=3; _kneebench; printf '%s\\n' \"${COMPREPLY[@]}\""])
    assert p.returncode == 0 and p.stdout.split() == [NAME], (p.stdout, p.stderr)
    readme = open(os.path.join(into, "README.md")).read()
    assert f"| `{NAME}` | {ENTRY['about']} |" in readme
    # the tree's own files are untouched: the new runtime lives in the copy only
    assert sh([sys.executable, GEN, "generate", "--check"]).returncode == 0
    r = sh([sys.executable, GEN, "--contract", cpath, "image-plan"])
    assert r.returncode == 0, r.stderr
    plan = dict(line.split("=", 1) for line in r.stdout.splitlines() if line.startswith("KB_"))
    assert FOLDER in plan["KB_IMAGE_DIRS"] and NAME in plan["KB_IMAGE_RUNTIMES"], plan
    assert FOLDER not in plan["KB_IMAGE_BUILD_DIRS"], plan       # nothing to build


def conformance(cpath, *args):
    results = os.path.join(TMP, "conformance-results")
    return sh([os.path.join(ROOT, "tests", "lib", "py"),
               os.path.join(ROOT, "tests", "conformance", "test_conformance.py"), "--build", BUILD, "--contract", cpath, "--runtime", NAME, *args],
              timeout=300, env={**os.environ, "KB_TEST_RESULTS": results})


@test
def conformance_passes_on_it():
    r = conformance(contract(ENTRY))
    assert r.returncode == 0 and f"ok   {NAME}.stops_on_sigterm" in r.stdout, r.stdout + r.stderr
    assert f"ok   {NAME}.route_plaintext" in r.stdout and " 0 failed, 0 skipped" in r.stdout, \
        r.stdout
    # a known deviation, declared in the entry, is skipped with its reason ...
    known = {**ENTRY, "conformance_skips": {"hostile_slow_trickle": "declared to see it honoured"}}
    r = conformance(contract(known), "--only", "slow_trickle")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"SKIP {NAME}.hostile_slow_trickle: {NAME}: declared to see it honoured" in r.stdout
    # ... and one naming no test is refused before anything runs
    bad = {**ENTRY, "conformance_skips": {"no_such_test": "typo"}}
    r = conformance(contract(bad))
    assert r.returncode == 2 and "no_such_test" in r.stderr, r.stdout + r.stderr


def limits_args():
    """The cgroup sandbox where this host allows it (root, writable cgroups), else
    --no-limits (the fixture still pinned, every point stamped unconstrained)."""
    if os.geteuid() == 0 and (os.access("/sys/fs/cgroup/pids", os.W_OK) or
                              os.path.exists("/sys/fs/cgroup/cgroup.controllers")):
        return []
    return ["--no-limits"]


@test
def a_two_rate_curve_reports_it():
    need(KB)
    run = os.path.join(TMP, "run")
    r = sh([KB, "curve", "--run", run, "--contract", contract(ENTRY), "--runtimes", NAME,
            "--routes", "plaintext", "--rates", "200,400", "--duration", "1", "--warmup", "0.5",
            "--drain", "0.5", "--connections", "32", "--threads", "2", "--free-ports",
            "--build", BUILD, *limits_args()], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    plan = json.load(open(os.path.join(run, "plan.json")))
    assert plan["runtimes"] == [NAME], plan["runtimes"]
    ids = [p["id"] for p in plan["points"]]
    assert ids == [f"{NAME}-plaintext-200", f"{NAME}-plaintext-400"], ids
    for pid in ids:
        d = os.path.join(run, "points", pid)
        for f in ("load.json", "verdict.json", "DONE"):
            assert os.path.isfile(os.path.join(d, f)), (pid, f)
        v = json.load(open(os.path.join(d, "verdict.json")))
        assert v["verdict"] in VERDICTS, v
        assert json.load(open(os.path.join(d, "load.json")))["completed"] > 0, pid
    assert os.path.isfile(os.path.join(run, "fixtures", NAME, "identity.json"))
    versions = json.load(open(os.path.join(run, "run.json")))["runtime_versions"]
    assert versions.get(NAME, "").startswith("Python 3"), versions
    r = sh([KB, "report", run])
    assert r.returncode == 0, r.stdout + r.stderr
    md = open(os.path.join(run, "report.md")).read()
    answer = md[md.index("## Answer"):md.index("## Cost per response")]
    assert f"| 1 | {NAME} |" in answer, answer
    table = md[md.index(f"#### {NAME}, plaintext"):]
    for rate in (200, 400):
        assert f"\n| {rate} |" in table[:table.index("\n\n", table.index("|---"))], table[:800]
    rep = json.load(open(os.path.join(run, "report.json")))
    assert sorted(row["point_id"] for row in rep["rows"]) == ids, rep["rows"]
    assert all(row["runtime"] == NAME and row["verdict"] in VERDICTS for row in rep["rows"])
    assert [a["runtime"] for a in rep["answer"]] == [NAME], rep["answer"]
    svg = open(os.path.join(run, "charts", "achieved-plaintext.svg")).read()
    assert f'data-runtime="{NAME}"' in svg


if __name__ == "__main__":
    try:
        exit_with("runtime5", sys.argv[1:] or None)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
