#!/usr/bin/env bash
# run.sh -- the db route's suites against one throwaway PostgreSQL cluster.
#
#   tests/e2e/db/run.sh BUILD_ROOT     (BUILD_ROOT holds gray-static and asan/gray-static)
#
# Starts a cluster under BUILD_ROOT/pgtest (gray-static/pgcluster.sh), runs the pool's Check
# suite and test_db.py with the normal build and the ASan+UBSan build, and always stops and
# removes the cluster. Counts go to $KB_TEST_RESULTS (pgpool, pgpool-asan, db, db-asan).
# Without PostgreSQL server binaries the suites are recorded as skipped, with the reason.
set -uo pipefail
cd "$(dirname "$0")/../../.."
build=$1
results=${KB_TEST_RESULTS:-}

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "SKIP test-db: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (make deps)"
    if [ -n "$results" ]; then
        mkdir -p "$results"
        for s in pgpool pgpool-asan db db-asan; do echo "0 0 1" >"$results/$s"; done
    fi
    exit 0
fi

dir=$build/pgtest/run-$$
cleanup() { gray-static/pgcluster.sh stop "$dir" >/dev/null 2>&1; rm -rf "$dir"; }
trap cleanup EXIT
if ! conninfo=$(gray-static/pgcluster.sh start "$dir"); then
    echo "FAIL test-db: the throwaway cluster did not start"
    [ -n "$results" ] && mkdir -p "$results" && echo "0 1 0" >"$results/db"
    exit 1
fi
export KB_PG_CONNINFO=$conninfo KB_PG_DIR=$dir

st=0
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
KB_TEST_SUFFIX= "$build/tests/e2e/db/test_pgpool" || st=1
KB_TEST_SUFFIX=-asan "$build/asan/tests/e2e/db/test_pgpool" || st=1
KB_SUITE=db KB_GRAY_STATIC=$build/gray-static tests/lib/py tests/e2e/db/test_db.py || st=1
KB_SUITE=db-asan KB_GRAY_STATIC=$build/asan/gray-static tests/lib/py tests/e2e/db/test_db.py || st=1
exit $st
