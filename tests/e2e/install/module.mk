# tests/e2e/install/: `make install` into a scratch PREFIX, then the installed kneebench, run
# from / with no tree anywhere it looks, loads the installed kb-control on a free loopback
# port for a second at a low rate and writes its JSON; --version names the installed
# contract; what runs fixtures is still refused without a tree; `make uninstall` takes the
# contract away again. A few seconds.
.PHONY: test-install
test-install: $(BUILD)/kneebench $(BUILD)/kb-control
	@$(KB_PY) tests/e2e/install/test_install.py
TESTS += test-install
