# kneebench -- one Makefile builds, tests and runs it all.
#
#   make            build every fixture and the runner into build/
#   make deps       install the Debian packages that are missing (idempotent)
#   make test       every test suite; closes with "N passed, N failed, N skipped"
#   make check      the fast subset before a commit: unit suites, headers, layers, command line
#   make curve      the 56-point comparison (PROFILE=paper|quick|db-readiness, BACKEND=native|docker)
#   make install    kneebench, kb-control, the contract, the man page, bash completion and docs under PREFIX
#   make help       every target
#   make clean
#
# Each part of the tree adds its own rules in <dir>/module.mk; flags live here, once, and
# each program's libraries in its own module.mk (it links what it uses, nothing more).
# SANITIZER=address|undefined|thread builds everything under build/$(SANITIZER) with that
# sanitizer; SANITIZER=asan is ASan and UBSan together, under build/asan (the suites' build).
# BUILD_ROOT=DIR moves the build (default build/), each sanitizer's going under it;
# $(call san_build,S) is sanitizer S's directory and `$(MAKE) $(call san_flags,S) TARGET`
# builds into it, so no recipe names build/asan or build/thread.
# No path is compiled in: the programs find their tree at run time (runner/util/root.h).

SHELL      := /bin/bash
ROOT       := $(CURDIR)
CC         ?= cc
SANITIZER  ?=
SAN_asan      := address,undefined
SAN_address   := address
SAN_undefined := undefined
SAN_thread    := thread
ifeq ($(SANITIZER),)
ifeq ($(origin BUILD),undefined)
BUILD      := $(or $(BUILD_ROOT),build)
endif
BUILD_ROOT ?= $(BUILD)
SANFLAGS   :=
else ifeq ($(SAN_$(SANITIZER)),)
$(error SANITIZER=$(SANITIZER): one of address, undefined, thread, or asan (address and undefined))
else
BUILD_ROOT ?= build
BUILD      ?= $(BUILD_ROOT)/$(SANITIZER)
SANFLAGS   := -fsanitize=$(SAN_$(SANITIZER)) -fno-omit-frame-pointer \
              $(if $(filter thread,$(SANITIZER)),,-fno-sanitize-recover=all)
endif
OBJ        := $(BUILD)/obj
san_build   = $(BUILD_ROOT)/$(1)
san_flags   = --no-print-directory SANITIZER=$(1) BUILD_ROOT=$(BUILD_ROOT) \
              BUILD=$(call san_build,$(1))

# Compile flags for every library any program uses; link flags per library, for the
# module.mk files to pick from (LIBS_<pkg-config name>).
# PKG_CONFIG: another architecture's (tests/cross/module.mk builds for aarch64 with one).
PKG_CONFIG ?= pkg-config
PKGS       := libmicrohttpd jansson libpq
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
$(foreach p,$(PKGS),$(eval LIBS_$(p) := $(shell $(PKG_CONFIG) --libs $(p) 2>/dev/null)))
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

