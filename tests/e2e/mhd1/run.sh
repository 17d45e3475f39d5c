#!/usr/bin/env bash
# run.sh -- gray-static built and tested against libmicrohttpd 1.0.x inside a Debian 13 (trixie)
# container: its unit tests, the conformance suite (gray-static only) and probe.py, each with
# the normal and the ASan+UBSan build. Results land in $KB_TEST_RESULTS as mhd1-<suite>, so
# `make test` counts them.
#
#   KB_TEST_RESULTS=DIR tests/e2e/mhd1/run.sh
#   KB_MHD1_BASE=IMAGE   another base with libmicrohttpd >= 1.0 (e.g. kneebench-base:noble,
#                        Ubuntu 24.04's 1.0.0); default: trixie, debootstrapped here once
#   KB_FORCE=1           rebuild the image, and the trixie base (never a KB_MHD1_BASE)
#
# Cached: the base (kneebench-mhd1-base:trixie) and the toolchain image (kneebench-mhd1:<hash>
# of the Dockerfile and the base id); a rerun only compiles and tests. Skips, recorded as
# skipped with the reason, when no Docker engine answers, or when the trixie base is missing
# and cannot be made (debootstrap needs root and the Debian mirror).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
results=${KB_TEST_RESULTS:-$root/build/test-results}
suite=trixie
base=${KB_MHD1_BASE:-kneebench-mhd1-base:$suite}
t0=$(date +%s)

say() { echo "mhd1: $*"; }
record() { # name passed failed skipped
    mkdir -p "$results" && printf '%s %s %s\n' "$2" "$3" "$4" >"$results/.$1.tmp" &&
        mv "$results/.$1.tmp" "$results/$1"
}
skip() { say "SKIP: $*"; record mhd1 0 0 1; exit 0; }
fail() { say "FAIL: $*"; record mhd1 0 1 0; exit 1; }

command -v docker >/dev/null 2>&1 || skip "no docker CLI"
docker info >/dev/null 2>&1 || skip "no Docker engine answers (docker info failed)"

# docker/base-image.sh makes the base the same way as the image's: debootstrap minbase from
# the host's own apt mirror (signature checked against Debian's keyring). Its failure here
# is an unreachable mirror or a missing tool, so the run is skipped, with the reason.
make_base() {
    command -v debootstrap >/dev/null || skip "no $base image and no debootstrap to make it"
    [ "$(id -u)" = 0 ] || skip "no $base image, and debootstrap needs root to make it"
    KB_FORCE=${KB_FORCE:-} "$root/docker/base-image.sh" "$base" "$suite" ||
        skip "docker/base-image.sh $base $suite failed (mirror unreachable?)"
}

if [ -n "${KB_MHD1_BASE:-}" ]; then   # someone else's base: used as it is, never made here
    docker image inspect "$base" >/dev/null 2>&1 || skip "base image $base is not there"
elif [ -n "${KB_FORCE:-}" ] || ! docker image inspect "$base" >/dev/null 2>&1; then
    make_base
fi
base_id=$(docker image inspect -f '{{.Id}}' "$base") || fail "inspect $base"
say "base $base = $base_id ($(( $(date +%s) - t0 ))s)"

# The toolchain image, named by what it is made of, so a changed Dockerfile or base rebuilds.
key=$( { cat "$here/Dockerfile"; echo "$base_id"; } | sha256sum | cut -c1-12)
image=kneebench-mhd1:$key
if [ -n "${KB_FORCE:-}" ] || ! docker image inspect "$image" >/dev/null 2>&1; then
    say "building $image"
    log=$(mktemp "${TMPDIR:-/tmp}/kneebench-mhd1-build.XXXXXX") || fail "mktemp"
    if ! docker build --build-arg BASE="$base_id" --label "kneebench.mhd1.base=$base" \
        -t "$image" -f "$here/Dockerfile" "$here" >"$log" 2>&1; then
        tail -n 30 "$log"
        rm -f "$log"
        fail "docker build of $image failed"
    fi
    rm -f "$log"
    # Older toolchain images for the same base are outdated now: drop them, not pile up.
    docker images --filter "label=kneebench.mhd1.base=$base" --format '{{.Repository}}:{{.Tag}}' |
        grep -vxF "$image" | while read -r old; do docker rmi "$old" >/dev/null 2>&1 || true; done
fi
say "image $image ($(( $(date +%s) - t0 ))s)"

# Sources read-only, results through a scratch directory: the container writes mhd1's own
# files only, and they are renamed into $results after it (atomically, one by one).
out=$(mktemp -d "${TMPDIR:-/tmp}/kneebench-mhd1-out.XXXXXX") || fail "mktemp"
trap 'rm -rf "$out"' EXIT
chmod 0777 "$out"
docker run --rm --network none --init -v "$root:/src:ro" -v "$out:/results" "$image" \
    bash /src/tests/e2e/mhd1/inside.sh
rc=$?
n=0
mkdir -p "$results" || fail "cannot create $results"
for f in "$out"/*; do
    [ -f "$f" ] || continue
    cp "$f" "$results/.mhd1-tmp" && mv "$results/.mhd1-tmp" "$results/mhd1-$(basename "$f")" ||
        fail "cannot record $(basename "$f") in $results"
    n=$((n + 1))
done
say "$n suites recorded, exit $rc, $(( $(date +%s) - t0 ))s in all"
[ "$n" -gt 0 ] || fail "the container recorded no suite (exit $rc)"
exit $rc
