# tests/e2e/runtime5: a fifth runtime added the way docs/adding-a-runtime.md says -- its
# folder (pyhttp/: the contract's plaintext and json routes from Python's standard library)
# and one entry in a copy of the contract, nothing in runner/, the report code or docker/ --
# checked by the build, in the generated completion, README table and image plan, through
# the conformance suite, and on a two-rate curve (1 s points) whose report must hold it.
# The cgroup sandbox where root has it, else --no-limits. About a minute.
.PHONY: test-runtime5
test-runtime5: $(BUILD)/kneebench
	@$(KB_PY) tests/e2e/runtime5/test_runtime5.py
TESTS += test-runtime5
