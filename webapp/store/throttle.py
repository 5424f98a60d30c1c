"""Sign-in throttling that cannot be aimed at a victim: OWASP's device-cookie design.

A browser that has signed in as a user before carries a signed device cookie for that user
(`webapp/web/auth.py`); its failed sign-ins as that user count against that device alone,
so a victim keeps signing in from their own browsers while someone guesses their password
elsewhere. Every other attempt for a username (no device cookie for it, or one whose own
count is full) counts against that username's *untrusted* count, which refuses after
`MAX_SIGN_IN_FAILURES` in the window. Each attempt also counts against its client address,
whose limit (`MAX_SIGN_IN_FAILURES_PER_ADDRESS`, by default 500) is far above what one
household's or office's people mistype behind one NAT or proxy: it only slows one client
spraying guesses across many usernames.

The counts live in a store every worker and host shares (the app's database by default,
Redis when configured). An attempt is counted *before* its password is checked and forgotten
only if it succeeds, so however many requests race, at most the limit of wrong passwords per
key is ever checked in one window (docs/architecture.md#service-grade-contracts: 429 +
Retry-After).
"""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from ..settings import MAX_SIGN_IN_FAILURES_PER_ADDRESS
from .schema import metadata
from .writes import write

# Per username from browsers without its device cookie, and per device cookie.
MAX_SIGN_IN_FAILURES = 10
SIGN_IN_WINDOW_SECONDS = 15 * 60
# A sign-in waits this long at most for a locked or dropped database before it gives up.
_WRITE_RETRY_SECONDS = 2.0

sign_in_failures = sa.Table(
    "sign_in_failures",
    metadata,
    # One row per key an attempt counts against; the attempt's random id finds them again.
    sa.Column("attempt", sa.String(32), primary_key=True),
    # SHA-256 of "user:<name>", "device:<nonce>" or "addr:<address>": bounded, and no plain
    # names kept.
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("at", sa.Double, nullable=False),  # seconds since the epoch
    sa.Index("ix_sign_in_failures_key_at", "key", "at"),
    sa.Index("ix_sign_in_failures_at", "at"),
)


def throttle_key(kind: str, value: str) -> str:
    """Return the stored key for one username (`kind` "user"), device cookie ("device") or
    address ("addr")."""
    return hashlib.sha256(f"{kind}:{value}".encode("utf-8", "surrogatepass")).hexdigest()


class FailureLog(Protocol):
    """Where attempts are counted: shared by every worker that signs people in."""

    def add(
        self, attempt: str, keys: Sequence[str], now: float, window: float
    ) -> dict[str, list[float]]:
        """Count `attempt` under each key, drop what is older than the window, and return
        the times of each key's *other* attempts still in the window."""
        ...

    def remove(self, attempt: str, keys: Sequence[str]) -> None:
        """Forget `attempt` (it succeeded, or was refused without a check)."""
        ...


@dataclass(frozen=True, slots=True)
class Attempt:
    """One sign-in attempt, counted; `retry_after` (seconds) is set when it is refused."""

    token: str
    keys: tuple[str, ...]
    retry_after: int | None


def retry_after(
    others: Mapping[str, Iterable[float]],
    now: float,
    *,
    limit: int,
    window: float,
    limits: Mapping[str, int] | None = None,
) -> int | None:
    """Return the seconds until every key has fewer than its limit of other attempts in the
    window, or None when none has reached it (the attempt may go ahead). A key's limit is
    `limits[key]`, else `limit`."""
    waits = []
    for key, times in others.items():
        most = (limits or {}).get(key, limit)
        recent = sorted(times)
        if len(recent) >= most:
            # The key frees when all but `most - 1` of its attempts have left the window.
            frees_at = recent[len(recent) - most] + window
            waits.append(max(1, math.ceil(frees_at - now)))
    return max(waits) if waits else None


