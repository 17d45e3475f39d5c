#!/usr/bin/env bash
# build-image.sh -- build the kneebench image from docker/Dockerfile, skipping when up to date.
#
#   docker/build-image.sh --base BASE_IMAGE --tag TAG [--targets "build/gray-static ..."] [--check]
#
# --check builds nothing: exit 0 when TAG is up to date with the tree, 1 when it is not.
#
# The build context is packed here from the working tree (only what the Dockerfile copies),
# in a canonical order with fixed mtimes/owners, and hashed together with the base image's ID
# and the build targets. What it holds of each runtime comes from the contract
# (contract/runtimes.py image-plan): the plan itself as docker/image-plan.sh, the runtime
# folders with a module.mk under build-tree/ with the Makefile and contract/, every runtime
# folder under image-tree/ with the contract and the entrypoint. A runtime whose folder is
# missing stops the build, naming it. The hash is stored as a label on the image: when TAG
# already carries the same hash nothing is rebuilt, so repeated `make image` / test runs
# cost seconds.
# Builds use the host network so apt inside reaches the same mirror the host uses.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
base="" tag="" targets="" check=0
while [ $# -gt 0 ]; do
    case "$1" in
        --base) base=$2; shift 2 ;;
        --tag) tag=$2; shift 2 ;;
        --targets) targets=$2; shift 2 ;;
        --check) check=1; shift ;;
        *) echo "usage: build-image.sh --base IMG --tag TAG [--targets T]" >&2; exit 2 ;;
    esac
done
[ -n "$base" ] && [ -n "$tag" ] || { echo "usage: build-image.sh --base IMG --tag TAG" >&2; exit 2; }

die() { echo "image: $*" >&2; exit 1; }
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"

pinned=$(sed -n 's/^ARG BASE_IMAGE=//p' "$here/Dockerfile")
if ! base_id=$(docker image inspect -f '{{.Id}}' "$base" 2>/dev/null); then
    # Not here: docker build will try to pull it. Say what to do when that cannot work.
    echo "image: base $base is not present locally; docker build will try to pull it" >&2
    base_id="unresolved:$base"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kneebench-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Only what the Dockerfile copies: editing docs or tests must not invalidate the image.
mkdir -p "$work/plan/docker"
python3 "$root/contract/runtimes.py" --contract "$root/contract/contract.json" image-plan \
    >"$work/plan/docker/image-plan.sh" || die "the contract's runtimes cannot be packed (above)"
# shellcheck source=/dev/null
. "$work/plan/docker/image-plan.sh"
# shellcheck disable=SC2206 # the plan's lists are words (folder names)
build_paths=(Makefile contract $KB_IMAGE_BUILD_DIRS)
# kb-control, the host's floor beside an interleaved curve, links the runner's tree finder
# and CPU list parser (control/module.mk)
case " $KB_IMAGE_BUILD_DIRS " in
*" control "*) build_paths+=(runner/util/root.c runner/util/root.h runner/util/cpulist.c
                            runner/util/cpulist.h) ;;
esac
# shellcheck disable=SC2206
image_paths=(contract/contract.json docker/entrypoint.py docker/image-json.py $KB_IMAGE_DIRS)
pack() {   # tar's arguments, from the tree, in a canonical order and ownership
    tar -C "$root" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
        --exclude='*.o' --exclude='*.d' --exclude=node_modules --exclude=__pycache__ "$@"
}
pack -cf "$work/context.tar" docker/Dockerfile docker/packages.sh
pack --transform 's,^,build-tree/,SH' -rf "$work/context.tar" "${build_paths[@]}"
pack --transform 's,^,image-tree/,SH' -rf "$work/context.tar" "${image_paths[@]}"
tar -C "$work/plan" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -rf "$work/context.tar" docker/image-plan.sh
hash=$( { sha256sum <"$work/context.tar" | cut -d' ' -f1; echo "$base $base_id"; echo "$targets"; } \
        | sha256sum | cut -d' ' -f1)

have=$(docker image inspect -f '{{index .Config.Labels "org.kneebench.context"}}' "$tag" 2>/dev/null || true)
if [ "$have" = "$hash" ]; then
    echo "image: $tag is up to date (context $hash), not rebuilt"
    exit 0
fi
if [ $check = 1 ]; then
    echo "image: $tag is stale: it was built from context ${have:-none}, the tree is $hash"
    exit 1
fi

args=(build --network host --build-arg "BASE_IMAGE=$base" --label "org.kneebench.context=$hash"
      --label "org.kneebench.pinned-base=$pinned" -t "$tag" -f docker/Dockerfile)
[ -n "$targets" ] && args+=(--build-arg "KB_TARGETS=$targets")
# Without the buildx plugin the CLI would refuse BuildKit; use the classic builder then.
docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
old_id=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)
echo "image: building $tag FROM $base (context $hash)"
start=$(date +%s)
if ! docker "${args[@]}" - <"$work/context.tar"; then
    if [ "${base_id#unresolved:}" != "$base_id" ]; then
        die "build failed and the base $base was neither local nor pullable. Without a registry: \`make base-image\` then \`make image BASE_IMAGE=kneebench-base:bookworm\`"
    fi
    die "docker build failed (output above)"
fi
new_id=$(docker image inspect -f '{{.Id}}' "$tag")
# The image this tag named before is now untagged: drop it (refused, harmlessly, if in use).
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then
    docker rmi "$old_id" >/dev/null 2>&1 || true
fi
# Each build leaves its build stage behind as an untagged image; keep only the newest for
# this base (it holds the compiler layers the next build reuses) and drop the rest.
docker images --filter dangling=true --filter label=org.kneebench.stage=build \
        --filter "label=org.kneebench.stage-base=$base" --format '{{.ID}}' | tail -n +2 |
    while read -r id; do docker rmi "$id" >/dev/null 2>&1 || true; done
echo "image: $tag = $new_id built in $(( $(date +%s) - start )) s"
