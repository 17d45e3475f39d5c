# tests/e2e/soak: kneebench soak for a few seconds per phase (low rates) in the real sandbox,
# the db phase against its own throwaway PostgreSQL cluster. The slope fit and growth rule
# on synthetic series are the unit test tests/unit/runner/run/test_soak.c (test-unit).
.PHONY: test-soak
test-soak: $(BUILD)/kneebench $(BUILD)/gray-static
	@$(KB_PY) tests/e2e/soak/test_soak.py
TESTS += test-soak
