"""test_refine -- `kneebench curve --refine` bisects each cell between its grid rates.

The load is fake_load.py (tests/e2e/curve) with a knee the test knows: every rate from
FAKE_LOAD_KNEE_RPS up is uncontrolled, every rate below it controlled, so the refinement
must end with a bracket [a, b) around that rate within the resolution, whatever the host:
the verdicts do not depend on it. A real fixture serves (fake_load sends it a few real
requests), so the curve starts and stops it as it would. Needs root for the sandbox.
"""
import json
import os
import subprocess
import tempfile

from kbenv import BUILD, KB, here, need
from kbtest import exit_with, skip, test

HERE = here(__file__)
FAKE = os.path.join(HERE, "fake_load.py")
TMP = tempfile.mkdtemp(prefix="kb-refine-e2e-")
KNEE = 2500
ARGS = ["--profile", "quick", "--runtimes", "go", "--routes", "plaintext", "--rates",
        "1000,4000", "--duration", "0.3", "--warmup", "0", "--drain", "0.2", "--free-ports",
        "--load-cmd", FAKE, "--requests-log", "none", "--hold", "0"]
HOLD_KNEE = 2300


def need_sandbox():
    if os.geteuid() != 0 or not os.path.exists("/sys/fs/cgroup"):
        skip("the native sandbox needs root and writable cgroups")
    for p in (KB, os.path.join(BUILD, "go-server")):
        need(p)


def curve(run, *extra, env=None):
    env = dict(os.environ, FAKE_LOAD_KNEE_RPS=str(KNEE), **(env or {}))
    return subprocess.run([KB, "curve", "--run", run, *ARGS, *extra], capture_output=True,
                          text=True, timeout=300, env=env)


@test
def the_knee_is_bracketed_between_the_grid_rates():
    need_sandbox()
    run = os.path.join(TMP, "refine")
    p = curve(run, "--refine")
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    doc = json.load(open(os.path.join(run, "refine.json")))
    assert doc["resolution"] == 0.05 and len(doc["cells"]) == 1, doc
    c = doc["cells"][0]
    assert (c["grid_lo_rps"], c["grid_hi_rps"]) == (1000, 4000), c
    assert c["step"] == "located", c
    assert c["lo_rps"] < KNEE <= c["hi_rps"] and c["hi_rps"] / c["lo_rps"] - 1 <= 0.05, c
    # every bisected rate kept as a finished point of its own
    for rate in c["rates"]:
        d = os.path.join(run, "points", f"go-plaintext-{rate}-f1")
        assert os.path.exists(os.path.join(d, "DONE")), d
        v = json.load(open(os.path.join(d, "verdict.json")))
        assert v["verdict"] == ("controlled" if rate < KNEE else "uncontrolled"), (rate, v["verdict"])
    r = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    md = open(os.path.join(run, "report.md")).read()
    # one answer per cell: the refined held end, never the grid's cell beside a bracket
    assert f"| 1 | go | {c['lo_rps']} (refined) |" in md, md[:1500]
    assert "## Refined knees" in md and '"N (refined)"' in md, md
    assert "go plaintext: grid cells: held 1000, next 4000" in md, md
    ans = json.load(open(os.path.join(run, "report.json")))["answer"][0]["routes"]["plaintext"]
    assert ans["proven_rps"] == c["lo_rps"] and ans["grid_proven_rps"] == 1000, ans
    assert ans["proven_is_refined"] and ans["refined"]["lo_rps"] == c["lo_rps"], ans
    # resumed: nothing is measured again, and it says the same
    again = curve(run, "--refine")
    assert again.returncode == 0 and "[refine" not in again.stdout, again.stdout[-1500:]
    assert json.load(open(os.path.join(run, "refine.json")))["cells"] == doc["cells"]


@test
def a_held_end_that_misses_its_hold_moves_the_refined_bracket_down():
    """Short points hold up to 2,500 req/s, a hold only below 2,300: the first located held
    end misses its hold (a -h point, uncontrolled), the bracket moves below it, and the
    refinement ends with a held end whose hold held."""
    need_sandbox()
    run = os.path.join(TMP, "refine-hold")
    p = curve(run, "--refine", "--hold", "0.6", env={"FAKE_LOAD_HOLD_KNEE_RPS": str(HOLD_KNEE)})
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    doc = json.load(open(os.path.join(run, "refine.json")))
    assert doc["hold_s"] == 0.6 and doc["hold_warmup_s"] == 5, doc
    c = doc["cells"][0]
    assert c["step"] == "located", c
    assert c["lo_rps"] < HOLD_KNEE <= c["hi_rps"] and c["hi_rps"] / c["lo_rps"] - 1 <= 0.05, c
    holds = sorted(d for d in os.listdir(os.path.join(run, "points")) if "-h" in d)
    verdicts = {d: json.load(open(os.path.join(run, "points", d, "verdict.json")))["verdict"]
                for d in holds}
    assert verdicts.get(f"go-plaintext-{c['lo_rps']}-h1") == "controlled", verdicts
    missed = [d for d, v in verdicts.items() if v != "controlled"]
    assert missed and all(int(d.split("-")[2]) >= HOLD_KNEE for d in missed), verdicts
    cmd = json.load(open(os.path.join(run, "points", holds[0], "command.json")))
    assert (cmd["duration_s"], cmd["warmup_s"]) == (0.6, 5), cmd
    r = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "each held end was loaded once more for 0.6 s" in \
        open(os.path.join(run, "report.md")).read().replace("\n", " ")
    # the answer is the held end whose hold held, its samples the short and the hold ones
    d = json.load(open(os.path.join(run, "report.json")))
    assert d["answer"][0]["routes"]["plaintext"]["proven_rps"] == c["lo_rps"], d["answer"]
    fine = [w for w in d["rows"] if not w["is_grid"]]
    assert [w["requested_rps"] for w in fine] == [c["lo_rps"]], fine
    assert f"go-plaintext-{c['lo_rps']}-h1" in fine[0]["point_ids"], fine


@test
def without_refine_there_is_no_refinement_and_bad_values_are_refused():
    need_sandbox()
    run = os.path.join(TMP, "plain")
    p = curve(run, "--rates", "1000,4000")
    assert p.returncode == 0, (p.stdout[-1500:], p.stderr[-1500:])
    assert not os.path.exists(os.path.join(run, "refine.json"))
    for bad in ("--refine=0", "--refine=x", "--refine=101"):
        q = curve(os.path.join(TMP, "bad"), bad)
        assert q.returncode == 2 and "--refine must be" in q.stderr, (bad, q.returncode, q.stderr)


if __name__ == "__main__":
    exit_with("e2e-refine")
