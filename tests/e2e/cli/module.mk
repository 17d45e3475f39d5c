# tests/e2e/cli/: the command line as a user meets it -- --version, the wrk2-style `load`
# against kb-control (2 s, low rate), bad values refused with exit 2, the man page showing
# every command (skips without man or help2man), the bash completion, `make install` into a
# scratch PREFIX and `make help`, and `kneebench compare` on two synthetic runs where one
# runtime was made slower on purpose; and the suites' runner cutting a hung test short.
.PHONY: test-cli
test-cli: $(BUILD)/kneebench $(BUILD)/kb-control $(if $(HELP2MAN),$(BUILD)/kneebench.1)
	@$(KB_PY) tests/e2e/cli/test_cli.py
	@$(KB_PY) tests/e2e/cli/test_kbtest.py
TESTS += test-cli
