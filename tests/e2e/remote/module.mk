# tests/e2e/remote/: serve-agent and load on two network namespaces joined by a veth pair.
.PHONY: test-remote
test-remote: $(BUILD)/kneebench $(BUILD)/gray-static
	@KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) KB_BUILD=$(abspath $(BUILD)) \
	 python3 tests/e2e/remote/test_remote.py
TESTS += test-remote
