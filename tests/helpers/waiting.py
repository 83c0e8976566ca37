"""Waiting for what another process or thread does."""

import time


def wait_until(condition, timeout: float = 60.0, interval: float = 0.1):
    """Poll ``condition`` until it returns something truthy, and return that; fail after ``timeout``.

    The default is a bound for a test that would otherwise hang, not a speed to keep: a Celery worker and beat started
    on a machine running the whole suite took over 20 s to make their first sync (the benches measure speed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = condition()
        if outcome:
            return outcome
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")
