# tests/e2e/hostile/: `kneebench load` against hostile_server.py's misbehaving modes, with
# the normal build and the ASan+UBSan build (built here first so the suite never skips it).
.PHONY: test-hostile
test-hostile: $(BUILD)/kneebench
	@$(MAKE) $(call san_flags,asan) $(call san_build,asan)/kneebench
	@$(KB_PY) tests/e2e/hostile/test_hostile.py
TESTS += test-hostile
# test_gray_static.py: gray-static itself against hostile peers (idle and slowloris floods
# past its connection limit, trickled heads, half-closed sockets in every --loop).
.PHONY: test-gray-hostile
test-gray-hostile: $(BUILD)/gray-static
	@$(KB_PY) tests/e2e/hostile/test_gray_static.py
TESTS += test-gray-hostile
