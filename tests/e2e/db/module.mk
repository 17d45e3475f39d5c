# tests/e2e/db/: the PostgreSQL route (issue 6) against a real throwaway cluster. test-db
# builds the pool's Check suite (linked with libpq for its own checks of the results; the pool
# itself loads libpq as gray-static does) and gray-static, normal and ASan+UBSan, then run.sh starts
# the cluster, runs all four and stops it.
DB_POOL_OBJS := $(OBJ)/gray-static/pgpool.o $(OBJ)/gray-static/pqdl.o $(OBJ)/gray-static/stats.o \
                $(OBJ)/gray-static/loop.o

$(BUILD)/tests/e2e/db/test_pgpool: $(OBJ)/tests/e2e/db/test_pgpool.o $(DB_POOL_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(gray-static_LDLIBS) $(LIBS_libpq)

.PHONY: test-db
test-db:
	@$(MAKE) --no-print-directory $(BUILD)/tests/e2e/db/test_pgpool $(BUILD)/gray-static
	@$(MAKE) $(call san_flags,asan) $(call san_build,asan)/tests/e2e/db/test_pgpool \
	 $(call san_build,asan)/gray-static
	@$(KB_PY_ENV) tests/e2e/db/run.sh $(abspath $(BUILD))
TESTS += test-db

# `kneebench curve --profile db-readiness` shortened (2 rates, 2 s points; then one rate with
# --db-cpus), PostgreSQL's pinning read from /proc while it runs, its placement record and its
# report checked (tests/e2e/db/test_readiness.py). Needs root and PostgreSQL; skips otherwise.
.PHONY: test-db-curve
test-db-curve: $(BUILD)/kneebench $(BUILD)/gray-static
	@$(KB_PY) tests/e2e/db/test_readiness.py
TESTS += test-db-curve
