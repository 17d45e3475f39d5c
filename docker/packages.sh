#!/bin/sh
# packages.sh -- the ONE place that names the distribution packages the image installs.
#
#   packages.sh build     what the build stage needs to compile gray-static and go-server
#   packages.sh runtime   what the runtime stage needs to run all four fixtures (+ PostgreSQL)
#
# Ubuntu 24.04 (the pinned base) and Debian 12 (the local debootstrap base) name a few
# packages differently (the 64-bit time_t transition renamed libmicrohttpd12 to ...t64 in
# noble), so the lists are chosen from /etc/os-release here and nowhere else. An entry "a|b"
# means "a if the archive has it, else b" -- resolved with apt-cache after apt-get update, so
# a renamed package fails loudly at build time instead of silently pulling something else.
set -eu

. /etc/os-release
case "${ID}:${VERSION_CODENAME:-}" in
    ubuntu:noble)
        mhd=libmicrohttpd12t64
        nginx='nginx-light|nginx-core'
        ;;
    debian:bookworm)
        mhd=libmicrohttpd12
        nginx=nginx-light
        ;;
    *)
        echo "packages.sh: no package list for ${ID} ${VERSION_CODENAME:-?} (know ubuntu:noble, debian:bookworm)" >&2
        exit 1
        ;;
esac

case "${1:-}" in
    build)
        list="make gcc libc6-dev pkg-config libmicrohttpd-dev libjansson-dev libpq-dev golang-go"
        ;;
    runtime)
        # tini: a real PID 1 so `docker stop` and Ctrl-C reach the server promptly.
        list="$mhd libjansson4 libpq5 nodejs $nginx php-fpm postgresql python3 ca-certificates tini"
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
