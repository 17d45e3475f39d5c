#!/usr/bin/env bash
# check_needed.sh BUILD_DIR -- every program's NEEDED entries (readelf -d) against what its
# link line in its module.mk should give it. A library a program does not use would be
# loaded at every start and would make its recorded identity (the runner's MHD, say) look
# meaningful; one it needs but lacks would not link at all. Counts go to $KB_TEST_RESULTS/link.
set -u
build=${1:?usage: check_needed.sh BUILD_DIR}
pass=0 fail=0 skip=0

needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

# expect PROGRAM needs|never LIBRARY (the soname's prefix: libmicrohttpd, libpq, ...)
expect() {
    local prog=$1 rule=$2 lib=$3 exe="$build/$1" has=no
    if [ ! -x "$exe" ]; then
        echo "SKIP $prog $rule $lib: $exe is not built"
        skip=$((skip + 1))
        return
    fi
    needed "$exe" | grep -q "^$lib\.so" && has=yes
    if { [ "$rule" = needs ] && [ $has = yes ]; } || { [ "$rule" = never ] && [ $has = no ]; }; then
        echo "ok   $prog $rule $lib"
        pass=$((pass + 1))
    else
        echo "FAIL $prog $rule $lib; NEEDED: $(needed "$exe" | tr '\n' ' ')"
        fail=$((fail + 1))
    fi
}

if ! command -v readelf >/dev/null; then
    echo "SKIP: no readelf (binutils)"
    skip=1
else
    for lib in libmicrohttpd libpq; do expect kneebench never $lib; done
    for lib in libjansson libcrypto libz; do expect kneebench needs $lib; done
    for lib in libmicrohttpd libpq libcrypto libz; do expect kb-control never $lib; done
    expect kb-control needs libjansson
    for lib in libmicrohttpd libjansson; do expect gray-static needs $lib; done
    # libpq is loaded at run time for --db only (gray-static/LOOP.md, "libpq on demand")
    for lib in libpq libcrypto libz; do expect gray-static never $lib; done
fi
echo "link: $pass passed, $fail failed, $skip skipped"
if [ -n "${KB_TEST_RESULTS:-}" ]; then
    mkdir -p "$KB_TEST_RESULTS" && echo "$pass $fail $skip" >"$KB_TEST_RESULTS/link"
fi
[ "$fail" -eq 0 ]
