# runner/: build/kneebench, one subdirectory per layer, a command's own files one folder
# deeper (docs/layout.md). Every runner/*/*.c and runner/*/*/*.c but cli/main.c is
# library code the unit tests link.
RUNNER_SRCS := $(wildcard runner/*/*.c runner/*/*/*.c)
runner_LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(filter-out runner/cli/main.c,$(RUNNER_SRCS))) $(CONTRACT_OBJS)
# jansson (evidence, contract), libcrypto (SHA-256), zlib (.hlog), pthread (the load
# generator's threads), m. Not libmicrohttpd: the MHD version a run records is the fixture's
# own (gray-static --version), and `make test-link` checks that kneebench does not need it.
runner_LDLIBS := $(LIBS_jansson) -lcrypto -lz -lpthread -lm
# runner/util/root.o finds the tree at run time; kb-control and the C tests link it too.
RUNNER_ROOT_OBJ := $(OBJ)/runner/util/root.o

$(BUILD)/kneebench: $(OBJ)/runner/cli/main.o $(runner_LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(runner_LDLIBS)
PROGRAMS += $(BUILD)/kneebench

# `kneebench --version`: git describe of this checkout at build time, "unknown" outside one.
# What `git describe --always --dirty` says, but with the dirty check by a lock-free status:
# describe --dirty takes .git/index.lock to refresh the index, and a build must never make a
# concurrent `git commit` fail. The stamp is rewritten only when the version changed, so
# version.o is rebuilt then and only then.
KB_RUNNER_VERSION := $(shell cd '$(ROOT)' && [ -e .git ] && v=$$(git describe --always 2>/dev/null) && \
    { [ -z "$$(GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=no 2>/dev/null)" ] || \
      v=$$v-dirty; } && printf '%s' "$$v" | tr -cd 'A-Za-z0-9._+-')
KB_RUNNER_VERSION := $(or $(KB_RUNNER_VERSION),unknown)
KB_VERSION_STAMP := $(BUILD)/runner-version.stamp
$(shell mkdir -p '$(BUILD)' && { [ "$$(cat '$(KB_VERSION_STAMP)' 2>/dev/null)" = '$(KB_RUNNER_VERSION)' ] || \
        echo '$(KB_RUNNER_VERSION)' > '$(KB_VERSION_STAMP)'; })
$(OBJ)/runner/util/version.o: $(KB_VERSION_STAMP)
$(OBJ)/runner/util/version.o: ALL_CFLAGS += -DKB_RUNNER_VERSION='"$(KB_RUNNER_VERSION)"'

# The man page, from the help texts (help2man reads `kneebench --help` and --version; every
# command's own --help is added by man-include.sh). Part of `all` where help2man is
# installed (tests/lib/deps.sh installs it); `make man` asks for it explicitly.
HELP2MAN := $(shell command -v help2man 2>/dev/null)
$(BUILD)/kneebench.1: $(BUILD)/kneebench runner/cli/man-include.sh
	@echo "  MAN     $@"
	@runner/cli/man-include.sh $(BUILD)/kneebench > $@.h2m
	@help2man --no-info --section 1 --name "find the corrected-latency knee of HTTP servers" \
	   --version-string "$(KB_RUNNER_VERSION)" --include $@.h2m --output $@.tmp $(BUILD)/kneebench && mv $@.tmp $@ && rm -f $@.h2m
ifneq ($(HELP2MAN),)
PROGRAMS += $(BUILD)/kneebench.1
endif
.PHONY: man
man: $(BUILD)/kneebench.1

-include runner/curve.mk
-include runner/soak.mk
