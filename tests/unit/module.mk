# Unit tests: tests/unit/<area>/[<concern>/]test_<name>.c (runner's mirror runner/<concern>/), one Check program each, linked with the
# area's library objects ($(<area>_LIB_OBJS), defined by <area>/module.mk; main.o excluded)
# and the area's libraries ($(<area>_LDLIBS)); every suite may ask runner/util/root.o where the
# tree is (the shipped contract).
UNIT_AREAS := contract runner gray-static control
contract_LIB_OBJS := $(CONTRACT_OBJS)
contract_LDLIBS := $(LIBS_jansson)

define kb_unit_area
$(1)_UNIT_SRCS := $$(wildcard tests/unit/$(1)/test_*.c tests/unit/$(1)/*/test_*.c)
$(1)_UNIT_BINS := $$(patsubst tests/unit/$(1)/%.c,$(BUILD)/tests/unit/$(1)/%,$$($(1)_UNIT_SRCS))
$(BUILD)/tests/unit/$(1)/%: $(OBJ)/tests/unit/$(1)/%.o $$($(1)_LIB_OBJS) $(CONTRACT_OBJS) $(RUNNER_ROOT_OBJ)
	@mkdir -p $$(dir $$@)
	@echo "  LD      $$@"
	@$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(CHECK_LIBS) $$($(1)_LDLIBS)
endef
$(foreach a,$(UNIT_AREAS),$(eval $(call kb_unit_area,$(a))))
UNIT_BINS = $(foreach a,$(UNIT_AREAS),$($(a)_UNIT_BINS))

RESULTS ?= $(abspath $(BUILD)/test-results)
.PHONY: unit-run test-unit test-asan
unit-run: $(UNIT_BINS)
	@mkdir -p $(RESULTS); st=0; for t in $(UNIT_BINS); do \
	   KB_TEST_RESULTS=$(RESULTS) KB_TEST_SUFFIX=$(SUFFIX) $$t || st=1; done; exit $$st
test-unit:
	@$(MAKE) --no-print-directory unit-run RESULTS=$(abspath $(BUILD)/test-results)
# The same suites under ASan+UBSan; any report fails the test (halt_on_error).
test-asan:
	@ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	 $(MAKE) $(call san_flags,asan) unit-run RESULTS=$(abspath $(BUILD)/test-results) SUFFIX=-asan
TESTS += test-unit test-asan
