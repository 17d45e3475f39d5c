"""test_kbtest -- the suites' own runner (tests/lib/kbtest.py) bounds every test: a test
that hangs past its limit fails with its name, the tests after it still run, and a test's
own catch-all cannot swallow the limit. Runs a scratch suite in a child, in seconds."""
import os
import subprocess
import sys
import tempfile
import time

from kbenv import ROOT
from kbtest import exit_with, test

SUITE = '''
import subprocess
from kbtest import exit_with, test, timeout

@test
def hangs():
    subprocess.run(["sleep", "60"])

@test
@timeout(1)
def hangs_and_swallows():
    try:
        subprocess.run(["sleep", "60"])
    except Exception:
        pass

@test
def runs_after():
    pass

exit_with("scratch")
'''


@test
def a_hung_test_fails_by_name_and_the_suite_goes_on():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "test_scratch.py")
        with open(path, "w") as f:
            f.write(SUITE)
        env = dict(os.environ, KB_TEST_TIMEOUT="1")
        env.pop("KB_TEST_RESULTS", None)
        t0 = time.monotonic()
        p = subprocess.run([os.path.join(ROOT, "tests", "lib", "py"), path], env=env,
                           capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    assert "FAIL hangs: timed out after 1s" in out, out
    assert "FAIL hangs_and_swallows: timed out after 1s" in out, out
    assert "ok   runs_after" in out, out
    assert "scratch: 1 passed, 2 failed, 0 skipped" in out, out
    assert took < 30, f"the hung tests were not cut short ({took:.0f} s)"


if __name__ == "__main__":
    exit_with("kbtest", sys.argv[1:])
