# kneebench -- one Makefile builds, tests and runs it all.
#
#   make            build every fixture and the runner into build/
#   make deps       install the Debian packages that are missing (idempotent)
#   make test       every test suite; closes with "N passed, N failed, N skipped"
#   make curve      the 56-point comparison (PROFILE=paper|quick|db-readiness, BACKEND=native|docker)
#   make install    kneebench, kb-control, the man page and bash completion under PREFIX
#   make help       every target
#   make clean
#
# Each part of the tree adds its own rules in <dir>/module.mk; flags live here, once, and
# each program's libraries in its own module.mk (it links what it uses, nothing more).
# SANITIZER=address|undefined|thread builds everything under build/$(SANITIZER) with that
# sanitizer; SANITIZER=asan is ASan and UBSan together, under build/asan (the suites' build).
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
BUILD      ?= build
SANFLAGS   :=
else ifeq ($(SAN_$(SANITIZER)),)
$(error SANITIZER=$(SANITIZER): one of address, undefined, thread, or asan (address and undefined))
else
BUILD      ?= build/$(SANITIZER)
SANFLAGS   := -fsanitize=$(SAN_$(SANITIZER)) -fno-omit-frame-pointer \
              $(if $(filter thread,$(SANITIZER)),,-fno-sanitize-recover=all)
endif
OBJ        := $(BUILD)/obj

# Compile flags for every library any program uses; link flags per library, for the
# module.mk files to pick from (LIBS_<pkg-config name>).
PKGS       := libmicrohttpd jansson libpq
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
$(foreach p,$(PKGS),$(eval LIBS_$(p) := $(shell pkg-config --libs $(p) 2>/dev/null)))
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

WARN       := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS     ?= -O2 -g
ALL_CFLAGS := -std=c11 $(CFLAGS) $(WARN) $(SANFLAGS) -MMD -MP -I. $(PKG_CFLAGS)
ALL_LDFLAGS := $(SANFLAGS) $(LDFLAGS)

# Every program a module builds is added to PROGRAMS; every test target to TESTS.
PROGRAMS   :=
TESTS      :=

.PHONY: all deps test clean help install uninstall
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

# `make install PREFIX=...`: the runner and the control server, the man page (where help2man
# is installed) and the bash completion. The installed programs carry no path of this
# checkout: they find a tree (its contract, fixtures and build/) with `kneebench --root DIR`,
# $KB_ROOT, or from the current directory (runner/util/root.h). A whole built tree, copied or
# moved, finds itself beside its build/.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL_DIRS := $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
                $(DESTDIR)$(PREFIX)/share/bash-completion/completions
install: $(BUILD)/kneebench $(BUILD)/kb-control $(if $(HELP2MAN),$(BUILD)/kneebench.1)
	install -d $(INSTALL_DIRS)
	install -m 755 $(BUILD)/kneebench $(BUILD)/kb-control $(DESTDIR)$(PREFIX)/bin/
	$(if $(HELP2MAN),install -m 644 $(BUILD)/kneebench.1 $(DESTDIR)$(PREFIX)/share/man/man1/,@echo "install: no help2man, no man page (make deps installs it)")
	install -m 644 runner/cli/kneebench.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kneebench
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kneebench $(DESTDIR)$(PREFIX)/bin/kb-control \
	      $(DESTDIR)$(PREFIX)/share/man/man1/kneebench.1 \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/kneebench

help:
	@echo "make targets:"
	@echo "  all (default)   build every fixture, the runner and its man page into $(BUILD)/"
	@echo "  deps            install the Debian packages that are missing"
	@echo "  test            every test suite below; closes with N passed, N failed, N skipped"
	@echo "  curve           the comparison and its report (PROFILE= BACKEND= RUN= ARGS= CALIBRATE=)"
	@echo "  soak            the one-hour qualification (DURATION=)"
	@echo "  bench-loadgen   the load generator's own cost, beside wrk"
	@echo "  bench-fixtures  each fixture's and kb-control's CPU per response at fixed rates"
	@echo "  image-auto      the Docker image (image, base-image, pin-base)"
	@echo "  man             $(BUILD)/kneebench.1 from the help texts (help2man)"
	@echo "  install         PREFIX=$(PREFIX) DESTDIR=: binaries, man page, bash completion"
	@echo "  uninstall       what install put there"
	@echo "  clean           remove build/"
	@echo "  help            this list"
	@echo "  SANITIZER=S     any of them built under build/S with sanitizer S: address, undefined,"
	@echo "                  thread, or asan (address and undefined together, as the suites use)"
	@echo "test suites (each alone: make NAME):"
	@for t in $(TESTS); do echo "  $$t"; done

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
