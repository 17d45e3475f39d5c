#!/usr/bin/env bash
# Install the Debian packages kneebench needs that are missing; nothing when all are there.
# KB_NO_DEPS=1: only say what is missing (a developer without root, or with their own
# packages); the suites that need a missing one then skip or fail naming it.
set -euo pipefail
need=(build-essential pkg-config libmicrohttpd-dev libjansson-dev libpq-dev check
      wrk nginx-light php-fpm postgresql debootstrap librsvg2-bin curl
      procps iproute2 python3 libssl-dev zlib1g-dev util-linux libhdrhistogram-java chromium
      fonts-dejavu-core openssh-server openssh-client
      help2man man-db)
# The aarch64 build and its unit tests under qemu-user (tests/cross), from an amd64 host:
# a cross compiler, qemu and the arm64 -dev packages of every library the C parts link --
# but libpq's runtime only: Debian 12's libpq-dev is not co-installable across
# architectures, and its arm64 package would remove the native one the build needs
# (tests/cross/module.mk points the cross build at the runtime and the native headers).
arm64=0
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
    arm64=1
    need+=(gcc-aarch64-linux-gnu qemu-user-static file libjansson-dev:arm64 libssl-dev:arm64
           zlib1g-dev:arm64 check:arm64 libsubunit-dev:arm64 libmicrohttpd-dev:arm64
           libpq5:arm64)
fi
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v go >/dev/null || missing+=(golang-go)
command -v node >/dev/null || missing+=(nodejs)
# HdrHistogram's own HistogramLogProcessor reads the series logs in the tests
command -v java >/dev/null || missing+=(default-jre-headless)
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all present"
    exit 0
fi
if [ "${KB_NO_DEPS:-0}" = 1 ]; then
    echo "deps: missing (KB_NO_DEPS=1, not installing): ${missing[*]}"
    exit 0
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if [ $arm64 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
