#!/usr/bin/env bash
# Install the Debian packages kneebench needs that are missing; nothing when all are there.
set -euo pipefail
need=(build-essential pkg-config libmicrohttpd-dev libjansson-dev libpq-dev check
      wrk nginx-light php-fpm postgresql debootstrap librsvg2-bin curl
      procps iproute2 python3 libssl-dev zlib1g-dev util-linux libhdrhistogram-java chromium
      fonts-dejavu-core
      help2man man-db)
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
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
