"""Sign-in throttling's counts: per username and per address, a sliding window, shared storage
(the database on SQLite and PostgreSQL, or Redis), and no more checked guesses than the limit."""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.throttle import (
    DatabaseFailureLog,
    FailureLog,
    RedisFailureLog,
    SignInThrottle,
    retry_after,
    sign_in_failures,
)

REDIS_URL = "redis://127.0.0.1:6379/0"
START = 1_700_000_000.0


def redis_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _database_log(url: str) -> Iterator[DatabaseFailureLog]:
    engine = create_store_engine(url)
    upgrade_database(engine)
    with engine.begin() as connection:  # a module-wide PostgreSQL database: start empty
        connection.execute(sign_in_failures.delete())
    yield DatabaseFailureLog(engine)
    engine.dispose()


@pytest.fixture
def sqlite_log(tmp_path: Path) -> Iterator[DatabaseFailureLog]:
    """Return a failure log on a fresh SQLite file."""
    yield from _database_log(f"sqlite:///{tmp_path / 'throttle.sqlite'}")


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param(
            "redis",
            marks=pytest.mark.skipif(not redis_reachable(), reason="no Redis at 127.0.0.1:6379"),
        ),
    ]
)
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FailureLog]:
    """Return a failure log on each shared store: SQLite, PostgreSQL, Redis."""
    if request.param == "sqlite":
        yield from _database_log(f"sqlite:///{tmp_path / 'throttle.sqlite'}")
    elif request.param == "postgres":
        yield from _database_log(request.getfixturevalue("pg_url"))
    else:
        redis_log = RedisFailureLog(REDIS_URL, prefix=f"test:{secrets.token_hex(8)}:")
        yield redis_log
        client = redis_log._client
        for name in client.scan_iter(match=f"{redis_log.prefix}*"):
            client.delete(name)
        redis_log.close()


def test_ten_failures_refuse_the_eleventh_until_the_oldest_leaves_the_window(
    log: FailureLog,
) -> None:
    clock = Clock()
    throttle = SignInThrottle(log, clock=clock)
    for i in range(10):
        clock.now = START + i
        assert throttle.attempt("demo", f"203.0.113.{i}").retry_after is None
    clock.now = START + 100
    refused = throttle.attempt("demo", "198.51.100.1")
    assert refused.retry_after == 800  # the first failure (at START) leaves at START + 900
    clock.now = START + 899.5
    assert throttle.attempt("demo", "198.51.100.1").retry_after == 1
    clock.now = START + 900  # refused attempts did not count: the window frees on time
    assert throttle.attempt("demo", "198.51.100.1").retry_after is None


def test_ten_failures_from_one_address_refuse_it_whatever_the_username(log: FailureLog) -> None:
    clock = Clock()
    throttle = SignInThrottle(log, clock=clock, address_limit=10)
    for i in range(10):
        assert throttle.attempt(f"user{i}", "203.0.113.9").retry_after is None
    assert throttle.attempt("someone-else", "203.0.113.9").retry_after == 900
    assert throttle.attempt("someone-else", "203.0.113.10").retry_after is None
    assert throttle.attempt("user0", "203.0.113.11").retry_after is None  # user0 has 1


def test_by_default_one_address_takes_far_more_than_one_offices_failures(
    log: FailureLog,
) -> None:
    # 100 people behind one NAT each mistype twice: every attempt is still checked.
    throttle = SignInThrottle(log, clock=Clock())
    for i in range(200):
        assert throttle.attempt(f"user{i // 2}", "203.0.113.9").retry_after is None
    assert throttle.attempt("user0", "203.0.113.9").retry_after is None


def test_a_device_keeps_signing_in_while_its_username_is_throttled(log: FailureLog) -> None:
    throttle = SignInThrottle(log, clock=Clock())
    for i in range(10):  # someone else, from browsers without the user's device cookie
        assert throttle.attempt("demo", f"203.0.113.{i}").retry_after is None
    assert throttle.attempt("demo", "203.0.113.50").retry_after == 900
    assert throttle.attempt("demo", "198.51.100.1", "the-victims-nonce").retry_after is None
    # A device's failures never count against the username for other browsers.
    assert throttle.attempt("alex", "203.0.113.50").retry_after is None


