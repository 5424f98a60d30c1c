"""Run a call that blocks in C on a real OS thread when the process runs under gevent.

gunicorn's gevent worker makes sockets, sleeps, locks and subprocess waits cooperative, but
a call into SQLite's C library holds the worker's one event loop until it returns: the
model's query may run up to its deadline. Such calls go to gevent's thread pool, and the
greenlet waits for the result cooperatively. Without gevent the call simply runs here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def under_gevent() -> bool:
    """Tell whether gevent has patched this process's threading (its worker does)."""
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey is not None and monkey.is_module_patched("threading"))


def offload(call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Return `call(*args, **kwargs)`, run on a real thread when under gevent."""
    if not under_gevent():
        return call(*args, **kwargs)
    import gevent

    result: R = gevent.get_hub().threadpool.apply(call, args, kwargs)
    return result


def open_pipe(fd: int, mode: str) -> IO[bytes]:
    """Open a pipe's file descriptor for binary reading or writing, cooperatively under gevent.

    A plain file object on a pipe blocks the whole event loop while it waits for the other
    end; gevent's FileObjectPosix waits on the loop instead.
    """
    if not under_gevent():
        return os.fdopen(fd, mode)
    from gevent.fileobject import FileObjectPosix

    pipe: IO[bytes] = FileObjectPosix(fd, mode)
    return pipe
