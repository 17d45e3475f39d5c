#!/usr/bin/env bash
# pin-base.sh -- re-resolve ubuntu:24.04 to its current digest and rewrite the Dockerfile's pin.
#
#   docker/pin-base.sh [REF]      default REF: ubuntu:24.04
#
# Asks a registry (docker buildx imagetools inspect, else docker pull + RepoDigests) for the
# manifest-list digest of REF and rewrites the `ARG BASE_IMAGE=` line of docker/Dockerfile
# (tmp + rename). Where no registry answers it says so, exits 1 and changes nothing.
set -euo pipefail

ref=${1:-ubuntu:24.04}
here=$(cd "$(dirname "$0")" && pwd)
dockerfile=$here/Dockerfile
wait_s=${KB_PIN_TIMEOUT:-60}

die() { echo "pin-base: $*" >&2; exit 1; }
command -v docker >/dev/null || die "no docker CLI; $dockerfile unchanged"
old=$(sed -n 's/^ARG BASE_IMAGE=//p' "$dockerfile")
[ -n "$old" ] || die "no 'ARG BASE_IMAGE=' line in $dockerfile"

digest="" tried=()
if docker buildx version >/dev/null 2>&1; then
    if out=$(timeout "$wait_s" docker buildx imagetools inspect "$ref" 2>&1); then
        digest=$(printf '%s\n' "$out" | sed -n 's/^Digest:[[:space:]]*\(sha256:[0-9a-f]\{64\}\)$/\1/p' | head -n1)
    fi
    [ -n "$digest" ] || tried+=("buildx imagetools inspect: $(printf '%s' "$out" | tail -n1)")
fi
if [ -z "$digest" ]; then
    if out=$(timeout "$wait_s" docker pull -q "$ref" 2>&1); then
        repo=${ref%%:*}
        digest=$(docker image inspect -f '{{range .RepoDigests}}{{println .}}{{end}}' "$ref" \
                 | sed -n "s|^\(docker.io/\)\{0,1\}\(library/\)\{0,1\}$repo@\(sha256:[0-9a-f]\{64\}\)$|\3|p" | head -n1)
        [ -n "$digest" ] || tried+=("docker pull: pulled, but no RepoDigest for $repo")
    else
        rc=$?
        [ $rc = 124 ] && out="no answer within ${wait_s}s"
        tried+=("docker pull: $(printf '%s' "$out" | tail -n1)")
    fi
fi
if [ -z "$digest" ]; then
    echo "pin-base: could not resolve $ref: no registry answered." >&2
    for t in "${tried[@]}"; do echo "  - $t" >&2; done
    die "$dockerfile unchanged (pin stays $old)"
fi

new="$ref@$digest"
if [ "$new" = "$old" ]; then
    echo "pin-base: $ref still resolves to $digest; nothing to change"
    exit 0
fi
tmp=$(mktemp "$dockerfile.XXXXXX")
trap 'rm -f "$tmp"' EXIT
awk -v new="$new" '/^ARG BASE_IMAGE=/ { print "ARG BASE_IMAGE=" new; next } { print }' "$dockerfile" >"$tmp"
chmod --reference="$dockerfile" "$tmp"
mv "$tmp" "$dockerfile"
trap - EXIT
echo "pin-base: $old -> $new (update the comment above the ARG: where and when it was resolved)"
