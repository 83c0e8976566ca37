"""Waiting for what another process or thread does."""

import time


def wait_until(condition, timeout: float = 20.0, interval: float = 0.1):
    """Poll ``condition`` until it returns something truthy, and return that; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = condition()
        if outcome:
            return outcome
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")
