#!/usr/bin/env python3
"""image-identity.py IMG -- print, as JSON, what a run on image IMG actually measured.

    {"image", "id", "repo_digests", "base", "base_id", "pinned_base", "base_is_pinned", "note",
     "base_os", "created", "size_bytes", "inside": <the image's own image.json>}

base is the BASE_IMAGE the image was built FROM (its label); base_is_pinned says whether that
is the digest-pinned Ubuntu of docker/Dockerfile, and note says it plainly when it is not, so
the report can repeat it. Exit 1 with a message on stderr when IMG is missing or not a
kneebench image. Stdlib only; runs the docker CLI (inspect, and one `run ... identity`).
"""
import json
import subprocess
import sys


def docker(*args, timeout=60):
    p = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"docker {args[0]} failed: {p.stderr.strip() or p.returncode}")
    return p.stdout


def identity(image):
    info = json.loads(docker("image", "inspect", image))[0]
    labels = (info.get("Config") or {}).get("Labels") or {}
    base = labels.get("org.kneebench.base")
    pinned = labels.get("org.kneebench.pinned-base")
    if not base or not pinned:
        raise RuntimeError(f"{image} has no org.kneebench.base/pinned-base labels: not built by make image")
    inside = json.loads(docker("run", "--rm", "--network", "none", image, "identity"))
    try:
        base_id = json.loads(docker("image", "inspect", base))[0]["Id"]
    except (RuntimeError, ValueError, IndexError, KeyError):
        base_id = None          # pulled by digest and since removed, or never local
    is_pinned = base == pinned and "@sha256:" in base
    note = None
    if not is_pinned:
        note = (f"the base was not the pinned Ubuntu 24.04 one ({pinned}); "
                f"it was {base} ({inside.get('base_os', 'unknown OS')}")
        local = inside.get("local_base")
        if local:
            note += f", built locally by {local.get('tool')} from {local.get('mirror')} on {local.get('built')}"
        note += ")"
    return {
        "image": image,
        "id": info["Id"],
        "repo_digests": info.get("RepoDigests") or [],
        "base": base,
        "base_id": base_id,
        "pinned_base": pinned,
        "base_is_pinned": is_pinned,
        "note": note,
        "base_os": inside.get("base_os"),
        "created": info.get("Created"),
        "size_bytes": info.get("Size"),
        "inside": inside,
    }


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: image-identity.py IMAGE", file=sys.stderr)
        return 2
    try:
        ident = identity(argv[0])
    except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as e:
        print(f"image-identity: {e}", file=sys.stderr)
        return 1
    json.dump(ident, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
