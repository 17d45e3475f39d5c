# tests/e2e/relocate/: the built tree copied elsewhere runs a one-point `kneebench curve` and
# `kneebench report` with the original checkout hidden (unshare -m and an empty tmpfs over
# it), and nothing in the run names the original; the tree found beside the executable, by
# --root and by $KB_ROOT, and a clear refusal where there is none.
.PHONY: test-relocate
test-relocate: $(BUILD)/kneebench $(BUILD)/gray-static
	@$(KB_PY) tests/e2e/relocate/test_relocate.py
TESTS += test-relocate
