"""Reads in flight shared (webapp/chat/flights.py): one read for the streams opened together."""

from __future__ import annotations

import threading
import time

import pytest

from tests.support.clock import Clock
from tests.support.waiting import wait_for
from webapp.chat.flights import Flights


def test_a_read_asked_while_its_twin_runs_shares_the_twins_result() -> None:
    flights: Flights[list[int]] = Flights()
    release, runs, got = threading.Event(), [], []

    def read() -> list[int]:
        runs.append(1)
        release.wait(10)
        return [len(runs)]

    first = threading.Thread(target=lambda: got.append(flights.read("k", read)))
    first.start()
    wait_for(lambda: runs)
    others = [
        threading.Thread(target=lambda: got.append(flights.read("k", read))) for _ in range(2)
    ]
    for thread in others:
        thread.start()
    wait_for(lambda: flights.sharing("k") == 2)
    release.set()
    for thread in [first, *others]:
        thread.join(10)
    assert runs == [1] and got == [[1], [1], [1]]


def test_a_read_begun_before_the_caller_began_listening_is_not_shared() -> None:
    flights: Flights[int] = Flights()
    release, runs = threading.Event(), []

    def read() -> int:
        runs.append(1)
        release.wait(10)
        return len(runs)

    first = threading.Thread(target=lambda: flights.read("k", read))
    first.start()
    wait_for(lambda: runs)
    listening = time.monotonic()  # after the first read began: it may miss what came since
    release.set()
    assert flights.read("k", read, not_before=listening) == 2
    first.join(10)
    assert runs == [1, 1]


def test_a_failed_read_fails_those_that_shared_it_and_is_not_kept() -> None:
    flights: Flights[int] = Flights()
    release, errors = threading.Event(), []

    def read() -> int:
        release.wait(10)
        raise RuntimeError("the database went away")

    def ask() -> None:
        try:
            flights.read("k", read)
        except RuntimeError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    wait_for(lambda: flights.sharing("k") == 1)
    release.set()
    for thread in threads:
        thread.join(10)
    assert errors == ["the database went away"] * 2
    with pytest.raises(RuntimeError):
        flights.read("k", read)  # tried afresh, not answered from the failure


def test_a_read_that_found_something_is_kept_a_moment_for_callers_after_its_start() -> None:
    clock = Clock()
    flights: Flights[list[int] | None] = Flights(kept_seconds=2, timer=clock)
    runs: list[int] = []

    def read() -> list[int]:
        runs.append(1)
        return [len(runs)]

    before = time.monotonic()
    assert flights.read("k", read, group="g") == [1]
    assert flights.read("k", read, before, group="g") == [1]  # it began after `before`
    assert runs == [1]
    assert flights.read("k", read, time.monotonic(), group="g") == [2]  # news since it began
    clock.now = 3
    assert flights.read("k", read, group="g") == [3]  # kept two seconds only
    assert flights.read("none", lambda: None, group="g") is None
    assert flights.read("none", lambda: [9], group="g") == [9]  # it found nothing: not kept
    assert flights.read("lone", lambda: [1]) == [1]
    assert flights.read("lone", lambda: [2]) == [2]  # no group to drop it by: not kept


def test_news_of_a_group_drops_its_kept_reads_and_keeps_none_then_running() -> None:
    flights: Flights[list[int]] = Flights()
    assert flights.read("a1", lambda: [1], group="a") == [1]
    assert flights.read("b1", lambda: [1], group="b") == [1]
    flights.forget("a")
    assert flights.read("a1", lambda: [2], group="a") == [2]  # read again
    assert flights.read("b1", lambda: [2], group="b") == [1]  # another answer's, kept
    release, began = threading.Event(), threading.Event()

    def slow() -> list[int]:
        began.set()
        release.wait(10)
        return [3]

    reader = threading.Thread(target=lambda: flights.read("c1", slow, group="c"))
    reader.start()
    wait_for(began.is_set)
    flights.forget("c")  # news while it ran: what it read may lack that write
    release.set()
    reader.join(10)
    assert flights.read("c1", lambda: [4], group="c") == [4]
    flights.forget_all()
    assert flights.read("b1", lambda: [5], group="b") == [5]
