# tests/e2e/calibrate/: kneebench calibrate against kb-control, free and under a CPU quota.
.PHONY: test-calibrate
test-calibrate: $(BUILD)/kneebench $(BUILD)/kb-control
	@KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) KB_BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/calibrate/test_calibrate.py
TESTS += test-calibrate
