# tests/e2e/report/: `kneebench report` on a recorded real run (tests/e2e/report/run/, a
# short `kneebench curve` of two runtimes, one route, three rates; its bulky series.hlog
# files dropped): re-judged under a tighter p99, a verdict changes exactly where the stored
# p99 crosses the threshold; a tampered stored verdict makes the plain report refuse,
# naming the point; re-judging leaves the run's own files unchanged; the first table shows
# the papers' figures as the paper's host, from the contract the run kept (contract.json),
# whatever the checkout's contract says by then; evidence of a newer schema_version refused.
# Copies of the run only; nothing is served or loaded: a few seconds. The run was recorded
# (then its series.hlog files deleted) with:
#   kneebench curve --run RUN --profile quick --runtimes node,gray-static --routes plaintext \
#     --rates 2000,6000,12000 --duration 2 --warmup 1 --drain 1 --free-ports --confirm 1 \
#     --requests-log none
# (re-recorded for issue 26, so that it has every file's schema_version and its contract.json)
.PHONY: test-report-e2e
test-report-e2e: $(BUILD)/kneebench
	@$(KB_PY) tests/e2e/report/test_report.py
TESTS += test-report-e2e
# test_refined.py: a synthetic run as `curve --refine` leaves it (refine.json, the -f and -h
# samples at each held end): every answer cell of report.json is its refined held end, and
# the ranking, the cost, the side-by-side ratios, report.md's one answer per cell, the rows
# (grid marked as grid), "By how much" and `compare` read it. Nothing served: a second.
.PHONY: test-refined-report
test-refined-report: $(BUILD)/kneebench
	@$(KB_PY) tests/e2e/report/test_refined.py
TESTS += test-refined-report
