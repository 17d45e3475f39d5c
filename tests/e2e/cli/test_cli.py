#!/usr/bin/env python3
"""test_cli -- the command line as a user meets it (issue 14).

`kneebench --version`; the wrk2-style `kneebench load -tN -cN -dDs -RNk URL` against kb-control
(2 s, 200 req/s, the route inferred from the URL) and bad values refused with exit 2; curve's
duration suffixes; every command's bad numbers refused the same way, naming the option, before
anything is made, and durations and rates taken with units by soak and qualify too; every
command's --help naming its exit codes; the man page showing every
command; the bash completion agreeing with the help texts; `make install PREFIX=` and `make
help`; and `kneebench compare` on two synthetic runs, laid out as a real run is (plan.json,
run.json, fixtures/, points/<id>/{command,load,verdict}.json and DONE), where one runtime was
made slower on purpose: its drop is reported and the others show no change beyond noise.
"""
import csv
import io
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import time

from kbenv import BUILD, CONTRACT, KB, ROOT, need
from kbtest import test, skip, exit_with
from kbcontrol import Control

TMP = tempfile.mkdtemp(prefix="kb-cli-")


def kb(*args, timeout=60):
    return subprocess.run([KB, *args], capture_output=True, text=True, timeout=timeout)


def commands():
    """The commands `kneebench --help` lists."""
    out, on = [], False
    for line in kb("--help").stdout.splitlines():
        if line.startswith("Commands:"):
            on = True
        elif on and not line.strip():
            break
        elif on:
            out.append(line.split()[0])
    return out


# ---- version, load, curve, help ---------------------------------------------------------

@test
def version_names_runner_and_contract():
    need(KB)
    for argv in (["--version"], ["version"], ["-V"]):
        p = kb(*argv)
        assert p.returncode == 0, (argv, p.stderr)
        first, second = p.stdout.splitlines()[:2]
        name, ver = first.split(" ", 1)
        assert name == "kneebench" and ver and " " not in ver, first
        if os.path.exists(os.path.join(ROOT, ".git")):
            assert ver != "unknown", "a git checkout should give git describe's version"
        assert second.startswith(f"contract version {CONTRACT['contract_version']} "), second
    assert kb("version", "extra").returncode == 2


@test
def wrk2_style_load_runs():
    need(KB)
    with Control() as ctl:
        js = os.path.join(TMP, "wrk2.json")
        # no --route and no --warmup: the route from the URL's path, warmup 0 as in wrk2
        p = kb("load", "-t2", "-c8", "-d2s", "-R0.2k", "-T", "5s", "-L",
               f"http://127.0.0.1:{ctl.port}/plaintext", "--json", js, timeout=30)
        assert p.returncode == 0, p.stderr
        j = json.load(open(js))
    assert j["route"] == "plaintext" and j["requested_rps"] == 200, j
    assert j["duration_s"] == 2 and j["warmup_s"] == 0 and j["connections"] == 8, j
    assert j["threads_requested"] == 2 and j["scheduled"] == 400, j
    assert j["completed"] == 400 and j["errors"]["total"] == 0, j
    assert "requested 200/s" in p.stdout, p.stdout


@test
def one_thread_and_one_connection_are_singular():
    need(KB)
    with Control() as ctl:
        p = kb("load", "-t1", "-c1", "-d1s", "-R50", "--exact-threads",
               f"http://127.0.0.1:{ctl.port}/plaintext", timeout=30)
    assert p.returncode == 0, p.stderr
    first = p.stdout.splitlines()[0]
    assert ": 1 thread, 1 connection," in first, first
    assert "1 threads" not in p.stdout and "1 connections" not in p.stdout, p.stdout


@test
def a_misspelt_command_gets_the_nearest():
    need(KB)
    for typed, meant in (("cruve", "curve"), ("reprot", "report"), ("comapre", "compare"),
                         ("kne", "knee"), ("soakk", "soak"), ("qualfy", "qualify")):
        p = kb(typed)
        assert p.returncode == 2, (typed, p.returncode)
        assert f"unknown command '{typed}'; did you mean '{meant}'?" in p.stderr, p.stderr
    # nothing near: no guess, the list of commands instead
    p = kb("xyzzy")
    assert p.returncode == 2 and "did you mean" not in p.stderr, p.stderr
    assert "Commands:" in p.stderr, p.stderr


