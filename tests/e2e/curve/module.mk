# tests/e2e/curve: kneebench curve + report end to end on a small matrix (two runtimes, both
# routes, two low rates, ~1 s a point), a fixture killed mid-point, SIGINT then resume, the
# report refusing an incomplete run; and test_trust.py, a busy neighbour on the client's CPU
# caught by send lag and rx delay; and test_refine.py, --refine bisecting between the grid's
# rates against a load whose knee is known. Needs root for the cgroup sandbox; skips otherwise.
.PHONY: test-curve-e2e
test-curve-e2e: all
	@$(KB_PY) tests/e2e/curve/test_curve.py; a=$$?; \
	 $(KB_PY) tests/e2e/curve/test_trust.py || a=1; \
	 $(KB_PY) tests/e2e/curve/test_refine.py && exit $$a
TESTS += test-curve-e2e
