# kneebench -- one Makefile builds, tests and runs it all.
#
#   make            build every fixture and the runner into build/
#   make deps       install the Debian packages that are missing (idempotent)
#   make test       every test suite; closes with "N passed, N failed, N skipped"
#   make curve      the 56-point comparison (PROFILE=paper|quick, BACKEND=native|docker)
#   make clean
#
# Each part of the tree adds its own rules in <dir>/module.mk; flags live here, once.
# SANITIZER=asan builds everything under build/asan with ASan+UBSan.

SHELL      := /bin/bash
ROOT       := $(CURDIR)
CC         ?= cc
SANITIZER  ?=
ifeq ($(SANITIZER),)
BUILD      ?= build
SANFLAGS   :=
else
BUILD      ?= build/$(SANITIZER)
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
endif
OBJ        := $(BUILD)/obj

PKGS       := libmicrohttpd jansson libpq
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN       := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=c11 $(CFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -I. -Ifixtures $(PKG_CFLAGS) \
              -DKB_CONTRACT_PATH='"$(ROOT)/fixtures/contract.json"' -DKB_ROOT='"$(ROOT)"'
ALL_LDFLAGS := $(SANFLAGS) $(LDFLAGS)
LDLIBS_ALL := $(PKG_LIBS) -lpthread -lm

# Every program a module builds is added to PROGRAMS; every test target to TESTS.
PROGRAMS   :=
TESTS      :=

.PHONY: all deps test clean
.SECONDARY:
all:

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

include fixtures/module.mk
include $(wildcard gray-static/module.mk runner/module.mk control/module.mk go/module.mk \
                   node/module.mk php-fpm/module.mk tests/module.mk docker/module.mk)

all: $(PROGRAMS)

deps:
	@tests/lib/deps.sh

# Suites record "passed failed skipped" under $(BUILD)/test-results; the summary is the
# closing line CI reads. Like `make curve`, it installs what is missing and builds first (in a
# sub-make, so pkg-config flags are read after the packages exist).
test:
	@tests/lib/deps.sh
	@$(MAKE) --no-print-directory all
	@rm -rf $(BUILD)/test-results && mkdir -p $(BUILD)/test-results
	@status=0; for t in $(TESTS); do $(MAKE) --no-print-directory $$t || status=1; done; \
	 tests/lib/summary.sh $(BUILD)/test-results; s=$$?; [ $$status -eq 0 ] && exit $$s || exit 1

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