WARN       := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=c11 $(CFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -I. $(PKG_CFLAGS)
ALL_LDFLAGS := $(SANFLAGS) $(LDFLAGS)

# Every program a module builds is added to PROGRAMS; every test target to TESTS.
PROGRAMS   :=
TESTS      :=

.PHONY: all deps test check clean help install uninstall
.SECONDARY:
all:

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

# Every part of the tree that builds something is a folder with a module.mk, found here by
# name: a runtime's folder joins the build by being there (docs/adding-a-runtime.md).
# contract/ and runner/ come first (the others link their objects, named in prerequisites),
# tests/ last (its suites name every program), then docker/ (its suite, the slowest, runs
# last in `make test`). The image's build stage has no runner/ or tests/, hence wildcards.
KB_MODULES_FIRST := contract/module.mk runner/module.mk
KB_MODULES_LAST  := tests/module.mk docker/module.mk
include $(wildcard $(KB_MODULES_FIRST))
include $(filter-out $(KB_MODULES_FIRST) $(KB_MODULES_LAST),$(sort $(wildcard */module.mk)))
include $(wildcard $(KB_MODULES_LAST))

all: $(PROGRAMS) check-runtimes

# Every runtime of the contract has its folder, and what it runs from {build}/ a module
# builds: a forgotten module.mk stops the build with the runtime's name, never leaves a
# silent gap. KB_CONTRACT= checks another contract (a user's, as `--contract` takes).
KB_CONTRACT ?= contract/contract.json
.PHONY: check-runtimes gen-runtimes
check-runtimes:
	@if command -v python3 >/dev/null; then \
	   python3 contract/runtimes.py --contract '$(KB_CONTRACT)' check --build '$(BUILD)' \
	     --programs '$(PROGRAMS)'; \
	 else echo "check-runtimes: no python3 (make deps installs it): the contract's runtimes were NOT checked"; fi

# The bash completion's runtime, route and profile words and README.md's table of runtimes,
# regenerated from the contract (make test-cli fails while they differ from it).
gen-runtimes:
	@python3 contract/runtimes.py --contract '$(KB_CONTRACT)' generate

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

# The check before a commit: every Check unit suite, every header alone, the layers and the
# command line (help, completion, refusals, a 2 s load against kb-control). It builds only
# what those need, runs no apt-get and starts no fixture: under 3 minutes from a clean tree
# on a 2-CPU host (`make -j2 check`), against the 20 and more of `make test`.
CHECKS := test-unit test-headers test-layers test-cli
check:
	@rm -rf $(BUILD)/test-results && mkdir -p $(BUILD)/test-results
	@status=0; for t in $(CHECKS); do $(MAKE) --no-print-directory $$t || status=1; done; \
	 tests/lib/summary.sh $(BUILD)/test-results; s=$$?; [ $$status -eq 0 ] && exit $$s || exit 1

clean:
	rm -rf build

# `make install PREFIX=...`: the runner and the control server, the contract they check
# every response against (PREFIX/share/kneebench/contract.json), the man page (where
# help2man is installed), the bash completion and the documents the man page names
# (PREFIX/share/doc/kneebench/). The installed programs carry no path of
# this checkout: they find the contract at BIN/../share/kneebench/ beside themselves, so
# `kneebench load` and kb-control work from any directory; what runs fixtures (curve, soak,
# calibrate) still needs a tree: `kneebench --root DIR`, $KB_ROOT, or the current directory
# (runner/util/root.h). A whole built tree, copied or moved, finds itself beside its build/.
PREFIX  ?= /usr/local
DESTDIR ?=
# The documents the man page and the commands' --help name, kept at their paths in the tree
# under PREFIX/share/doc/kneebench/ (so "docs/protocol.md" there is that file).
KB_DOCS := README.md runner/README-load.md $(sort $(wildcard docs/*.md))
DOCDIR   = $(DESTDIR)$(PREFIX)/share/doc/kneebench
INSTALL_DIRS := $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
                $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
                $(DESTDIR)$(PREFIX)/share/kneebench $(DOCDIR)/docs $(DOCDIR)/runner
install: $(BUILD)/kneebench $(BUILD)/kb-control $(if $(HELP2MAN),$(BUILD)/kneebench.1)
	install -d $(INSTALL_DIRS)
	install -m 755 $(BUILD)/kneebench $(BUILD)/kb-control $(DESTDIR)$(PREFIX)/bin/
	install -m 644 contract/contract.json $(DESTDIR)$(PREFIX)/share/kneebench/contract.json
	$(if $(HELP2MAN),install -m 644 $(BUILD)/kneebench.1 $(DESTDIR)$(PREFIX)/share/man/man1/,@echo "install: no help2man, no man page (make deps installs it)")
	install -m 644 runner/cli/kneebench.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kneebench
	for d in $(KB_DOCS); do install -m 644 $$d $(DOCDIR)/$$d || exit 1; done
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kneebench $(DESTDIR)$(PREFIX)/bin/kb-control \
	      $(DESTDIR)$(PREFIX)/share/man/man1/kneebench.1 \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kneebench \
	      $(DESTDIR)$(PREFIX)/share/kneebench/contract.json
	rm -f $(addprefix $(DOCDIR)/,$(KB_DOCS))
	rmdir $(DOCDIR)/docs $(DOCDIR)/runner $(DOCDIR) $(DESTDIR)$(PREFIX)/share/kneebench 2>/dev/null || true

help:
	@echo "make targets:"
	@echo "  all (default)   build every fixture, the runner and its man page into $(BUILD)/"
	@echo "  deps            install the Debian packages that are missing"
	@echo "  test            every test suite below; closes with N passed, N failed, N skipped"
	@echo "  check           the fast subset before a commit, under 3 minutes: $(CHECKS)"
	@echo "  curve           the comparison and its report (PROFILE= BACKEND= RUN= ARGS= CALIBRATE=)"
	@echo "  soak            the one-hour qualification (DURATION=)"
	@echo "  bench-loadgen   the load generator's own cost, beside wrk"
	@echo "  bench-fixtures  each fixture's and kb-control's CPU per response at fixed rates"
	@echo "  bench-knee-nginx  nginx's knee, its ends as 30 s points, and beside wrk2 (WRK2=)"
	@echo "  image-auto      the Docker image (image, base-image, pin-base)"
	@echo "  check-runtimes  every runtime of the contract has its folder and module (part of all)"
	@echo "  gen-runtimes    the bash completion's words and README's runtime table, from the contract"
	@echo "  man             $(BUILD)/kneebench.1 from the help texts (help2man)"
	@echo "  install         PREFIX=$(PREFIX) DESTDIR=: binaries, contract, man page, bash completion, docs"
	@echo "  uninstall       what install put there"
	@echo "  clean           remove build/"
	@echo "  help            this list"
	@echo "  SANITIZER=S     any of them built under build/S with sanitizer S: address, undefined,"
	@echo "                  thread, or asan (address and undefined together, as the suites use)"
	@echo "  BUILD_ROOT=DIR  build into DIR instead of build/ (a sanitizer's into DIR/S); the Python"
	@echo "                  suites read it as KB_BUILD (tests/lib/py FILE runs one by hand)"
	@echo "  KB_NO_DEPS=1    test, curve and soak say which packages are missing, never apt-get"
	@echo "test suites (each alone: make NAME):"
	@for t in $(TESTS); do echo "  $$t"; done

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
