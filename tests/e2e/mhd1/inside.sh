#!/usr/bin/env bash
# inside.sh -- runs in the mhd1 container (run.sh): copies the read-only sources from /src,
# checks that libmicrohttpd is >= 1.0, builds gray-static and its unit tests normally and
# with ASan+UBSan through the repo's own Makefile, and runs the unit tests, the conformance
# suite (gray-static only) and probe.py on both builds, then the db route's end-to-end suite
# (tests/e2e/db/test_db.py) on a throwaway PostgreSQL cluster. Counts go to /results.
set -uo pipefail
export KB_TEST_RESULTS=/results
work=/work/kneebench
st=0
say() { echo "mhd1[container]: $*"; }
record() { printf '%s %s %s\n' "$2" "$3" "$4" >"/results/.$1" && mv "/results/.$1" "/results/$1"; }

mkdir -p "$work"
tar -C /src --exclude=./build --exclude=./.git --exclude=./runs --exclude='*/node_modules' \
    --exclude='*/__pycache__' -cf - . | tar -C "$work" -xf - || { record toolchain 0 1 0; exit 1; }
cd "$work"

ver=$(pkg-config --modversion libmicrohttpd)
hexver=$(printf '#include <stdint.h>\n#include <sys/types.h>\n#include <sys/socket.h>\n#include <microhttpd.h>\nMHD_VERSION\n' |
         cc -E -P $(pkg-config --cflags libmicrohttpd) - | tail -n1)
say "$(. /etc/os-release; echo "$PRETTY_NAME"), $(cc --version | head -n1)"
say "libmicrohttpd $ver (MHD_VERSION $hexver), jansson $(pkg-config --modversion jansson), check $(pkg-config --modversion check)"
case "$ver" in
    0.*) say "FAIL: libmicrohttpd $ver is not 1.0"; record toolchain 0 1 0; exit 1 ;;
esac

units=$(ls tests/unit/gray-static/test_*.c | sed 's|^tests/unit/gray-static/\(.*\)\.c$|\1|')
# libmicrohttpd 1.0 answers three of the syntax cases itself, before gray-static sees the
# request: its contract entry's skips for this build say so (0.9.75 builds answer 400 to all
# three, and are held to it on the host).
python3 - contract/contract.json /tmp/mhd1-contract.json <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
gs = next(r for r in c["runtimes"] if r["name"] == "gray-static")
ws = ("libmicrohttpd 1.0 answers 301 with the target percent-encoded (RFC 9112 3.2 allows "
      "a 400 or that redirect) before gray-static sees the request")
gs.setdefault("conformance_skips", {}).update({
    "syntax_tab_in_target": ws,
    "syntax_space_in_target": ws,
    "syntax_nul_cuts_the_target": "libmicrohttpd 1.0 closes the connection at a NUL in the "
                                  "request line, without an answer",
})
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
for variant in normal asan; do
    if [ $variant = normal ]; then b=build san= sfx= asan_flag=; else
        b=build/asan san=SANITIZER=asan sfx=-asan asan_flag=--asan
        export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
        export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    fi
    t=$(date +%s)
    targets="$b/gray-static $(for u in $units; do printf '%s ' "$b/tests/unit/gray-static/$u"; done)"
    # shellcheck disable=SC2086
    if ! make --no-print-directory -j"$(nproc)" $san $targets >"/tmp/make-$variant.log" 2>&1; then
        tail -n 40 "/tmp/make-$variant.log"
        say "FAIL: $variant build"
        record "build$sfx" 0 1 0
        st=1
        continue
    fi
    record "build$sfx" 1 0 0
    say "$variant build: $(( $(date +%s) - t ))s; $(ldd "$b/gray-static" | grep -o 'libmicrohttpd[^ ]* => [^ ]*')"
    for u in $units; do
        KB_TEST_SUFFIX=$sfx "$b/tests/unit/gray-static/$u" || st=1
    done
    tests/lib/py tests/conformance/test_conformance.py --build "$work/$b" --runtime gray-static \
        --contract /tmp/mhd1-contract.json $asan_flag --name "conformance$sfx" || st=1
    tests/lib/py tests/e2e/mhd1/probe.py --build "$work/$b" $asan_flag --name "probe$sfx" || st=1
done
# The db route end to end (requests parked with suspend/resume while real PostgreSQL queries
# run, pool exhaustion, a client gone mid-query) with both builds, on one throwaway cluster.
# Only test_db.py: the pool's own Check suite (test_pgpool) never touches libmicrohttpd, and
# test-db runs it on the host.
pgdir=/tmp/pgcluster
if [ -x build/gray-static ] || [ -x build/asan/gray-static ]; then
    if conninfo=$(gray-static/pgcluster.sh start "$pgdir"); then
        for variant in normal asan; do
            if [ $variant = normal ]; then bin=build/gray-static sfx=; else
                bin=build/asan/gray-static sfx=-asan; fi
            [ -x "$bin" ] || continue
            KB_PG_CONNINFO=$conninfo KB_PG_DIR=$pgdir KB_SUITE=db$sfx KB_GRAY_STATIC=$work/$bin \
                tests/lib/py tests/e2e/db/test_db.py || st=1
        done
        gray-static/pgcluster.sh stop "$pgdir" >/dev/null 2>&1
    else
        say "FAIL: the throwaway PostgreSQL cluster did not start"
        record db 0 1 0
        st=1
    fi
fi
exit $st
