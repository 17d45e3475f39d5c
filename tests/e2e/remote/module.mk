# tests/e2e/remote/: serve-agent and load on two network namespaces joined by a veth pair,
# with the normal build and again with the ASan+UBSan build (agent and fixture both).
.PHONY: test-remote
test-remote: $(BUILD)/kneebench $(BUILD)/gray-static
	@$(MAKE) $(call san_flags,asan) $(call san_build,asan)/kneebench $(call san_build,asan)/gray-static
	@$(KB_PY) tests/e2e/remote/test_remote.py
	@ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 $(KB_PY_ENV) KB_BUILD=$(abspath $(call san_build,asan)) KB_TEST_SUFFIX=-asan \
	 tests/lib/py tests/e2e/remote/test_remote.py
TESTS += test-remote
