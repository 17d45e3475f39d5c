# go/: the "go" fixture (net/http, standard library only), built with the go tool.
GO         ?= go
GO_SRCS    := go/go.mod $(wildcard go/*.go)

$(BUILD)/go-server: $(GO_SRCS)
	@mkdir -p $(dir $@)
	@echo "  GO      $@"
	@cd go && CGO_ENABLED=0 $(GO) build -trimpath -o $(abspath $@) .
PROGRAMS += $(BUILD)/go-server
