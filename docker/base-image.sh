#!/usr/bin/env bash
# base-image.sh -- build the local Debian 12 base image with debootstrap and import it.
#
# No image registry answers on the machines this suite is developed on, so the pinned Ubuntu
# base cannot be pulled. This builds the substitute base from the SAME package mirror apt
# already uses on this host (read from /etc/apt/sources.list and sources.list.d), so the image
# draws on exactly the archive the native backend's packages came from.
#
#   docker/base-image.sh [TAG [SUITE]]   default TAG kneebench-base:bookworm, SUITE bookworm
#   KB_FORCE=1 docker/base-image.sh      rebuild even when TAG exists
#
# SUITE noble builds an Ubuntu 24.04 base from $KB_UBUNTU_MIRROR (default archive.ubuntu.com),
# only to check the Dockerfile against Ubuntu's package names where the pinned image cannot be
# pulled. It is NOT the pinned image: its identity says so. Debian's debootstrap carries no
# Ubuntu archive key, so unless /usr/share/keyrings/ubuntu-archive-keyring.gpg exists the
# bootstrap is unverified (recorded as "gpg_checked": false; apt inside verifies from then on).
#
# The result is cached: when TAG already exists nothing is done.
set -euo pipefail

tag=${1:-kneebench-base:bookworm}
suite=${2:-bookworm}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

die() { echo "base-image: $*" >&2; exit 1; }

command -v docker >/dev/null || die "no docker CLI"
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"
if [ -z "${KB_FORCE:-}" ] && docker image inspect "$tag" >/dev/null 2>&1; then
    echo "base-image: $tag exists ($(docker image inspect -f '{{.Id}}' "$tag")), not rebuilt"
    exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap missing (make deps installs it)"
[ "$(id -u)" = 0 ] || die "debootstrap needs root"

# The first archive URI that serves $suite, then the one serving $suite-security, from either
# the one-line format or deb822 (.sources) files.
mirror_for() { # $1: suite
    local files=() f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] && files+=("$f")
    done
    [ ${#files[@]} -gt 0 ] || return 0
    awk -v want="$1" '
        # one-line: deb [opts] URI SUITE COMPONENTS...
        /^[[:space:]]*deb[[:space:]]/ {
            i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
            if ($(i + 1) == want) { print $i; exit }
            next
        }
        # deb822 stanza: Types / URIs / Suites, blank line ends it
        /^[[:space:]]*$/ { if (uri != "" && match(" " suites " ", " " want " ") && types ~ /deb( |$)/) { print uri; exit }
                            uri = ""; suites = ""; types = ""; next }
        tolower($1) == "types:"  { $1 = ""; types = $0 }
        tolower($1) == "uris:"   { uri = $2 }
        tolower($1) == "suites:" { $1 = ""; suites = $0 }
        END { if (uri != "" && match(" " suites " ", " " want " ") && types ~ /deb( |$)/) print uri }
    ' "${files[@]}" | head -n1
}

extra=() gpg=true components=main
case "$suite" in
    bookworm|trixie)
        # trixie (libmicrohttpd 1.0, for tests/e2e/mhd1) comes from the mirror the host's
        # bookworm sources name: a Debian mirror serves every suite.
        mirror=$(mirror_for "$suite")
        [ -n "$mirror" ] || mirror=$(mirror_for bookworm)
        [ -n "$mirror" ] || die "no apt source for '$suite' in /etc/apt/sources.list(.d); cannot pick a mirror"
        security=$(mirror_for "$suite-security")
        [ -n "$security" ] || security=$(mirror_for bookworm-security)
        distribution=debian
        ;;
    noble)
        mirror=${KB_UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
        security=$mirror
        distribution=ubuntu
        components=main,universe
        keyring=/usr/share/keyrings/ubuntu-archive-keyring.gpg
        if [ -r "$keyring" ]; then extra+=(--keyring="$keyring"); else extra+=(--no-check-gpg); gpg=false; fi
        # debootstrap on Debian 12 predates noble; its Ubuntu script is the same as jammy's.
        script=/usr/share/debootstrap/scripts/gutsy
        ;;
    *) die "unknown suite '$suite' (bookworm, trixie, or noble for checking Ubuntu package names)" ;;
esac

work=$(mktemp -d "${TMPDIR:-/var/tmp}/kneebench-base.XXXXXX")
cleanup() { rm -rf --one-file-system "$work"; }
trap cleanup EXIT

echo "base-image: debootstrap $suite from $mirror (minbase) into $work/root"
debootstrap --variant=minbase --components="$components" "${extra[@]}" "$suite" "$work/root" "$mirror" ${script:-} >"$work/debootstrap.log" 2>&1 || {
    tail -n 30 "$work/debootstrap.log" >&2
    die "debootstrap failed (log above)"
}

# Same suites the host uses, so the image's apt sees updates and security fixes too.
comps=${components//,/ }
{
    echo "deb $mirror $suite $comps"
    echo "deb $mirror $suite-updates $comps"
    [ -n "$security" ] && echo "deb $security $suite-security $comps"
} >"$work/root/etc/apt/sources.list"
# Ubuntu 24.04 ships its sources in deb822 form; one list is enough here.
rm -f "$work/root/etc/apt/sources.list.d/ubuntu.sources"
# Keep images small: no cached .debs, no docs beyond copyright, no recommends.
cat >"$work/root/etc/apt/apt.conf.d/90kneebench" <<'CONF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
CONF
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
created=$(date -u +%Y-%m-%dT%H:%M:%SZ)
printf '{"distribution":"%s","suite":"%s","mirror":"%s","security":"%s","built":"%s","tool":"debootstrap --variant=minbase","gpg_checked":%s}\n' \
    "$distribution" "$suite" "$mirror" "$security" "$created" "$gpg" >"$work/root/etc/kneebench-base.json"

echo "base-image: importing as $tag"
tar --numeric-owner -C "$work/root" -c . | docker import \
    --change 'CMD ["/bin/bash"]' \
    --change 'ENV LANG=C.UTF-8' \
    --message "kneebench base: $distribution $suite minbase from $mirror, $created" \
    - "$tag" >/dev/null
echo "base-image: $tag = $(docker image inspect -f '{{.Id}}' "$tag")"
