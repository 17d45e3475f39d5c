# tests/link/: each program records as NEEDED (readelf -d) only the libraries it uses: kneebench
# neither libmicrohttpd nor libpq (the MHD version a run records is the fixture's own),
# kb-control jansson alone of the three, gray-static libmicrohttpd and jansson (libpq it loads
# at run time, for --db only).
.PHONY: test-link
test-link: $(BUILD)/kneebench $(BUILD)/kb-control $(BUILD)/gray-static
	@KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) tests/link/check_needed.sh $(abspath $(BUILD))
TESTS += test-link
