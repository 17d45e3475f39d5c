#!/usr/bin/env python3
"""entrypoint.py -- the image's entrypoint: start one named runtime the way the contract says.

    docker run IMG <runtime> --port N [--bind ADDR] [--cpus N] [--conninfo C --db-pool N]
                                                                 exec the runtime's command
    docker run IMG db DIR                                        a fresh PostgreSQL cluster
    docker run IMG list                                          the runtimes, one a line
    docker run IMG version <runtime>                             the runtime's version line
    docker run IMG identity                                      /opt/kneebench/image.json

The command comes from contract/contract.json (runtimes[].command / env, placeholders {root}
{build} {port} {bind} {rundir} {cpus}), exactly as the native backend expands it, so the two
backends start the same program with the same arguments; --conninfo and --db-pool add the
runtime's db_command_extra ({conninfo} {db_pool}) as the native backend does for the db route.
`db DIR` makes, starts and fills a throwaway cluster in DIR with gray-static/pgcluster.sh (the
native backend's script), prints "kneebench-db: ready <conninfo>" and stays until SIGTERM,
then stops the cluster (fast) and prints its log: the docker backend runs it in a container of
its own whose DIR volume the runtime's container mounts. The runtime replaces this process
(exec), so its exit status is the container's. Stdlib only.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("KB_ROOT", "/opt/kneebench")
BUILD = os.path.join(ROOT, "build")
CONTRACT = os.path.join(ROOT, "contract", "contract.json")
IDENTITY = os.path.join(ROOT, "image.json")


def fail(msg, code=2):
    print(f"kneebench-entrypoint: {msg}", file=sys.stderr)
    sys.exit(code)


def load_contract():
    try:
        with open(CONTRACT) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {CONTRACT}: {e}")


def find_runtime(contract, name):
    for rt in contract["runtimes"]:
        if rt["name"] == name:
            return rt
    if contract.get("control", {}).get("name") == name:
        return contract["control"]
    names = ", ".join(rt["name"] for rt in contract["runtimes"])
    fail(f"unknown runtime '{name}' (have: {names})")


def expand(s, values):
    for k, v in values.items():
        s = s.replace("{" + k + "}", v)
    if "{" in s and "}" in s[s.index("{"):]:
        fail(f"unexpanded placeholder in '{s}'")
    return s


def parse_opts(args, contract):
    opts = {"port": None, "bind": "127.0.0.1", "cpus": str(contract["limits"]["cpus"]),
            "conninfo": None, "db-pool": str(contract.get("db", {}).get("pool_size", 1))}
    i = 0
    while i < len(args):
        key = args[i].lstrip("-")
        if not args[i].startswith("--") or key not in opts or i + 1 >= len(args):
            fail(f"bad option '{args[i]}' (use --port N [--bind ADDR] [--cpus N] "
                 "[--conninfo C --db-pool N])")
        opts[key] = args[i + 1]
        i += 2
    if opts["port"] is None:
        fail("--port is required")
    if not opts["port"].isdigit() or not 0 < int(opts["port"]) < 65536:
        fail(f"bad port '{opts['port']}'")
    return opts


def start(contract, name, args):
    rt = find_runtime(contract, name)
    opts = parse_opts(args, contract)
    # A fresh private directory per start: php-fpm/nginx keep sockets, pid files and temp
    # files there, and the image user can write nowhere else.
    rundir = tempfile.mkdtemp(prefix=f"kneebench-{name}-")
    values = {"root": ROOT, "build": BUILD, "port": opts["port"], "bind": opts["bind"],
              "rundir": rundir, "cpus": opts["cpus"]}
    argv = [expand(a, values) for a in rt["command"]]
    if opts["conninfo"] is not None:
        if not rt.get("db_command_extra"):
            fail(f"runtime '{name}' takes no database (no db_command_extra)")
        if not opts["db-pool"].isdigit() or int(opts["db-pool"]) < 1:
            fail(f"bad --db-pool '{opts['db-pool']}'")
        dbvals = {"conninfo": opts["conninfo"], "db_pool": opts["db-pool"]}
        argv += [expand(a, dbvals) for a in rt["db_command_extra"]]
    env = dict(os.environ)
    for k, v in rt.get("env", {}).items():
        env[k] = expand(v, values)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        fail(f"cannot exec {argv[0]}: {e}", 127)


def db(args):
    if len(args) != 1:
        fail("usage: db DIR")
    script = os.path.join(ROOT, "gray-static", "pgcluster.sh")
    stopping = []
    # Registered before the cluster exists: a stop that comes during initdb still stops it.
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    p = subprocess.run([script, "start", args[0]], stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        subprocess.run([script, "stop", args[0]])
        show_log(args[0])
        fail(f"pgcluster.sh start {args[0]} failed (exit {p.returncode})", 1)
    print("kneebench-db: ready " + p.stdout.strip(), flush=True)
    pidfile = os.path.join(args[0], "data", "postmaster.pid")
    while not stopping and postmaster_alive(pidfile):
        time.sleep(0.2)
    crashed = not stopping
    subprocess.run([script, "stop", args[0]])
    show_log(args[0])
    return 1 if crashed else 0


def postmaster_alive(pidfile):
    try:
        with open(pidfile) as f:
            os.kill(int(f.readline()), 0)
        return True
    except (OSError, ValueError):
        return False


def show_log(d):
    for name in ("initdb.log", "postgres.log"):
        try:
            with open(os.path.join(d, name)) as f:
                sys.stdout.write(f"--- {name}\n" + f.read())
        except OSError:
            pass
    sys.stdout.flush()


def version(contract, name):
    rt = find_runtime(contract, name)
    # Tools used only at build time (the go toolchain) are absent here: their version was
    # recorded into image.json when the image was built.
    try:
        with open(IDENTITY) as f:
            recorded = json.load(f).get("versions", {}).get(name)
    except (OSError, ValueError):
        recorded = None
    if recorded:
        print(recorded)
        return
    values = {"root": ROOT, "build": BUILD, "port": "0", "bind": "127.0.0.1",
              "rundir": "/tmp", "cpus": "1"}
    argv = [expand(a, values) for a in rt.get("version", [])]
    if not argv:
        fail(f"runtime '{name}' has no version command")
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        fail(f"cannot exec {argv[0]}: {e}", 127)


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__.strip())
        return 0 if argv else 2
    contract = load_contract()
    cmd = argv[0]
    if cmd == "list":
        for rt in contract["runtimes"]:
            print(rt["name"])
        return 0
    if cmd == "identity":
        with open(IDENTITY) as f:
            sys.stdout.write(f.read())
        return 0
    if cmd == "db":
        return db(argv[1:])
    if cmd == "version":
        if len(argv) != 2:
            fail("usage: version <runtime>")
        version(contract, argv[1])
        return 0
    start(contract, cmd, argv[1:])
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
