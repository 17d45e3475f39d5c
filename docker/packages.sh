#!/bin/sh
# packages.sh -- the distribution packages the image installs: the image's own here, each
# runtime's from its contract entry (image.build_packages, image.runtime_packages), which
# docker/build-image.sh writes into image-plan.sh beside this script.
#
#   packages.sh build     what the build stage needs to build every runtime's programs
#   packages.sh runtime   what the runtime stage needs to run every runtime (+ PostgreSQL)
#
# Ubuntu 24.04 (the pinned base) and Debian 12 (the local debootstrap base) name a few
# packages differently (the 64-bit time_t transition renamed libmicrohttpd12 to ...t64 in
# noble), so an entry "a|b" means "a if the archive has it, else b" -- resolved with apt-cache
# after apt-get update, so a renamed package fails loudly at build time instead of silently
# pulling something else. Only the two bases the Dockerfile is checked on are accepted.
set -eu

. /etc/os-release
case "${ID}:${VERSION_CODENAME:-}" in
    ubuntu:noble|debian:bookworm) ;;
    *)
        echo "packages.sh: no package list for ${ID} ${VERSION_CODENAME:-?} (know ubuntu:noble, debian:bookworm)" >&2
        exit 1
        ;;
esac
plan="$(dirname "$0")/image-plan.sh"
[ -r "$plan" ] || { echo "packages.sh: no $plan (docker/build-image.sh writes it)" >&2; exit 1; }
. "$plan"

case "${1:-}" in
    build)
        list="make gcc libc6-dev pkg-config $KB_IMAGE_BUILD_PACKAGES"
        ;;
    runtime)
        # python3: the entrypoint; tini: a real PID 1 so `docker stop` and Ctrl-C reach the
        # server promptly.
        list="python3 ca-certificates tini $KB_IMAGE_RUNTIME_PACKAGES"
        ;;
    *)
        echo "usage: packages.sh build|runtime" >&2
        exit 2
        ;;
esac

out=""
for entry in $list; do
    pick=""
    for alt in $(echo "$entry" | tr '|' ' '); do
        if [ "$(apt-cache show --no-all-versions "$alt" 2>/dev/null | head -c1)" ]; then
            pick=$alt
            break
        fi
    done
    if [ -z "$pick" ]; then
        echo "packages.sh: none of '$entry' is in the archive for ${ID} ${VERSION_CODENAME:-}" >&2
        exit 1
    fi
    out="$out $pick"
done
echo "$out" | sed 's/^ //'
