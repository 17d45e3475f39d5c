#!/usr/bin/env bash
# The README's main command as a user types it: `make curve PROFILE=quick` from the checkout,
# with the default (relative) run directory and calibration, narrowed by ARGS to one point a
# runtime. Fails when the command fails, when a runtime of the contract (variants aside) has no
# point, or when any point failed; client-limited and uncontrolled points are results, not
# failures.
#   tests/lib/readme-curve.sh [ARGS]     default ARGS: --routes plaintext --rates 8000
set -euo pipefail
cd "$(dirname "$0")/../.."
args=${1:---routes plaintext --rates 8000}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
make --no-print-directory curve PROFILE=quick ARGS="$args" 2>&1 | tee "$log"
run=$(sed -n 's/^kneebench: curve into \(.*\) (PROFILE=.*/\1/p' "$log" | tail -n 1)
[ -n "$run" ] && [ -f "$run/report.json" ] || { echo "readme-curve: no report" >&2; exit 1; }
PYTHONPATH=tests/lib python3 - "$run" <<'PY'
import json, sys
from kbenv import COMPARISON_RUNTIMES as want
run = sys.argv[1]
report = json.load(open(f"{run}/report.json"))
rows = report["rows"]
seen = sorted({r["runtime"] for r in rows})
bad = [f'{r["point_id"]}: {r["reason"]}' for r in rows if r["verdict"] == "failed"]
print(f"readme-curve: {run}: {len(rows)} points, verdicts "
      + ", ".join(f'{r["point_id"]} {r["verdict"]}' for r in rows))
if sorted(want) != seen:
    sys.exit(f"readme-curve: runtimes {seen}, the contract has {sorted(want)}")
if bad:
    sys.exit("readme-curve: failed points:\n  " + "\n  ".join(bad))
PY
