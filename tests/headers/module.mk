# tests/headers: every header of the C tree compiles when it is included first and alone,
# twice (the guard), by a file that defines no feature macro (no _GNU_SOURCE): a header
# says what it needs by including it, and never relies on what its includer happened to
# include or define before it. No program is built; each header costs one -fsyntax-only.
KB_HEADERS = $(sort $(wildcard fixtures/*.h runner/*.h gray-static/*.h control/*.h))
.PHONY: test-headers
test-headers:
	@mkdir -p $(BUILD)/test-results; pass=0; fail=0; \
	 for h in $(KB_HEADERS); do \
	   if printf '#include "%s"\n#include "%s"\n' $$h $$h | \
	      $(CC) -std=c11 $(WARN) -I. $(PKG_CFLAGS) -fsyntax-only -x c - 2>$(BUILD)/header.err; then \
	     pass=$$((pass + 1)); \
	   else \
	     fail=$$((fail + 1)); echo "  header not self-contained: $$h"; sed 's/^/    /' $(BUILD)/header.err; \
	   fi; \
	 done; rm -f $(BUILD)/header.err; \
	 echo "$$pass $$fail 0" > $(BUILD)/test-results/headers; \
	 echo "  headers: $$pass compile alone, $$fail do not"; [ $$fail -eq 0 ]
TESTS += test-headers
