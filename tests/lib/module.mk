# tests/lib/: what every suite runs with, set here once. A recipe runs a Python suite as
#     @$(KB_PY) tests/e2e/AREA/test_x.py
# which names the build it tests (KB_BUILD, read by tests/lib/kbenv.py), where its counts go
# for `make test`'s summary (KB_TEST_RESULTS), and puts tests/lib on the import path
# (tests/lib/py). A suite of another build (a sanitizer's) overrides the one variable:
#     @$(KB_PY_ENV) KB_BUILD=$(abspath $(call san_build,thread)) tests/lib/py tests/...
KB_PY_ENV = KB_TEST_RESULTS=$(abspath $(BUILD)/test-results) KB_BUILD=$(abspath $(BUILD))
KB_PY = $(KB_PY_ENV) tests/lib/py
