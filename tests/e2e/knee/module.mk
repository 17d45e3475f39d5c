# tests/e2e/knee/: `kneebench knee` end to end against limiter.go, a server whose knee is
# known (503 above --limit req/s): the knee found below the limit and within the
# resolution, the search ending on --max-rate against one that never refuses, an
# interrupted search resumed from its kept samples, the report agreeing with the answer,
# and bad arguments refused before any load. Short samples at a few thousand req/s on
# loopback: about two minutes. Then test_nginx.py: the knee of nginx from Debian, its held
# end's hold sample held (5 s here), three times its missed end not held: about two more.
# Then test_newcomer.py: Python's http.server as a newcomer's own server (a 404 and a closed
# port stopped by the trial requests, its closes measured by reconnecting, its PID found by
# its port, --pid with several PIDs): about a minute.
$(BUILD)/tests/knee-limiter: tests/e2e/knee/limiter.go
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	@cd tests/e2e/knee && CGO_ENABLED=0 $(GO) build -trimpath -o $(abspath $@) limiter.go

.PHONY: test-knee
test-knee: $(BUILD)/kneebench $(BUILD)/tests/knee-limiter
	@$(KB_PY) tests/e2e/knee/test_knee.py; a=$$?; \
	 $(KB_PY) tests/e2e/knee/test_newcomer.py || a=1; \
	 $(KB_PY) tests/e2e/knee/test_nginx.py && exit $$a
TESTS += test-knee

# The knee of nginx from Debian (gzip level 9, one worker on CPU 0) at full scale: a 30 s
# hold, then three rounds of the held end and 1.1 x the missed end as 30 s points, then 0.5,
# 0.8, 0.9 and 1.0 of the knee loaded by both dispatch models and by wrk2, and the same rates
# against kb-control, the clients' own floor (WRK2=/path/to/wrk; without it, the first part
# only). About 17 minutes with wrk2.
.PHONY: bench-knee-nginx
bench-knee-nginx: $(BUILD)/kneebench $(BUILD)/kb-control
	@$(KB_PY) tests/e2e/knee/nginx_knee.py --checks 3 $(if $(WRK2),--wrk2 $(WRK2) --floor)
