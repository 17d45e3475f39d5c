#!/usr/bin/env python3
"""entrypoint.py -- the image's entrypoint: start one named runtime the way the contract says.

    docker run IMG <runtime> --port N [--bind ADDR] [--cpus N]   exec the runtime's command
    docker run IMG list                                          the runtimes, one a line
    docker run IMG version <runtime>                             the runtime's version line
    docker run IMG identity                                      /opt/kneebench/image.json

The command comes from fixtures/contract.json (runtimes[].command / env, placeholders {root}
{build} {port} {bind} {rundir} {cpus}), exactly as the native backend expands it, so the two
backends start the same program with the same arguments. The runtime replaces this process
(exec), so its exit status is the container's. Stdlib only.
"""
import json
import os
import sys
import tempfile

ROOT = os.environ.get("KB_ROOT", "/opt/kneebench")
BUILD = os.path.join(ROOT, "build")
CONTRACT = os.path.join(ROOT, "fixtures", "contract.json")
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
    opts = {"port": None, "bind": "127.0.0.1", "cpus": str(contract["limits"]["cpus"])}
    i = 0
    while i < len(args):
        key = args[i].lstrip("-")
        if not args[i].startswith("--") or key not in opts or i + 1 >= len(args):
            fail(f"bad option '{args[i]}' (use --port N [--bind ADDR] [--cpus N])")
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
    env = dict(os.environ)
    for k, v in rt.get("env", {}).items():
        env[k] = expand(v, values)
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        fail(f"cannot exec {argv[0]}: {e}", 127)


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
    if cmd == "version":
        if len(argv) != 2:
            fail("usage: version <runtime>")
        version(contract, argv[1])
        return 0
    start(contract, cmd, argv[1:])
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
