"""kbtest -- a tiny test runner for the suite's Python tests (stdlib only).

Tests register with @test; skip() raises Skip with a reason that is printed, never counted
as passed. run() prints one line per test and the closing "N passed, N failed, N skipped",
and records the counts under $KB_TEST_RESULTS/<name> for `make test`'s summary.

Every test has a time limit: TIMEOUT_S ($KB_TEST_TIMEOUT, else 15 minutes), or its own with
@timeout(seconds) beside @test. A test past it fails with its name and the suite goes on.
"""
import os
import signal
import sys
import time
import traceback

_tests = []
TIMEOUT_S = float(os.environ.get("KB_TEST_TIMEOUT") or 900)


class TimedOut(BaseException):
    """Past the test's limit. A BaseException, so a test's own `except Exception` cannot
    swallow it; its finally blocks and context managers still clean up on the way out."""


def _alarm(signum, frame):
    raise TimedOut()


def timeout(seconds):
    """@timeout(s) above @test: this test's own limit instead of TIMEOUT_S."""
    def mark(fn):
        fn.kb_timeout = seconds
        return fn
    return mark


class Skip(Exception):
    pass


def skip(reason):
    raise Skip(reason)


def test(fn):
    _tests.append(fn)
    return fn


def run(name, only=None):
    passed = failed = skipped = 0
    for fn in _tests:
        if only and not any(o in fn.__name__ for o in only):
            continue
        t0 = time.monotonic()
        limit = getattr(fn, "kb_timeout", TIMEOUT_S)
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            try:
                fn()
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
        except TimedOut:
            failed += 1
            print(f"FAIL {fn.__name__}: timed out after {limit:.0f}s (kbtest's limit)",
                  flush=True)
            continue
        except Skip as e:
            skipped += 1
            print(f"SKIP {fn.__name__}: {e}", flush=True)
            continue
        except Exception:
            failed += 1
            print(f"FAIL {fn.__name__} ({time.monotonic() - t0:.1f}s)", flush=True)
            traceback.print_exc()
            continue
        passed += 1
        print(f"ok   {fn.__name__} ({time.monotonic() - t0:.1f}s)", flush=True)
    print(f"{name}: {passed} passed, {failed} failed, {skipped} skipped")
    d = os.environ.get("KB_TEST_RESULTS")
    if d:
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), "w") as f:
            f.write(f"{passed} {failed} {skipped}\n")
    return 1 if failed or passed + skipped == 0 else 0


def exit_with(name, only=None):
    sys.exit(run(name, only))