def exchange(port, data, seconds=3):
    """What kb-control sends back to data before it closes (or seconds pass)."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as sk:
        sk.sendall(data)
        got, deadline = b"", time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                chunk = sk.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            got += chunk
        return got


@test
def control_reads_heads_as_rfc_9112_frames_them():
    """Issue 27: kb-control left an LF-only request unanswered and read "Content-Length : 40"
    as no length at all, answering 200 and taking the 40 body bytes for a request."""
    with Control() as ctl:
        got = exchange(ctl.port, b"GET /plaintext HTTP/1.1\nHost: t\nConnection: close\n\n")
        assert got.startswith(b"HTTP/1.1 200 OK\r\n") and got.endswith(b"Hello, World!"), got
        body = b"GET /json HTTP/1.1\r\nHost: t\r\n\r\n" + b"x" * 8
        got = exchange(ctl.port, b"GET /plaintext HTTP/1.1\r\nHost: t\r\n"
                       b"Content-Length : 40\r\n\r\n" + body)
        assert got.startswith(b"HTTP/1.1 400 Bad Request\r\n"), got
        assert got.count(b"HTTP/1.1 ") == 1, f"the body was read as a request: {got!r}"


@test
def load_bad_values_exit_2():
    need(KB)
    url = "http://127.0.0.1:9/plaintext"     # never reached: every case is refused first
    good = ["-t1", "-c2", "-d1s", "-R100"]
    cases = [
        ["-R20x"], ["-R2m"], ["-R0"], ["-R-1k"], ["-R1e4"], ["-R20k/s"], ["-R11M"],
        ["-d-1s"], ["-d0ms"], ["-d1e3"], ["-d10sec"], ["-d25h"], ["-d"],
        ["-t0"], ["-t4x"], ["-t1e12"], ["-c0"], ["-c1k"], ["-T0"], ["-T2d"],
        ["--warmup", "2h"], ["--drain", "11m"], ["--duration", "5 s"],
        ["-H", "X y"], ["-H", "Connection: close"],   # not a header; the client's own
    ]
    for extra in cases:
        p = kb("load", *good, *extra, url)
        assert p.returncode == 2, (extra, p.returncode, p.stderr)
        assert p.stderr.startswith("kneebench load: "), (extra, p.stderr)
    for argv in (good, good + [url, url], good + ["--url", url, url],
                 ["-t1", "-c2", "-d1s", url], ["-t1", "-c2", "-R100", url],
                 good + ["--route", "nosuch", url], good + ["ftp://127.0.0.1/plaintext"]):
        p = kb("load", *argv)
        assert p.returncode == 2, (argv, p.returncode, p.stderr)
    # a path outside the contract is a server of the user's own, loaded (here: unreachable)
    p = kb("load", *good, "http://127.0.0.1:9/nosuch")
    assert p.returncode == 3 and "unreachable" in p.stderr, (p.returncode, p.stderr)


@test
def curve_takes_duration_suffixes():
    need(KB)
    run = os.path.join(TMP, "curve-run")
    for opt, bad in (("--duration", "5x"), ("--warmup", "-1s"), ("--drain", "1e3"),
                     ("--duration", "0ms")):
        p = kb("curve", "--run", run, opt, bad)
        assert p.returncode == 2 and f"{opt} must be a duration" in p.stderr, (opt, bad, p.stderr)
    # accepted: the refusal comes later, from the unknown runtime, before anything starts
    p = kb("curve", "--run", run, "--duration", "500ms", "--warmup", "1s", "--drain", "0.5m",
           "--runtimes", "nosuch")
    assert p.returncode == 2 and "must be a duration" not in p.stderr, p.stderr
    assert "unknown runtime" in p.stderr, p.stderr
    assert not os.path.exists(run)


@test
def every_command_refuses_a_bad_number_naming_it():
    """Issue 26 (item 2) and 27 (item 12): soak and qualify cast strtod to int (--threads
    1e12, --connections 1e10: undefined behaviour; --threads 300 failed mid-run), calibrate
    took --duration inf. Every command now reads its
    numbers one way, against one table of bounds (the load generator's limits): a bad value
    exits 2 with "kneebench CMD: --NAME must be ..., not 'VALUE'" before anything is made
    or started. The run commands are also given a contract that does not exist, so that one
    which took the value after all stops there instead of starting fixtures."""
    need(KB)
    nowhere = os.path.join(TMP, "no-such-contract.json")
    cases = [
        (["soak", "--threads", "1e12"], "--threads"),
        (["soak", "--threads", "300"], "--threads"),       # past the load child's 256
        (["soak", "--duration", "25h"], "--duration"),
        (["soak", "--rates", "8k,1e3"], "--rates"),
        (["soak", "--sample-every", "inf"], "--sample-every"),
        (["qualify", "--connections", "1e10"], "--connections"),
        (["qualify", "--rate", "8.5"], "--rate"),          # a plan's rates are whole
        (["qualify", "--db-pool", "0x10"], "--db-pool"),
        (["calibrate", "--duration", "inf"], "--duration"),
        (["calibrate", "--threads", "1e12"], "--threads"),
        (["calibrate", "--steps", "33"], "--steps"),
        (["curve", "--connections", "1e10"], "--connections"),
        (["curve", "--rates", "4k,inf"], "--rates"),
        (["curve", "--controller-cpus", "x"], "--controller-cpus"),
        (["soak", "--controller-cpus", "3-1"], "--controller-cpus"),
        (["qualify", "--controller-cpus", "99999"], "--controller-cpus"),
    ]
    for i, (argv, name) in enumerate(cases):
        d = os.path.join(TMP, f"refused-{i}")
        where = "--run" if argv[0] == "curve" else "--out"
        p = kb(argv[0], where, d, *argv[1:], "--contract", nowhere, timeout=30)
        assert p.returncode == 2, (argv, p.returncode, p.stderr)
        assert p.stderr.startswith(f"kneebench {argv[0]}: {name} must be "), (argv, p.stderr)
        assert f"'{argv[-1]}'" in p.stderr, (argv, p.stderr)
        assert p.stdout == "" and not os.path.exists(d), (argv, "made or said something first")
    for argv, name in ((["report", "--max-p99-ms", "inf", TMP], "--max-p99-ms"),
                       (["report", "--min-delivery", "1e-3", TMP], "--min-delivery"),
                       (["compare", TMP, TMP, "--min-change", "1e3"], "--min-change"),
                       (["knee", "--threads", "1e12", "http://127.0.0.1:9/"], "-t/--threads"),
                       (["load", "-d1s", "-R1k", "-c1e10", "http://127.0.0.1:9/"],
                        "-c/--connections")):
        p = kb(*argv)
        assert p.returncode == 2, (argv, p.returncode, p.stderr)
        assert p.stderr.startswith(f"kneebench {argv[0]}: {name} must be "), (argv, p.stderr)


@test
def controller_cpus_on_the_servers_are_refused():
    """--controller-cpus (curve, soak, qualify): the runner's own CPUs, never the server's. A
    list that shares a CPU with the server's is refused, naming both, before the run
    directory is made (--no-limits: no cgroups needed to get that far)."""
    need(KB)
    for cmd, where in (("curve", "--run"), ("soak", "--out"), ("qualify", "--out")):
        d = os.path.join(TMP, f"controller-{cmd}")
        extra = ["--runtimes", "go"] if cmd == "curve" else []
        p = kb(cmd, where, d, "--no-limits", "--server-cpus", "0", "--client-cpus", "1-",
               "--controller-cpus", "0-1", *extra, timeout=30)
        assert p.returncode == 2, (cmd, p.returncode, p.stderr)
        assert "controller CPUs 0-1 and server CPUs 0 overlap" in p.stderr, (cmd, p.stderr)
        assert not os.path.exists(d), cmd


@test
def durations_and_rates_take_units_everywhere():
    """soak refused --duration 30s although curve took it. Each value here is accepted with
    its unit: soak goes on to its plan, which refuses only the phase that does not exist;
    qualify goes on to its own check of the durations, which names them in seconds."""
    need(KB)
    p = kb("soak", "--out", os.path.join(TMP, "soak-units"), "--duration", "30s", "--warmup",
           "500ms", "--settle", "1m", "--sample-every", "250ms", "--drain", "2s",
           "--window-max", "5m", "--rates", "1.5k", "--phases", "nosuch", timeout=30)
    assert p.returncode == 2 and "must be" not in p.stderr, p.stderr
    assert "phase 'nosuch': no such route" in p.stderr, p.stderr
    p = kb("qualify", "--out", os.path.join(TMP, "qualify-units"), "--duration", "5s",
           "--settle", "0.1m", "--rate", "2k", "--stats-every", "50ms", timeout=30)
    assert p.returncode == 2 and "must be a" not in p.stderr, p.stderr
    assert "the settling window (6 s) must end inside the measured interval (5 s)" in p.stderr, \
        p.stderr


@test
def every_help_names_exit_codes():
    need(KB)
    cmds = commands()
    assert {"load", "curve", "report", "compare", "calibrate", "soak",
            "version"} <= set(cmds), cmds
    for c in cmds:
        p = kb(c, "--help")
        assert p.returncode == 0, (c, p.returncode, p.stderr)
        low = p.stdout.lower()
        assert "exit" in low and " 0" in low and " 2" in low, (c, p.stdout)
        assert kb("help", c).stdout == p.stdout, c
    assert kb("nosuch").returncode == 2


@test
def man_page_shows_every_command():
    need(KB)
    page = os.path.join(BUILD, "kneebench.1")
    if not shutil.which("man") or not shutil.which("help2man"):
        skip("man or help2man is not installed (make deps installs help2man)")
    assert os.path.exists(page), f"{page} was not built"
    text = subprocess.run(["man", "-l", page], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": ""}).stdout
    for c in commands():
        assert f"kneebench {c}" in text, f"man page lacks 'kneebench {c}'"
    for section in ("SYNOPSIS", "DESCRIPTION", "COMMANDS", "SEE ALSO"):
        assert section in text, section
    assert "-R, --rate RATE" in text and "exit:" in text


def complete(*words):
    """What the completion script offers for the command line words (the last is the word
    being completed)."""
    script = os.path.join(ROOT, "runner", "cli", "kneebench.bash-completion")
    quoted = " ".join("'" + w + "'" for w in words)
    p = subprocess.run(["bash", "-c", f"source {script}; COMP_WORDS=({quoted}); "
                        f"COMP_CWORD={len(words) - 1}; _kneebench; "
                        "printf '%s\\n' \"${COMPREPLY[@]}\""],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


@test
def completion_agrees_with_help():
    need(KB)
    cmds = commands()
    assert set(cmds) <= complete("kneebench", ""), complete("kneebench", "")
    assert complete("kneebench", "comp") == {"compare"}
    for c in cmds:
        helped = {w.strip(".,;:()[]'\"`") for w in kb(c, "--help").stdout.split()}
        helped = {w.split("=")[0] for w in helped if w.startswith("--") and len(w) > 2}
        helped -= {"--version"}
        offered = complete("kneebench", c, "--") - {"--help"}
        assert offered == helped, (c, "only offered:", offered - helped, "only in help:",
                                   helped - offered)
    assert complete("kneebench", "load", "-R") == {"-R"}
    assert complete("kneebench", "curve", "--profile", "q") == {"quick"}
    assert complete("kneebench", "curve", "--profile", "db-b") == {"db-baseline"}
    assert complete("kneebench", "curve", "--requests-log", "") == {"knee", "all", "none"}
    assert complete("kneebench", "curve", "--db-mode", "") == {"readiness", "blocking", "both"}
    assert complete("kneebench", "soak", "--db-mode", "") == {"readiness", "blocking"}


@test
def runtime_words_and_table_are_the_contracts():
    """The completion's runtimes, routes and profiles and README's table of runtimes are
    what the contract gives (contract/runtimes.py; `make gen-runtimes` rewrites them), and
    the check sees a contract that no longer matches them."""
    gen = os.path.join(ROOT, "contract", "runtimes.py")
    p = subprocess.run([sys.executable, gen, "generate", "--check"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert complete("kneebench", "curve", "--runtimes", "") == \
        {rt["name"] for rt in CONTRACT["runtimes"]}
    assert complete("kneebench", "curve", "--routes", "") == {r["name"] for r in CONTRACT["routes"]}
    assert complete("kneebench", "curve", "--profile", "") == set(CONTRACT["profiles"])
    readme = open(os.path.join(ROOT, "README.md")).read()
    for rt in CONTRACT["runtimes"]:
        assert f"| `{rt['name']}` | {rt['about']} |" in readme, rt["name"]
    other = json.loads(json.dumps(CONTRACT))
    other["runtimes"][0]["about"] = "something else"
    other["profiles"]["extra"] = {"duration_s": 1, "warmup_s": 1, "drain_s": 1}
    path = os.path.join(TMP, "other-contract.json")
    json.dump(other, open(path, "w"))
    p = subprocess.run([sys.executable, gen, "--contract", path, "generate", "--check"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "README.md" in p.stderr and "bash-completion" in p.stderr, p
    assert "make gen-runtimes" in p.stderr, p.stderr


@test
def make_install_and_help():
    need(KB)
    prefix = os.path.join(TMP, "prefix")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    p = subprocess.run(["make", "-s", "-C", ROOT, f"BUILD={BUILD}", "install", f"PREFIX={prefix}"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    for rel in ("bin/kneebench", "bin/kb-control",
                "share/bash-completion/completions/kneebench"):
        assert os.path.isfile(os.path.join(prefix, rel)), rel
    assert os.access(os.path.join(prefix, "bin", "kneebench"), os.X_OK)
    if shutil.which("help2man"):
        assert os.path.isfile(os.path.join(prefix, "share/man/man1/kneebench.1"))
    out = subprocess.run([os.path.join(prefix, "bin", "kneebench"), "--version"],
                         capture_output=True, text=True).stdout
    assert out == kb("--version").stdout
    p = subprocess.run(["make", "-s", "-C", ROOT, f"BUILD={BUILD}", "help"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    listed = {line.split()[0] for line in p.stdout.splitlines() if line.startswith("  ")}
    for target in ("all", "test", "check", "curve", "install", "help", "man", "clean",
                   "test-unit", "test-cli"):
        assert target in listed, (target, p.stdout)


# ---- compare ----------------------------------------------------------------------------

RUNTIMES = ["go", "node", "gray-static"]
ROUTES = ["plaintext", "json"]
RATES = [100, 200]
SLOWED = "node"


def hist(p99, count):
    """A corrected_us histogram as load.json has it (us, HdrHistogram percentiles)."""
    return {"count": count, "min": 40, "mean": p99 / 3, "p50": p99 / 4, "p90": p99 / 2,
            "p99": p99, "p999": p99 * 1.2, "max": p99 * 1.5, "bounded": 0, "bound_from_us": None,
            "is_bound": {k: False for k in ("min", "mean", "p50", "p90", "p99", "p999", "max")}}


def load_json(rt, route, rate, achieved, p99):
    """load.json's fields as kneebench load writes them (runner/README-load.md)."""
    scheduled = rate                             # 1 s measured
    return {"kneebench_load": 1, "url": f"http://127.0.0.1:8080/{route}", "route": route,
            "requested_rps": float(rate), "threads_requested": 4, "threads": 1,
            "connections": 8, "warmup_s": 0.5, "duration_s": 1.0, "drain_s": 0.5,
            "scheduled": scheduled, "sent": scheduled, "completed": scheduled,
            "achieved_rps": achieved, "delivery": achieved / rate,
            "errors": {"total": 0, "connect": 0, "read": 0, "write": 0, "timeout": 0,
                       "peer_close": 0, "malformed": 0},
            "status": {"200": scheduled}, "non2xx": 0,
            "mismatches": {"total": 0, "status": 0, "content_type": 0, "body": 0},
            "client_cpus": 1, "client_cpu_fraction": 0.05, "client_sched": "fifo",
            "corrected_us": hist(p99, scheduled), "uncorrected_us": hist(p99 / 2, scheduled),
            "lag_us": hist(80, scheduled), "rx_delay_us": hist(60, scheduled)}


def figures(run, rt, rate, repeat):
    """The point's achieved rate and p99 (us): the same in both runs but for the repeats'
    ordinary spread, except the slowed runtime in run B: 10 % less delivered, 4x the p99."""
    spread = [0.0, -1.0, 1.0][(repeat - 1) % 3] + (0.5 if run == "b" else 0)
    achieved, p99 = rate * (1 + spread / 1000), 900 * (1 + spread / 10)
    if run == "b" and rt == SLOWED:
        achieved, p99 = achieved * 0.9, p99 * 4
    return achieved, p99


def synth_run(d, run, repeats):
    """A run directory laid out as kneebench curve writes it."""
    points = [{"id": f"{rt}-{route}-{rate}" + (f"-r{r}" if repeats > 1 else ""),
               "runtime": rt, "route": route, "rate": rate, "repeat": r}
              for r in range(1, repeats + 1) for rt in RUNTIMES for route in ROUTES
              for rate in RATES]
    crit = CONTRACT["comparison"]["criteria"]
    plan = {"profile": "quick", "duration_s": 1.0, "warmup_s": 0.5, "drain_s": 0.5,
            "threads": 4, "connections": 8, "repeats": repeats, "runtimes": RUNTIMES,
            "routes": ROUTES, "rates": RATES, "backend": "native", "unconstrained": False,
            "server_cpus": "0", "client_cpus": "1", "criteria": crit, "points": points}
    os.makedirs(d)
    json.dump(plan, open(os.path.join(d, "plan.json"), "w"), indent=1)
    json.dump({"started": "2024-01-01T00:00:00Z", "command_line": ["kneebench", "curve"],
               "host": {}, "backend": "native", "unconstrained": False},
              open(os.path.join(d, "run.json"), "w"))
    for rt in RUNTIMES:
        fx = os.path.join(d, "fixtures", rt + ("-r1" if repeats > 1 else ""))
        os.makedirs(fx)
        json.dump({"cpus": 1}, open(os.path.join(fx, "limits.json"), "w"))
        json.dump({"sha256": "same-build"}, open(os.path.join(fx, "identity.json"), "w"))
        json.dump({"failed": False, "reason": ""}, open(os.path.join(fx, "preflight.json"), "w"))
    for p in points:
        pd = os.path.join(d, "points", p["id"])
        os.makedirs(pd)
        achieved, p99 = figures(run, p["runtime"], p["rate"], p["repeat"])
        load = load_json(p["runtime"], p["route"], p["rate"], achieved, p99)
        ok = load["delivery"] >= crit["min_delivery"] and p99 < crit["max_p99_us"]
        verdict = "controlled" if ok else "uncontrolled"
        reason = "" if ok else f"delivery {load['delivery']:.3f} < {crit['min_delivery']}"
        json.dump({"point": p["id"], "load_argv": ["kneebench", "load"]},
                  open(os.path.join(pd, "command.json"), "w"))
        json.dump(load, open(os.path.join(pd, "load.json"), "w"))
        json.dump({"point": p["id"], "runtime": p["runtime"], "route": p["route"],
                   "rate": p["rate"], "repeat": p["repeat"], "verdict": verdict,
                   "reason": reason, "server_verdict": verdict, "server_reason": reason,
                   "client_trust": {"ok": True, "reason": ""}, "unconstrained": False,
                   "server": {"cpu_mean_fraction": 0.3, "rss_max_bytes": 1 << 20,
                              "cpu_us_per_response": 20.0},
                   "load": load}, open(os.path.join(pd, "verdict.json"), "w"))
        json.dump({"point": p["id"], "verdict": verdict}, open(os.path.join(pd, "DONE"), "w"))


def synth_pair(repeats):
    base = tempfile.mkdtemp(prefix="kb-cmp-", dir=TMP)
    a, b = os.path.join(base, "a"), os.path.join(base, "b")
    synth_run(a, "a", repeats)
    synth_run(b, "b", repeats)
    return a, b


@test
def compare_reports_the_slowed_runtime():
    need(KB)
    a, b = synth_pair(3)
    p = kb("compare", a, b)
    assert p.returncode == 0, p.stderr
    md = p.stdout
    n = len(ROUTES) * len(RATES)
    assert f"- {SLOWED}: worse beyond noise at {n} of {n} points (achieved rate at {n}, " \
           f"p99 at {n})" in md, md
    for rt in RUNTIMES:
        if rt != SLOWED:
            assert f"- {rt}: no change beyond noise at {n} points" in md, md
    # what moved comes first: the slowed runtime's p99 moves, largest first, then the noise
    moved = md.split("## What moved (B against A)", 1)[1].split("\n## ", 1)[0]
    assert md.index("## What moved") < md.index("## Highest controlled point"), md
    moves = [ln for ln in moved.splitlines() if re.search(r" \d+ and \d+ samples$", ln)]
    assert moves and all(ln.startswith(f"- {SLOWED}-") for ln in moves), moved
    assert ": p99 " in moves[0] and "(+" in moves[0] and "worse; 3 and 3 samples" in moves[0], moves
    for run in ("A", "B"):
        line = [ln for ln in moved.splitlines() if ln.startswith(f"- {run}: achieved rate ")]
        assert line and f"; {len(RUNTIMES) * n} of {len(RUNTIMES) * n} points have 2 or more" \
            in line[0], moved
    assert "-0.0 %" not in md and "+0.0 %" not in md
    # the slowed runtime no longer holds a point: its highest controlled point drops
    for route in ROUTES:
        assert f"| {SLOWED} | {route} | 200 | below 100 | - |" in md, md
        assert f"| go | {route} | 200 | 200 | same |" in md, md
    assert f"| {SLOWED}-json-200 | controlled -> uncontrolled |" in md, md

    out = os.path.join(TMP, "cmp.csv")
    p = kb("compare", a, b, "--csv", out, "--md", os.path.join(TMP, "cmp.md"))
    assert p.returncode == 0 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    assert open(os.path.join(TMP, "cmp.md")).read() == md
    rows = list(csv.DictReader(open(out)))
    points = [r for r in rows if r["kind"] == "point"]
    assert len(points) == len(RUNTIMES) * n, len(points)
    for r in points:
        want = "worse" if r["runtime"] == SLOWED else "within_noise"
        assert r["achieved_call"] == want and r["p99_call"] == want, r
        if r["runtime"] == SLOWED:
            assert float(r["achieved_change_pct"]) < -9 and float(r["p99_change_pct"]) > 290, r
    tops = {(r["runtime"], r["route"]): r for r in rows if r["kind"] == "highest"}
    assert tops[(SLOWED, "json")]["highest_a_rps"] == "200", tops
    assert tops[(SLOWED, "json")]["highest_b_rps"] == "", tops
    p = kb("compare", a, b, "--csv", "-")
    assert p.returncode == 0 and list(csv.DictReader(io.StringIO(p.stdout))) == rows


@test
def compare_one_repeat_unjudged():
    need(KB)
    a, b = synth_pair(1)
    p = kb("compare", a, b)
    assert p.returncode == 0, p.stderr
    assert "unjudged (too few samples)" in p.stdout
    assert "worse, beyond noise" not in p.stdout and "within noise |" not in p.stdout, p.stdout
    moved = p.stdout.split("## What moved (B against A)", 1)[1].split("\n## ", 1)[0]
    assert "- none: no figure moved beyond noise (none could be judged" in moved, moved
    assert "- A: one sample per point: no spread to judge against" in moved, moved


@test
def compare_refuses_bad_usage():
    need(KB)
    a, b = synth_pair(1)
    for argv, rc in ((["compare", a], 2), (["compare"], 2), (["compare", a, b, b], 2),
                     (["compare", a, TMP], 2), (["compare", a, b, "--min-change", "x"], 2),
                     (["compare", a, b, "--bogus"], 2),
                     (["compare", a, b, "--csv", "/nonexistent-dir/x.csv"], 1)):
        p = kb(*argv)
        assert p.returncode == rc, (argv, p.returncode, p.stderr)
        assert p.stderr.startswith("kneebench compare: "), (argv, p.stderr)


@test
def compare_output_never_through_a_planted_link():
    """compare's --csv/--md are written through a temporary file beside them; a symlink
    planted where that file would be (OUT.tmp.<pid>.0, the first name runner/util/atomicfile.h
    tries: exec keeps the shell's PID, so a test can plant it) must not be written through,
    and no temporary file is left."""
    need(KB)
    a, b = synth_pair(1)
    d = tempfile.mkdtemp(prefix="kb-cmp-link-", dir=TMP)
    victim, out = os.path.join(d, "someone-elses"), os.path.join(d, "cmp.csv")
    with open(victim, "w") as f:
        f.write("theirs\n")
    p = subprocess.run(["sh", "-c", 'ln -s "$1" "$2.tmp.$$.0" && exec "$3" compare "$4" "$5" '
                        '--csv "$2"', "sh", victim, out, KB, a, b],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert open(victim).read() == "theirs\n", "compare wrote through the planted symlink"
    assert open(out).read().startswith("kind,"), open(out).read()[:80]
    left = sorted(n for n in os.listdir(d) if ".tmp." in n and not os.path.islink(os.path.join(d, n)))
    assert not left, left


if __name__ == "__main__":
    try:
        exit_with("cli", sys.argv[1:])
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
