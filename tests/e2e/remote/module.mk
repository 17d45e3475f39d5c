# tests/e2e/remote/: serve-agent and load on two network namespaces joined by a veth pair,
# with the normal build and again with the ASan+UBSan build (agent and fixture both).
.PHONY: test-remote
test-remote: $(BUILD)/kneebench $(BUILD)/gray-static
	@$(MAKE) --no-print-directory SANITIZER=asan build/asan/kneebench build/asan/gray-static
	@KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) KB_BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/remote/test_remote.py
	@ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) KB_BUILD=$(abspath build/asan) \
	 KB_TEST_SUFFIX=-asan python3 tests/e2e/remote/test_remote.py
TESTS += test-remote
