# runner/soak.mk: `make soak` -- the one-hour qualification (kneebench soak) into a run directory.
#
#   make soak                           the contract's phases, one hour each (about 3 h 15 min)
#   make soak DURATION=60               every phase 60 s instead (warmup/settle/sampling as contracted)
#   make soak SOAK_RUN=runs/soak-mine   resume (or start) that run directory
#   make soak SOAK_ARGS="--phases db --rates 8000"   anything `kneebench soak` takes
#
# Exit 0 when every phase passed; the report is SOAK_RUN/report.md either way.
BACKEND   ?= native
DURATION  ?=
SOAK_ARGS ?=
ifeq ($(SOAK_RUN),)
SOAK_RUN := runs/soak-$(shell date -u +%Y%m%dT%H%M%SZ)
endif

.PHONY: soak
soak:
	@tests/lib/deps.sh
	@$(MAKE) --no-print-directory all
	@echo "kneebench: soak into $(SOAK_RUN) (BACKEND=$(BACKEND)$(if $(DURATION), DURATION=$(DURATION)))"
	@$(BUILD)/kneebench soak --out $(SOAK_RUN) --backend $(BACKEND) --build $(abspath $(BUILD)) \
	   $(if $(DURATION),--duration $(DURATION)) $(SOAK_ARGS)
