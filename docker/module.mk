# docker/: the digest-pinned image with every runtime, its local base, and their tests.
#
#   make base-image                 Debian 12 base by debootstrap from this host's apt mirror,
#                                   imported as $(DOCKER_LOCAL_BASE) (skipped when it exists)
#   make image [BASE_IMAGE=...]     the image, tagged $(DOCKER_IMAGE); default base: the pinned
#                                   Ubuntu 24.04 (needs a registry); here use
#                                   BASE_IMAGE=$(DOCKER_LOCAL_BASE). Skipped when up to date.
#   make image-auto                 the pinned base when it is local or can be pulled, else
#                                   base-image + the local base (said plainly); what
#                                   `make curve BACKEND=docker` should depend on
#   make pin-base                   re-resolve ubuntu:24.04's digest and rewrite the pin
#   make test-docker                build base + image, conformance and limits per container,
#                                   a small docker-backend curve; skips where no engine answers
DOCKER_PINNED_BASE := $(shell sed -n 's/^ARG BASE_IMAGE=//p' docker/Dockerfile)
BASE_IMAGE         ?= $(DOCKER_PINNED_BASE)
DOCKER_LOCAL_BASE  ?= kneebench-base:bookworm
DOCKER_IMAGE       ?= kneebench:latest

.PHONY: base-image image image-auto pin-base test-docker
base-image:
	@docker/base-image.sh $(DOCKER_LOCAL_BASE)

image:
	@docker/build-image.sh --base '$(BASE_IMAGE)' --tag '$(DOCKER_IMAGE)'

image-auto:
	@if docker image inspect '$(DOCKER_PINNED_BASE)' >/dev/null 2>&1 || \
	    timeout 120 docker pull -q '$(DOCKER_PINNED_BASE)' >/dev/null 2>&1; then \
	   base='$(DOCKER_PINNED_BASE)'; \
	 else \
	   echo "image: the pinned base $(DOCKER_PINNED_BASE) is neither local nor pullable;"; \
	   echo "image: building on the local base $(DOCKER_LOCAL_BASE) instead (the run's identity says so)"; \
	   docker/base-image.sh '$(DOCKER_LOCAL_BASE)' || exit 1; base='$(DOCKER_LOCAL_BASE)'; \
	 fi; docker/build-image.sh --base "$$base" --tag '$(DOCKER_IMAGE)'

pin-base:
	@docker/pin-base.sh

# The probe drives runner/sandbox/sandbox_docker.c directly (start, limits read back, pids, stop), so
# the backend is tested even before the curve can use it.
$(BUILD)/tests/e2e/docker/sandbox-probe: $(OBJ)/tests/e2e/docker/sandbox_probe.o $(runner_LIB_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(runner_LDLIBS)

test-docker: $(BUILD)/kneebench $(BUILD)/tests/e2e/docker/sandbox-probe
	@$(KB_PY_ENV) \
	 KB_DOCKER_LOCAL_BASE='$(DOCKER_LOCAL_BASE)' KB_DOCKER_PINNED_BASE='$(DOCKER_PINNED_BASE)' \
	 tests/lib/py tests/e2e/docker/test_docker.py
TESTS += test-docker

# The docker backend on another host's engine over SSH: a second dockerd and an sshd in a
# network namespace the suite makes; it uses the image test-docker built, so it runs after.
.PHONY: test-dockerhost
test-dockerhost: $(BUILD)/kneebench
	@$(KB_PY_ENV) tests/lib/py tests/e2e/dockerhost/test_dockerhost.py
TESTS += test-dockerhost
