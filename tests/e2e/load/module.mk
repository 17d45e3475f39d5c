# tests/e2e/load: kneebench load end to end against servers the suite starts (a few seconds
# each, low rates). The ASan binaries are built if the tree allows; when that build fails the
# ASan test skips with the reason instead of running a stale binary.
.PHONY: test-load-e2e
test-load-e2e: $(BUILD)/kneebench $(BUILD)/kb-control
	@if $(MAKE) --no-print-directory SANITIZER=asan build/asan/kneebench build/asan/kb-control \
	     >$(abspath $(BUILD))/asan-load-build.log 2>&1; then asan=1; else asan=0; fi; \
	 st=0; KB_ASAN_BUILT=$$asan KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/load/test_load.py || st=1; \
	 KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/load/test_reqlog.py || st=1; \
	 KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/load/test_quantum.py || st=1; exit $$st
TESTS += test-load-e2e
