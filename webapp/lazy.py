"""A value built on first use and then shared by the whole process: one helper for each of
the app's lazy singletons (the bundled web index, the offline engine's library)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["once"]

T = TypeVar("T")


def once(build: Callable[[], T]) -> Callable[[], T]:
    """Return a function that builds its value the first time it is called, then returns it.

    Callers that arrive while the first build runs wait for it (one build per process, even
    under gevent, whose patched lock this is); a build that raises is tried again next time.
    """
    lock = threading.Lock()
    built: list[T] = []

    @functools.wraps(build)
    def shared() -> T:
        if built:
            return built[0]
        with lock:
            if not built:
                built.append(build())
            return built[0]

    return shared
