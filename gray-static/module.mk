# gray-static/: the C fixture. Every gray-static/*.c but main.c is library code that the unit
# tests in tests/unit/gray-static/ link (the db route's modules join by being here).
GRAY_SRCS := $(wildcard gray-static/*.c)
gray-static_LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(filter-out gray-static/main.c,$(GRAY_SRCS)))
# libpq is not linked: pqdl.c loads it when --db asks for it (LOOP.md, "libpq on demand").
gray-static_LDLIBS := $(LIBS_libmicrohttpd) $(LIBS_jansson) -lpthread

$(BUILD)/gray-static: $(OBJ)/gray-static/main.o $(gray-static_LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(gray-static_LDLIBS)
PROGRAMS += $(BUILD)/gray-static
