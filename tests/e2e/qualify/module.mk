# tests/e2e/qualify: kneebench qualify end to end, shortened (5 s at a rate this host holds),
# in the real sandbox against its own throwaway PostgreSQL cluster. The rules on synthetic
# evidence are the unit tests tests/unit/runner/run/test_qualify.c and
# tests/unit/runner/report/test_report_qualify.c (test-unit).
.PHONY: test-qualify
test-qualify: $(BUILD)/kneebench $(BUILD)/gray-static
	@$(KB_PY) tests/e2e/qualify/test_qualify.py
TESTS += test-qualify
