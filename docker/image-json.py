#!/usr/bin/env python3
"""image-json.py BASE_IMAGE -- print the image's identity JSON (run once, at build time).

What base the image was built FROM (the build argument, and what that base says it is), the
toolchain that compiled the fixtures (recorded by the build stage) and each runtime's version
line, so a run's identity can name exactly what it measured. Stdlib only.
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = "/opt/kneebench"


def os_release():
    out = {}
    with open("/etc/os-release") as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            if k:
                out[k] = v.strip('"')
    return out


def version_text(argv):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except OSError as e:
        return f"unavailable: {e}"
    # Every line: php-fpm/run.sh --version names nginx and php-fpm on two.
    text = "; ".join(ln.strip() for ln in (p.stdout or p.stderr).splitlines() if ln.strip())
    return text[:300] if text else f"exit {p.returncode}, no output"


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else ""
    osr = os_release()
    toolchain = {}
    with open(os.path.join(ROOT, "build", "toolchain.txt")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            toolchain[k] = v
    with open(os.path.join(ROOT, "contract", "contract.json")) as f:
        contract = json.load(f)
    versions = {}
    for rt in contract["runtimes"]:
        argv = [a.replace("{root}", ROOT).replace("{build}", ROOT + "/build")
                for a in rt.get("version", [])]
        # A version command whose program stayed in the build stage (the go toolchain): the
        # line the build stage recorded under that program's name (its contract entry's
        # image.toolchain), the version that compiled it.
        if argv and "/" not in argv[0] and not shutil.which(argv[0]):
            versions[rt["name"]] = toolchain.get(argv[0], f"unknown ({argv[0]} is not in the "
                                                 "image and image.toolchain records none)")
        elif argv:
            versions[rt["name"]] = version_text(argv)
    versions["nginx"] = version_text(["nginx", "-v"])
    versions["postgresql"] = version_text(["sh", "-c", "ls /usr/lib/postgresql | sort -V | tail -n1"])
    try:
        with open("/etc/kneebench-base.json") as f:
            local_base = json.load(f)
    except OSError:
        local_base = None
    ident = {
        "base_image": base,
        "base_os": osr.get("PRETTY_NAME", "unknown"),
        "base_os_id": f"{osr.get('ID', '?')}:{osr.get('VERSION_CODENAME', '?')}",
        "local_base": local_base,
        "toolchain": toolchain,
        "versions": versions,
    }
    json.dump(ident, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
