# tests/e2e/mhd1/: gray-static on libmicrohttpd 1.0 (the Docker image's Ubuntu 24.04 ships
# 1.0.0; this host only 0.9.75). run.sh builds it in a Debian 13 container (1.0.1), normal and
# ASan+UBSan, and runs its unit tests, the conformance suite for gray-static and probe.py
# there; the counts are recorded as mhd1-*. Skips with the reason where no Docker engine
# answers. KB_MHD1_BASE=kneebench-base:noble runs the same on Ubuntu 24.04's 1.0.0.
.PHONY: test-mhd1
test-mhd1:
	@KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) tests/e2e/mhd1/run.sh
TESTS += test-mhd1
