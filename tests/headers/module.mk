# tests/headers: every header of the C tree compiles when it is included first and alone,
# twice (the guard), by a file that defines no feature macro (no _GNU_SOURCE): a header
# says what it needs by including it, and never relies on what its includer happened to
# include or define before it. No program is built; each header costs one -fsyntax-only.
KB_HEADERS = $(sort $(wildcard contract/*.h runner/*/*.h runner/*/*/*.h gray-static/*.h control/*.h))
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

# The runner's layers, lowest first (docs/layout.md): a module includes headers of its
# own layer or of the layers below it, never above, so each layer can be read, tested and
# replaced without the ones that use it. A file's layer is its top folder under runner/ (run/
# for run/knee/knee.c). Inside a layer a command's own files have a folder (run/knee/,
# report/curve/): they may include their layer's top and their own folder, never another
# command's folder of any layer (run/knee/ never includes run/curve/ nor report/curve/), and
# a layer's top never includes a folder of its own layer's commands.
KB_LAYERS := util load sandbox run report cli
.PHONY: test-layers
test-layers:
	@mkdir -p $(BUILD)/test-results; bad=0; i=0; \
	 for l in $(KB_LAYERS); do i=$$((i + 1)); allowed=$$(echo $(KB_LAYERS) | cut -d' ' -f1-$$i); \
	   for f in $$(find runner/$$l -name '*.[ch]' | sort); do \
	     cmd=$$(echo $$f | sed -n 's|^runner/[a-z]*/\([a-z]*\)/.*|\1|p'); \
	     for inc in $$(sed -n 's|^#include "runner/\([a-z]*\)/.*|\1|p' $$f | sort -u); do \
	       case " $$allowed " in *" $$inc "*) ;; \
	         *) bad=$$((bad + 1)); echo "  $$f ($$l) includes from $$inc, a layer above it";; esac; \
	     done; \
	     for inc in $$(sed -n 's|^#include "runner/\([a-z]*/[a-z]*\)/[^/]*"|\1|p' $$f | sort -u); do \
	       if [ -n "$$cmd" ] && [ "$${inc#*/}" != "$$cmd" ]; then \
	         bad=$$((bad + 1)); echo "  $$f (command $$cmd) includes from $$inc, another command's folder"; \
	       elif [ -z "$$cmd" ] && [ "$${inc%%/*}" = "$$l" ]; then \
	         bad=$$((bad + 1)); echo "  $$f (top of $$l) includes from $$inc, a command's folder of its own layer"; \
	       fi; \
	     done; \
	   done; \
	 done; \
	 echo "$$(( bad == 0 )) $$(( bad > 0 )) 0" > $(BUILD)/test-results/layers; \
	 echo "  layers: $(KB_LAYERS), $$bad upward or sideways includes"; [ $$bad -eq 0 ]
TESTS += test-layers
