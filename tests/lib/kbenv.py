"""kbenv -- where every Python suite stands, said once: the tree, the build it tests, the
contract, and the skip for a program that is not built.

KB_BUILD names the build directory (default ROOT/build; tests/lib/module.mk sets it for every
make target, with KB_TEST_RESULTS); the ASan+UBSan build is its asan/ subdirectory, where
make puts it. tests/lib/py puts this directory on the import path: run a suite by hand as
`tests/lib/py tests/e2e/cli/test_cli.py [TEST...]`, with KB_BUILD=DIR for another build.
"""
import json
import os

from kbtest import skip

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.path.abspath(os.environ.get("KB_BUILD") or os.path.join(ROOT, "build"))
ASAN_BUILD = os.path.join(BUILD, "asan")
KB = os.path.join(BUILD, "kneebench")
CONTRACT_PATH = os.path.join(ROOT, "contract", "contract.json")
with open(CONTRACT_PATH) as _f:
    CONTRACT = json.load(_f)
# The runtimes a curve runs when none is named (run/curve/matrix.c): a variant such as
# gray-static-blocking is another start of one of them, run only where named.
COMPARISON_RUNTIMES = [rt["name"] for rt in CONTRACT["runtimes"] if not rt.get("variant_of")]


def here(file):
    """The directory of a suite's own file (pass __file__), where its helpers lie."""
    return os.path.dirname(os.path.abspath(file))


def need(*paths):
    """Skip the test, naming the first of paths that is not an executable built here."""
    for p in paths:
        if not os.access(p, os.X_OK):
            skip(f"{p} is not built")
