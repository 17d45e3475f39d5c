# runner/curve.mk: `make curve` -- build everything, run the comparison, write the report.
#
#   make curve                          paper profile (30 s points), native cgroup sandbox
#   make curve PROFILE=quick            a few seconds a point: all 56 points in minutes
#   make curve BACKEND=docker           fixtures in the image (built first by `make image-auto`)
#   make curve RUN=runs/mine            resume (or start) that run directory
#   make curve CALIBRATE=strict         refuse to run when the client cannot prove its margin
#   make curve REFINE=1                 bisect each cell's knee to 5 % after the grid (REFINE=2: 2 %)
#   make curve ARGS="--runtimes go,gray-static --repeats 3"   anything `kneebench curve` takes
#
# The curve's exit status 1 (some evidence could not be written) still gets a report, which
# then names what is missing; any other failure (bad options, no cgroups) stops here.
# Installs missing packages and builds `all` first (not $(PROGRAMS): modules included after
# this one add programs later), so it works on a fresh machine.
PROFILE ?= paper
BACKEND ?= native
ARGS    ?=
# The client proves its margin first (kneebench calibrate, into RUN/calibrate): with `force`
# the run goes on and points above the proven margin are marked client-limited; `strict`
# refuses to run without the margin; `off` skips the proof.
CALIBRATE ?= force
CALIBRATE_ARGS := $(if $(filter force,$(CALIBRATE)),--calibrate --force,$(if $(filter strict,$(CALIBRATE)),--calibrate))
# REFINE: --refine=PCT, each cell's knee bisected between its grid rates to PCT % (1: 5 %).
REFINE ?=
REFINE_ARGS := $(if $(filter-out 0,$(REFINE)),--refine$(if $(filter 1,$(REFINE)),,=$(REFINE)))
ifeq ($(RUN),)
RUN := runs/$(PROFILE)-$(shell date -u +%Y%m%dT%H%M%SZ)
endif

.PHONY: curve
curve:
	@tests/lib/deps.sh
	@$(MAKE) --no-print-directory all
	@if [ "$(BACKEND)" = docker ]; then $(MAKE) --no-print-directory image-auto; fi
	@echo "kneebench: curve into $(RUN) (PROFILE=$(PROFILE) BACKEND=$(BACKEND))"
	@$(BUILD)/kneebench curve --run $(RUN) --profile $(PROFILE) --backend $(BACKEND) \
	   $(if $(filter docker,$(BACKEND)),--image $(DOCKER_IMAGE)) \
	   --build $(abspath $(BUILD)) $(CALIBRATE_ARGS) $(REFINE_ARGS) $(ARGS); st=$$?; \
	 if [ $$st -gt 1 ]; then exit $$st; fi; \
	 $(BUILD)/kneebench report $(RUN) && echo "kneebench: report in $(RUN)/report.md"
