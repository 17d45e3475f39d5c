# runner/: build/kneebench. Every runner/*.c but main.c is library code the unit tests link.
RUNNER_SRCS := $(wildcard runner/*.c)
runner_LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(filter-out runner/main.c,$(RUNNER_SRCS))) $(FIXTURE_OBJS)
runner_LDLIBS := -lcrypto -lz

$(BUILD)/kneebench: $(OBJ)/runner/main.o $(runner_LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS_ALL) $(runner_LDLIBS)
PROGRAMS += $(BUILD)/kneebench
-include runner/curve.mk
-include runner/soak.mk
