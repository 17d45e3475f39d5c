"""test_trust -- the client's trust is earned from direct evidence, not assumed from its CPU.

A noisy neighbour on the client's CPU: a process above the load threads' SCHED_FIFO 1
priority, busy 4 ms then idle 4 ms, for the length of one small curve point. The load
threads use little CPU themselves, so a CPU gate alone would trust them; their send lag and
rx delay show every wake-up the neighbour held back, and the point must come out
client-limited on those signals, with the server's own verdict kept beside it. Without the
neighbour the same point is trusted (one of three tries: a stall of this shared host can
trip the 1 ms gate by itself, as calibrate's second attempt already allows).
Needs root (cgroups, SCHED_FIFO) and two CPUs; bounded in time; every process it starts is
ended by its own PID.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from kbtest import exit_with, skip, test  # noqa: E402

BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
KB = os.path.join(BUILD, "kneebench")
CONTRACT = json.load(open(os.path.join(ROOT, "fixtures", "contract.json")))
CRIT = CONTRACT["comparison"]["criteria"]
RUNTIME = "gray-static" if os.access(os.path.join(BUILD, "gray-static"), os.X_OK) else "go"
TMP = tempfile.mkdtemp(prefix="kb-trust-e2e-")

NEIGHBOUR = r"""
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(2))
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    busy = time.monotonic() + 0.004
    while time.monotonic() < busy:
        pass
    time.sleep(0.004)
"""


def need():
    if os.geteuid() != 0 or not os.path.exists("/sys/fs/cgroup"):
        skip("needs root: the native sandbox's cgroups and SCHED_FIFO")
    if len(os.sched_getaffinity(0)) < 2:
        skip("needs two CPUs: one serving, one loading")
    if not os.access(KB, os.X_OK):
        skip(f"{KB} is not built")


def client_cpu():
    """The first CPU of the contract's client list ("1-" on a 2-CPU host: CPU 1)."""
    return int(CONTRACT["limits"]["client_cpus"].split(",")[0].split("-")[0])


def point(run):
    p = subprocess.run([KB, "curve", "--run", run, "--runtimes", RUNTIME, "--routes", "plaintext",
                        "--rates", "2000", "--duration", "3", "--warmup", "1", "--drain", "1",
                        "--free-ports", "--build", BUILD], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(os.path.join(run, "points", f"{RUNTIME}-plaintext-2000", "verdict.json")) as f:
        return json.load(f)


@test
def busy_neighbour_is_caught_by_lag_and_rx_delay_not_cpu():
    need()
    n = subprocess.Popen([sys.executable, "-c", NEIGHBOUR, str(client_cpu()), "30"])
    try:
        v = point(os.path.join(TMP, "neighbour"))
    finally:
        n.kill()
        n.wait()
    ld = v["load"]
    assert v["verdict"] == "client-limited" and not v["client_trust"]["ok"], v["reason"]
    why = v["client_trust"]["reason"]
    assert "send lag" in why or "rx delay" in why, why
    assert ld["lag_us"]["p99"] > CRIT["client_lag_p99_max_us"] or \
        ld["rx_delay_us"]["p99"] > CRIT["client_rx_delay_p99_max_us"], (ld["lag_us"], ld["rx_delay_us"])
    # the CPU guard alone would have trusted this client: the direct signals earned the mark
    assert ld["client_cpu_fraction"] <= CRIT["client_cpu_max_fraction"], ld["client_cpu_fraction"]
    # what the server did is still on record
    assert v["server_verdict"] in ("controlled", "uncontrolled"), v["server_verdict"]
    assert v["server_reason"].startswith("delivery"), v["server_reason"]


@test
def without_the_neighbour_the_same_point_is_trusted():
    need()
    seen = []
    for k in range(3):
        v = point(os.path.join(TMP, f"quiet-{k}"))
        seen.append(v["client_trust"]["reason"])
        if v["client_trust"]["ok"]:
            assert v["verdict"] == v["server_verdict"], v
            return
    raise AssertionError(f"the client was never trusted without a neighbour: {seen}")


if __name__ == "__main__":
    exit_with("e2e-trust", sys.argv[1:])
