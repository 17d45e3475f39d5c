# tests/e2e/charts/: `kneebench report` on synthetic runs laid out as real ones, every chart
# rendered to PNG by rsvg-convert (librsvg2-bin, installed by make deps) and checked from
# its structure and its pixels: verdict markers and trust, bound markers, the delivery band,
# the drain, a <title> on every mark, escaped names, and every runtime's series visible
# when their figures are identical. No server, no load: a few seconds.
.PHONY: test-charts
test-charts: $(BUILD)/kneebench
	@$(KB_PY) tests/e2e/charts/test_charts.py
TESTS += test-charts
# test_html.py: report.html opened in headless Chromium (chromium, installed by make deps)
# over the DevTools protocol on a pipe: no console error, no request but the page, the
# answer table equal to report.json's, every chart with a size, each runtime's colour on
# screen, the readout following the pointer. A synthetic run: a few seconds.
.PHONY: test-html
test-html: $(BUILD)/kneebench
	@$(KB_PY) tests/e2e/charts/test_html.py
TESTS += test-html
