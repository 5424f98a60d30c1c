"""Reads in flight shared (webapp/chat/flights.py): one read for the streams opened together."""

from __future__ import annotations

import threading
import time

import pytest

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