class SignInThrottle:
    """Refuse sign-ins for a username from browsers it has not signed in with, for a device
    cookie, or for an address, each past its number of failures in `window`."""

    def __init__(
        self,
        log: FailureLog,
        *,
        limit: int = MAX_SIGN_IN_FAILURES,
        address_limit: int = MAX_SIGN_IN_FAILURES_PER_ADDRESS,
        window: float = SIGN_IN_WINDOW_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.log = log
        self.limit = limit
        self.address_limit = address_limit
        self.window = window
        self._clock = clock

    def attempt(self, username: str, address: str | None, device: str | None = None) -> Attempt:
        """Count an attempt; when it is refused, it is forgotten at once and says for how long.

        `device` is the nonce of a valid device cookie for `username` the browser sent: its
        attempt counts against that device, not the username, unless the device's own count
        is full (then it is one more untrusted browser).
        """
        address_keys = [throttle_key("addr", address)] if address else []
        limits = dict.fromkeys(address_keys, self.address_limit)
        if device is not None:
            device_key = throttle_key("device", device)
            counted = self._count([device_key, *address_keys], limits)
            if device_key not in counted.full:  # going ahead, or refused for its address
                return counted.attempt
        return self._count([throttle_key("user", username), *address_keys], limits).attempt

    def _count(self, keys: list[str], limits: Mapping[str, int]) -> _Counted:
        token = uuid.uuid4().hex
        now = self._clock()
        others = self.log.add(token, keys, now, self.window)
        wait = retry_after(others, now, limit=self.limit, window=self.window, limits=limits)
        full = {
            key
            for key, times in others.items()
            if retry_after({key: times}, now, limit=self.limit, window=self.window, limits=limits)
        }
        if wait is not None:
            self.log.remove(token, keys)
        return _Counted(Attempt(token, tuple(keys), wait), full)

    def forget(self, attempt: Attempt) -> None:
        """Forget an attempt whose password was right (or was never checked)."""
        self.log.remove(attempt.token, attempt.keys)


@dataclass(frozen=True, slots=True)
class _Counted:
    """An attempt as counted, and which of its keys were already full."""

    attempt: Attempt
    full: set[str]  # the keys that refused it


class DatabaseFailureLog:
    """Attempts as rows of `sign_in_failures`; old rows are deleted as new ones come."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _write(self, work: Callable[[sa.Connection], None]) -> None:
        # The one retrying writer, with a shorter budget: a person is waiting to sign in.
        write(self.engine, work, budget=_WRITE_RETRY_SECONDS)

    def add(
        self, attempt: str, keys: Sequence[str], now: float, window: float
    ) -> dict[str, list[float]]:
        cutoff = now - window

        def insert(connection: sa.Connection) -> None:
            connection.execute(sign_in_failures.delete().where(sign_in_failures.c.at <= cutoff))
            connection.execute(
                sign_in_failures.insert(),
                [{"attempt": attempt, "key": key, "at": now} for key in keys],
            )

        self._write(insert)
        # Read after the commit: of two racing attempts, the later to read sees both.
        query = sa.select(sign_in_failures.c.key, sign_in_failures.c.at).where(
            sign_in_failures.c.key.in_(keys),
            sign_in_failures.c.at > cutoff,
            sign_in_failures.c.attempt != attempt,
        )
        others: dict[str, list[float]] = {key: [] for key in keys}
        with self.engine.connect() as connection:
            for key, at in connection.execute(query):
                others[key].append(float(at))
        return others

    def remove(self, attempt: str, keys: Sequence[str]) -> None:
        def delete(connection: sa.Connection) -> None:
            connection.execute(
                sign_in_failures.delete().where(sign_in_failures.c.attempt == attempt)
            )

        self._write(delete)


class RedisFailureLog:
    """Attempts as members of one sorted set per key (score: the time), expiring with it."""

    def __init__(self, url: str, *, prefix: str = "webapp:sign-in:") -> None:
        import redis

        self.prefix = prefix
        self._client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)

    def add(
        self, attempt: str, keys: Sequence[str], now: float, window: float
    ) -> dict[str, list[float]]:
        # One MULTI/EXEC: another host's attempt lands wholly before or after this one.
        pipe = self._client.pipeline(transaction=True)
        for key in keys:
            name = self.prefix + key
            pipe.zremrangebyscore(name, "-inf", now - window)
            pipe.zadd(name, {attempt: now})
            pipe.zrange(name, 0, -1, withscores=True)
            pipe.expire(name, math.ceil(window) + 1)
        results: list[Any] = pipe.execute()
        others: dict[str, list[float]] = {}
        for index, key in enumerate(keys):
            members: list[tuple[bytes, float]] = results[index * 4 + 2]
            others[key] = [at for member, at in members if member != attempt.encode()]
        return others

    def remove(self, attempt: str, keys: Sequence[str]) -> None:
        pipe = self._client.pipeline(transaction=True)
        for key in keys:
            pipe.zrem(self.prefix + key, attempt)
        pipe.execute()

    def close(self) -> None:
        """Close the client's connections."""
        self._client.close()
