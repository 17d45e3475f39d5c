# tests/e2e/knee/: `kneebench knee` end to end against limiter.go, a server whose knee is
# known (503 above --limit req/s): the knee found below the limit and within the
# resolution, the search ending on --max-rate against one that never refuses, an
# interrupted search resumed from its kept samples, the report agreeing with the answer,
# and bad arguments refused before any load. Short samples at a few thousand req/s on
# loopback: about two minutes.
$(BUILD)/tests/knee-limiter: tests/e2e/knee/limiter.go
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	@cd tests/e2e/knee && CGO_ENABLED=0 $(GO) build -trimpath -o $(abspath $@) limiter.go

.PHONY: test-knee
test-knee: $(BUILD)/kneebench $(BUILD)/tests/knee-limiter
	@$(KB_PY) tests/e2e/knee/test_knee.py
TESTS += test-knee
