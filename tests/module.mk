# tests/: every area adds its suites in tests/<area>/module.mk, appending targets to TESTS.
include $(wildcard tests/*/module.mk tests/e2e/*/module.mk)
