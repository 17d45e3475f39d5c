# tests/e2e/fulldisk: the harness's own full disk is never the server's failure (issue 38):
# `load` exits 6 when an output cannot be written, and `curve` leaves such a point incomplete
# (no DONE, an incomplete.json, exit 1), redone once there is room. A small tmpfs mounted and
# unmounted by the suite; needs root (mount, the cgroup sandbox) and skips otherwise. About
# 15 seconds.
.PHONY: test-fulldisk
test-fulldisk: all
	@$(KB_PY) tests/e2e/fulldisk/test_fulldisk.py
TESTS += test-fulldisk
