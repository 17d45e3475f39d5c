"""test_interleave -- the runtimes measured side by side, with the host's floor beside them.

Two stand-in runtimes (slow_host_server.py) whose every response costs a known CPU time, the
second twice the first; halfway through the run the "host" slows down (each cost doubles), as
a VM's speed moves in minutes with no steal to show it. Interleaved, each rate measures both
runtimes seconds apart, so the drift moves both alike and their ratio holds at 2; run one after
another (--order sequential), the first runtime meets the fast host and the second the slow
one, and the ratio doubles. Then the quiet-before-next rule: a runtime that goes on working
after its point (a backlog) holds the next runtime's point until the server CPUs are quiet. And
the floor's record: floor/<id>/floor.json, each point's verdict.json naming the sample taken
before it, the report's floor multiples re-derived from those files. Needs root for the
cgroup sandbox.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, CONTRACT, KB, here, need
from kbtest import exit_with, skip, test

HERE = here(__file__)
TMP = tempfile.mkdtemp(prefix="kb-interleave-e2e-")
SERVER = os.path.join(HERE, "slow_host_server.py")
CHEAP_US, DEAR_US = 1000, 2000
RATES = "40,80,120,160"
ARGS = ["--profile", "quick", "--routes", "plaintext", "--rates", RATES, "--duration", "1",
        "--warmup", "0.5", "--drain", "0.5", "--threads", "1", "--connections", "8",
        "--confirm", "1", "--free-ports", "--build", BUILD, "--requests-log", "none"]


def need_sandbox():
    if os.geteuid() != 0 or not os.path.exists("/sys/fs/cgroup"):
        skip("the native sandbox needs root and writable cgroups")
    need(KB, os.path.join(BUILD, "kb-control"))


def runtime(name, cost_us, slow, linger=0):
    return {"name": name, "port": 0, "version": [sys.executable, "--version"],
            "command": [sys.executable, SERVER, "--port", "{port}", "--bind", "{bind}",
                        "--contract", os.path.join(TMP, "contract-base.json"),
                        "--cost-us", str(cost_us), "--slow-file", slow,
                        "--linger-s", str(linger)],
            "executables": [sys.executable]}


def contract(tag, rts):
    """The contract with rts alone, the first of them the baseline."""
    c = json.loads(json.dumps(CONTRACT))
    with open(os.path.join(TMP, "contract-base.json"), "w") as f:
        json.dump(CONTRACT, f)
    c["runtimes"] = rts
    c["comparison"]["baseline"] = rts[0]["name"]
    for p in c["profiles"].values():
        p.pop("runtimes", None)
    path = os.path.join(TMP, f"contract-{tag}.json")
    with open(path, "w") as f:
        json.dump(c, f)
    return path


def done_count(run):
    return len(glob.glob(os.path.join(run, "points", "*", "DONE")))


def curve_slowing_at(tag, order, after_points):
    """A curve of cheap and dear whose host slows once after_points points are done; its
    report.json."""
    slow = os.path.join(TMP, f"slow-{tag}")
    cpath = contract(tag, [runtime("cheap", CHEAP_US, slow), runtime("dear", DEAR_US, slow)])
    run = os.path.join(TMP, tag)
    p = subprocess.Popen([KB, "curve", "--run", run, "--contract", cpath, "--order", order,
                          *ARGS], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 240
    while p.poll() is None and done_count(run) < after_points and time.monotonic() < deadline:
        time.sleep(0.02)
    open(slow, "w").close()
    out = p.communicate(timeout=max(10, deadline - time.monotonic()))[0]
    assert p.returncode == 0, out[-3000:]
    r = subprocess.run([KB, "report", run], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return run, json.load(open(os.path.join(run, "report.json")))


def cost_ratio(rep):
    side = {s["runtime"]: s for s in rep["side_by_side"]["plaintext"]}
    return side["dear"]["cpu_per_response_vs_baseline_ratio"]["median"]


def cost_at(rep, rt, rate):
    row = [w for w in rep["rows"] if w["runtime"] == rt and w["requested_rps"] == rate][0]
    return row["server_cpu_us_per_response"]["median"]


@test
def a_host_that_slows_mid_run_moves_every_runtime_alike_only_when_interleaved():
    need_sandbox()
    run, inter = curve_slowing_at("inter", "interleaved", 4)
    plan = json.load(open(os.path.join(run, "plan.json")))
    assert plan["order"] == "interleaved", plan["order"]
    ids = [p["id"] for p in plan["points"]]
    assert ids[:4] == ["cheap-plaintext-40", "dear-plaintext-40", "dear-plaintext-80",
                       "cheap-plaintext-80"], ids
    # the drift hit both runtimes: each cost about doubled between the first and last rate
    for rt in ("cheap", "dear"):
        assert cost_at(inter, rt, 160) / cost_at(inter, rt, 40) > 1.5, \
            (rt, cost_at(inter, rt, 40), cost_at(inter, rt, 160))
    ratio = cost_ratio(inter)
    _, seq = curve_slowing_at("seq", "sequential", 4)
    seq_ratio = cost_ratio(seq)
    # the servers' own CPU: dear costs twice cheap whatever the host, less Python's own
    # overhead per request, which both pay alike
    assert 1.3 < ratio < 2.4, ratio
    assert seq_ratio > 1.4 * ratio, (seq_ratio, ratio)
    md = open(os.path.join(run, "report.md")).read()
    assert "### Side by side with cheap" in md and "| dear |" in md, md[:3000]


@test
def a_backlog_left_by_one_runtime_holds_the_next_runtimes_point_until_quiet():
    need_sandbox()
    slow = os.path.join(TMP, "never")
    cpath = contract("linger", [runtime("laggard", CHEAP_US, slow, linger=1.5),
                                runtime("other", CHEAP_US, slow)])
    run = os.path.join(TMP, "linger")
    p = subprocess.run([KB, "curve", "--run", run, "--contract", cpath, *ARGS, "--rates",
                        "40,80"], capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    pts = [x["id"] for x in json.load(open(os.path.join(run, "plan.json")))["points"]]
    after_laggard = [b for a, b in zip(pts, pts[1:]) if a.startswith("laggard-")]
    after_other = [b for a, b in zip(pts, pts[1:]) if a.startswith("other-")]
    assert after_laggard and after_other, pts
    for pid in after_laggard:
        v = json.load(open(os.path.join(run, "points", pid, "verdict.json")))
        # it waited out the laggard's 1.5 s of work, and the CPUs were quiet when it began
        assert v["settle_s"] >= 1.0 and v["settle_quiet"], (pid, v["settle_s"], v["settle_quiet"])
        assert v["interleaved"]["settle_beside_cpu"] < 0.1, (pid, v["interleaved"])
    for pid in after_other:
        v = json.load(open(os.path.join(run, "points", pid, "verdict.json")))
        assert v["settle_s"] < 1.0, (pid, v["settle_s"])


@test
def the_floor_is_kept_as_evidence_and_the_report_derives_its_multiples_from_it():
    need_sandbox()
    run = os.path.join(TMP, "inter")
    if not os.path.exists(os.path.join(run, "plan.json")):
        skip("needs the interleaved run of the first test")
    floors = {os.path.basename(os.path.dirname(f)): json.load(open(f))
              for f in glob.glob(os.path.join(run, "floor", "f*", "floor.json"))}
    assert floors, os.listdir(run)
    for fid, f in floors.items():
        assert f["sample"] == fid and f["rate"] > 0 and f["completed"] > 0, f
        assert f["cpu_us_per_response"] > 0 and f["error"] is None, f
        assert os.path.exists(os.path.join(run, "floor", fid, "load.json")), fid
    rep = json.load(open(os.path.join(run, "report.json")))
    for w in rep["rows"]:
        v = json.load(open(os.path.join(run, "points", w["point_ids"][0], "verdict.json")))
        fid = v["interleaved"]["floor_sample"]
        assert fid in floors, (w["point_ids"], fid)
        want = v["server"]["cpu_us_per_response"] / floors[fid]["cpu_us_per_response"]
        got = w["server_cpu_floor_multiple"]["median"]
        assert abs(got - want) < 1e-6 * want, (w["point_ids"], got, want)
    hf = rep["host_floor"]
    us = sorted(f["cpu_us_per_response"] for f in floors.values())
    assert hf["samples_count"] == len(us) and abs(hf["cpu_us_per_response_max"] - us[-1]) < 1e-9
    assert abs(hf["moved_fraction"] - (us[-1] / us[0] - 1)) < 1e-9, hf
    # re-derived from the evidence: without the floor's files there are no multiples
    copy = os.path.join(TMP, "inter-nofloor")
    subprocess.run(["cp", "-a", run, copy], check=True)
    subprocess.run(["rm", "-rf", os.path.join(copy, "floor")], check=True)
    r = subprocess.run([KB, "report", copy], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rep2 = json.load(open(os.path.join(copy, "report.json")))
    assert rep2["host_floor"] is None, rep2["host_floor"]
    assert all(w["server_cpu_floor_multiple"]["median"] is None for w in rep2["rows"])


if __name__ == "__main__":
    exit_with("curve-interleave", sys.argv[1:])
