"""Waiting for something another process or thread does: one poll loop for every test.

The bound only stops a test whose awaited event never comes; it is generous, so that a busy
machine is slow but never fails a test (how fast anything happens is measured in
benchmarks/, not asserted here).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Long enough for a machine loaded many times over; short enough that a hung test ends.
PATIENCE = 120.0


def eventually(check: Callable[[], object], seconds: float = PATIENCE, every: float = 0.05) -> bool:
    """Poll `check` until it is truthy; say whether it became so within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(every)
    return bool(check())


def wait_for(
    check: Callable[[], T | None], what: str = "gave up waiting", seconds: float = PATIENCE
) -> T:
    """Poll `check` until it returns something truthy, and return that; fail with `what`."""
    found: list[T] = []

    def look() -> bool:
        result = check()
        if result:
            found.append(result)
        return bool(result)

    if not eventually(look, seconds):
        raise AssertionError(what)
    return found[-1]
