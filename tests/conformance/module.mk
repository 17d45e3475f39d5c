# tests/conformance/: every fixture of contract/contract.json started for real and checked
# byte for byte (test_conformance.py); the ASan+UBSan build of gray-static under the same
# suite, which must also stop cleanly on SIGTERM with no sanitizer report.
# Every program the modules build (tests/ is included after them), so each runtime's is
# there; and check-runtimes, so a runtime whose module is missing fails here by name rather
# than being skipped as not built.
CONFORMANCE       := tests/conformance/test_conformance.py

.PHONY: test-conformance test-conformance-asan
test-conformance: $(PROGRAMS) check-runtimes
	@$(KB_PY) $(CONFORMANCE) --build $(abspath $(BUILD)) --name conformance

# The suite skips gray-static (with the reason) while there is no gray-static/module.mk.
test-conformance-asan:
	@if [ -f gray-static/module.mk ]; then \
	   $(MAKE) $(call san_flags,asan) $(call san_build,asan)/gray-static || exit 1; fi
	@ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 $(KB_PY) $(CONFORMANCE) --build $(abspath $(call san_build,asan)) --runtime gray-static --asan \
	   --name conformance-asan
TESTS += test-conformance test-conformance-asan
