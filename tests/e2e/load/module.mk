# tests/e2e/load: kneebench load end to end against servers the suite starts (a few seconds
# each, low rates). The ASan binaries are built if the tree allows; when that build fails the
# ASan test skips with the reason instead of running a stale binary.
.PHONY: test-load-e2e
test-load-e2e: $(BUILD)/kneebench $(BUILD)/kb-control
	@if $(MAKE) $(call san_flags,asan) $(call san_build,asan)/kneebench $(call san_build,asan)/kb-control \
	     >$(abspath $(BUILD))/asan-load-build.log 2>&1; then asan=1; else asan=0; fi; \
	 st=0; KB_ASAN_BUILT=$$asan $(KB_PY) tests/e2e/load/test_load.py || st=1; \
	 $(KB_PY) tests/e2e/load/test_reqlog.py || st=1; \
	 $(KB_PY) tests/e2e/load/test_quantum.py || st=1; \
	 $(KB_PY) tests/e2e/load/test_dispatch.py || st=1; exit $$st
TESTS += test-load-e2e

# The same suites against kneebench and kb-control built with ThreadSanitizer
# (SANITIZER=thread, $(call san_build,thread)): a data race in the threaded load generator fails them
# (halt_on_error, and loadlib looks for a report on stderr). TSan's runtime wants its shadow
# memory at fixed addresses, which the kernel's mmap randomisation can take first (gcc 12's
# TSan aborts with "unexpected memory mapping" where vm.mmap_rnd_bits is above 28):
# tests/lib/no-aslr.sh runs the suites without address randomisation (setarch -R, inherited by
# every program they start), leaving the host's setting alone.
.PHONY: test-tsan
test-tsan:
	@$(MAKE) $(call san_flags,thread) $(call san_build,thread)/kneebench $(call san_build,thread)/kb-control
	@st=0; for t in test_load test_reqlog test_quantum test_dispatch; do \
	   TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1 KB_SANITIZER=thread \
	   KB_TEST_SUFFIX=-tsan $(KB_PY_ENV) KB_BUILD=$(abspath $(call san_build,thread)) \
	   tests/lib/no-aslr.sh tests/lib/py tests/e2e/load/$$t.py || st=1; \
	 done; exit $$st
TESTS += test-tsan
