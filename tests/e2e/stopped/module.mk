# tests/e2e/stopped: a client stopped (SIGSTOP) through a short measured interval is the
# client's delay -- `load` warns and exits 5, `knee` and `curve` retake the sample as
# client-limited -- while a server stopped the same way stays uncontrolled (issue 38). The
# curve tests need root for the cgroup sandbox and skip otherwise. About a minute.
.PHONY: test-stopped
test-stopped: all
	@$(KB_PY) tests/e2e/stopped/test_stopped.py
TESTS += test-stopped