def test_a_device_has_its_own_count_then_is_one_more_untrusted_browser(log: FailureLog) -> None:
    throttle = SignInThrottle(log, clock=Clock())
    for _ in range(10):
        assert throttle.attempt("demo", "203.0.113.9", "stolen").retry_after is None
    # The device's count is full: its attempts now count as any other browser's.
    for _ in range(10):
        assert throttle.attempt("demo", "203.0.113.9", "stolen").retry_after is None
    assert throttle.attempt("demo", "203.0.113.9", "stolen").retry_after == 900
    assert throttle.attempt("demo", "203.0.113.9").retry_after == 900
    assert throttle.attempt("demo", "203.0.113.9", "another-device").retry_after is None


def test_a_devices_attempts_still_count_against_its_address(log: FailureLog) -> None:
    throttle = SignInThrottle(log, clock=Clock(), address_limit=10)
    for i in range(10):
        assert throttle.attempt(f"user{i}", "203.0.113.9", f"device{i}").retry_after is None
    assert throttle.attempt("user0", "203.0.113.9", "device0").retry_after == 900
    assert throttle.attempt("user0", "203.0.113.10", "device0").retry_after is None


def test_forgotten_attempts_do_not_count(log: FailureLog) -> None:
    throttle = SignInThrottle(log, clock=Clock())
    for _ in range(25):
        throttle.forget(throttle.attempt("demo", "203.0.113.9"))
    for _ in range(10):
        assert throttle.attempt("demo", "203.0.113.9").retry_after is None
    assert throttle.attempt("demo", "203.0.113.9").retry_after is not None


def test_attempts_in_flight_count_before_their_password_is_checked(log: FailureLog) -> None:
    # Thirty racing attempts for one username: however they interleave, at most ten go ahead.
    throttle = SignInThrottle(log, clock=Clock())
    start = threading.Barrier(30)
    allowed: list[bool] = []

    def one(i: int) -> None:
        start.wait()
        allowed.append(throttle.attempt("demo", f"203.0.113.{i}").retry_after is None)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(allowed) == 30 and allowed.count(True) <= 10


def test_old_failures_are_pruned_from_the_table(sqlite_log: DatabaseFailureLog) -> None:
    log = sqlite_log
    clock = Clock()
    throttle = SignInThrottle(log, clock=clock)
    for i in range(5):
        throttle.attempt(f"user{i}", "203.0.113.9")
    clock.now = START + 900
    throttle.attempt("demo", "198.51.100.1")
    with log.engine.connect() as connection:
        rows = connection.execute(sa.select(sign_in_failures.c.at)).scalars().all()
    assert rows == [START + 900, START + 900]  # the new attempt's two keys; the old gone


def test_keys_hold_no_plain_username_or_address(sqlite_log: DatabaseFailureLog) -> None:
    log = sqlite_log
    SignInThrottle(log).attempt("demo", "203.0.113.9")
    with log.engine.connect() as connection:
        keys = connection.execute(sa.select(sign_in_failures.c.key)).scalars().all()
    assert len(keys) == 2 and all(len(key) == 64 and "demo" not in key for key in keys)


@pytest.mark.parametrize(
    ("others", "expected"),
    [
        ({"u": [0.0] * 9}, None),
        ({"u": [0.0] * 10}, 900),
        ({"u": [0.0, *[50.0] * 10]}, 950),
        ({"u": [0.0] * 10, "a": [300.0] * 10}, 1200),
        ({"u": [], "a": [0.0] * 3}, None),
    ],
    ids=[
        "nine-go-ahead",
        "ten-refuse",
        "the-window-frees-at-the-tenth-newest",
        "the-longer-wait-wins",
        "none-near",
    ],
)
def test_retry_after_is_the_wait_until_every_key_frees(
    others: dict[str, list[float]], expected: int | None
) -> None:
    assert retry_after(others, 0.0, limit=10, window=900) == expected
