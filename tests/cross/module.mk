# tests/cross: the runner and gray-static built for aarch64 (Graviton, an Apple-silicon
# Linux VM) with Debian's gcc-aarch64-linux-gnu and the :arm64 -dev packages (make deps
# installs them), and the load generator's Check suites run under qemu-user
# (qemu-aarch64-static): an x86-only builtin or a word-size assumption fails here, not on a
# user's machine. Skipped, and said so, where the cross compiler or qemu is missing.
AARCH64_BUILD := $(BUILD_ROOT)/aarch64
# libpq: Debian 12's libpq-dev cannot sit beside the native one (make deps installs only
# libpq5:arm64), so a .pc of our own names the arm64 runtime and the headers, which hold
# nothing that differs between two LP64 little-endian targets.
AARCH64_PKG := env PKG_CONFIG_LIBDIR=$(abspath $(AARCH64_BUILD))/pkgconfig:/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
define AARCH64_LIBPQ_PC
Name: libpq
Description: the arm64 libpq runtime with the native headers (tests/cross/module.mk)
Version: 15
Libs: /usr/lib/aarch64-linux-gnu/libpq.so.5
Cflags: -I/usr/include/postgresql
endef
export AARCH64_LIBPQ_PC
AARCH64_TESTS := $(patsubst tests/unit/%.c,$(AARCH64_BUILD)/tests/unit/%,\
                   $(wildcard tests/unit/runner/load/test_*.c))
.PHONY: test-aarch64
test-aarch64:
	@r=$(abspath $(BUILD)/test-results); mkdir -p $$r; \
	 if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v qemu-aarch64-static >/dev/null \
	    || [ ! -e /usr/lib/aarch64-linux-gnu/pkgconfig/jansson.pc ] \
	    || [ ! -e /usr/lib/aarch64-linux-gnu/libpq.so.5 ]; then \
	   echo "SKIP test-aarch64: no aarch64 cross compiler, arm64 libraries or qemu-aarch64-static (make deps)"; \
	   echo "0 0 1" > $$r/aarch64; exit 0; fi; \
	 mkdir -p $(AARCH64_BUILD)/pkgconfig; \
	 [ -e /usr/lib/aarch64-linux-gnu/pkgconfig/libpq.pc ] || \
	   printf '%s\n' "$$AARCH64_LIBPQ_PC" > $(AARCH64_BUILD)/pkgconfig/libpq.pc; \
	 $(MAKE) --no-print-directory BUILD=$(AARCH64_BUILD) CC=aarch64-linux-gnu-gcc \
	   PKG_CONFIG="$(AARCH64_PKG)" $(AARCH64_BUILD)/kneebench $(AARCH64_BUILD)/gray-static \
	   $(AARCH64_TESTS) >$(abspath $(BUILD))/aarch64-build.log 2>&1 \
	   || { tail -20 $(abspath $(BUILD))/aarch64-build.log; echo "1 1 0" > $$r/aarch64; exit 1; }; \
	 for b in $(AARCH64_BUILD)/kneebench $(AARCH64_BUILD)/gray-static; do \
	   file -b $$b | grep -q 'ARM aarch64' || { echo "$$b is not an aarch64 ELF"; \
	     echo "0 1 0" > $$r/aarch64; exit 1; }; done; \
	 st=0; for t in $(AARCH64_TESTS); do \
	   KB_TEST_RESULTS=$$r KB_TEST_SUFFIX=-aarch64 qemu-aarch64-static $$t || st=1; done; \
	 echo "1 0 0" > $$r/aarch64; exit $$st
TESTS += test-aarch64
