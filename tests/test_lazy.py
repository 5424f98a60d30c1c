"""One helper for lazy singletons: built once whoever asks first, a failed build tried again."""

from __future__ import annotations

import threading

import pytest

from webapp.lazy import once
from webapp.tools.web_index import default_index


def test_many_threads_asking_at_once_share_one_build() -> None:
    builds: list[int] = []
    started = threading.Barrier(8)

    def build() -> object:
        builds.append(1)
        return object()

    shared = once(build)
    seen: list[object] = []

    def ask() -> None:
        started.wait()
        seen.append(shared())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert len({id(value) for value in seen}) == 1


def test_a_build_that_fails_is_tried_again() -> None:
    tries: list[int] = []

    def build() -> int:
        tries.append(1)
        if len(tries) == 1:
            raise OSError("not yet")
        return 7

    shared = once(build)
    with pytest.raises(OSError):
        shared()
    assert shared() == 7
    assert shared() == 7
    assert len(tries) == 2


def test_the_web_index_is_one_shared_instance() -> None:
    assert default_index() is default_index()
    assert default_index.__doc__ and "shared" in default_index.__doc__
