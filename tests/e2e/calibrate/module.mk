# tests/e2e/calibrate/: kneebench calibrate against kb-control, free and under a CPU quota;
# and the per-second .hlog/CSV series of kneebench load read back by an independent decoder
# and by HdrHistogram's HistogramLogProcessor (against a one-point gray-static curve's report).
.PHONY: test-calibrate
test-calibrate: $(BUILD)/kneebench $(BUILD)/kb-control $(BUILD)/gray-static
	@$(KB_PY) tests/e2e/calibrate/test_calibrate.py; a=$$?; \
	 $(KB_PY) tests/e2e/calibrate/test_series.py && exit $$a
TESTS += test-calibrate
