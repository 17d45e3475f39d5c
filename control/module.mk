# control/: build/kb-control, the known-fast control server; and `make bench-loadgen`.
CONTROL_SRCS := $(wildcard control/*.c)
# --cpus is parsed by the runner's one CPU list parser
control_LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(filter-out control/main.c,$(CONTROL_SRCS))) $(CONTRACT_OBJS) \
                    $(OBJ)/runner/util/cpulist.o
# the contract (jansson); the tree is found by runner/util/root.o when --contract is not given
control_LDLIBS := $(LIBS_jansson)

# root.o named here, not through runner/module.mk: the image builds kb-control (the host's
# floor) from control/ and these two runner files alone (docker/build-image.sh)
$(BUILD)/kb-control: $(OBJ)/control/main.o $(control_LIB_OBJS) $(OBJ)/runner/util/root.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(control_LDLIBS)
PROGRAMS += $(BUILD)/kb-control

# A measurement, not a test: prints figures (server on CPU 0, client on CPU 1).
.PHONY: bench-loadgen
bench-loadgen: $(BUILD)/kneebench $(BUILD)/kb-control
	@python3 control/bench_loadgen.py $(BUILD)

# A measurement, not a test: each fixture's and kb-control's CPU per response at fixed rates,
# one interleaved curve in the contract's sandbox (control/bench_fixtures.py says what it prints).
.PHONY: bench-fixtures
bench-fixtures: $(BUILD)/kneebench $(BUILD)/kb-control $(BUILD)/gray-static $(BUILD)/go-server
	@python3 control/bench_fixtures.py $(BUILD)
