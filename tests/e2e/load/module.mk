# tests/e2e/load: kneebench load end to end against servers the suite starts (a few seconds
# each, low rates). The ASan binary is built if the tree allows; the test that needs it skips
# with the reason otherwise.
.PHONY: test-load-e2e
test-load-e2e: $(BUILD)/kneebench $(BUILD)/kb-control
	@-$(MAKE) --no-print-directory SANITIZER=asan build/asan/kneebench build/asan/kb-control >/dev/null 2>&1
	@KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/load/test_load.py
TESTS += test-load-e2e
