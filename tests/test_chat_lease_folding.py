"""A running answer's lease rides on the writes its turn makes; a quiet one renews rarely.

An answer whose model says nothing for long keeps its lease with one renewal per
`RENEW_AFTER` of a lease (not one every third of it), and a dead runner's lease still runs out
a lease after its last write.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from tests.test_chat_ends import NoTools, SilentUntilClosed
from webapp.chat import conversations, leases, records
from webapp.chat.service import ChatService
from webapp.chat.sink import RENEW_AFTER
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

LEASE = timedelta(seconds=2)
WATCH_SECONDS = 4.0


@pytest.fixture
def quiet_turn(app: Flask) -> Iterator[tuple[ChatService, SilentUntilClosed, str]]:
    engine = get_engine(app)
    model = SilentUntilClosed()
    service = ChatService(engine, lambda: model, lambda _: NoTools(), lease=LEASE)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    session_id = conversations.create_session(engine, user.id).id
    message_id = service.ask(user.id, session_id, "What do I owe on my cards?")
    assert model.asked.wait(10)
    yield service, model, message_id
    model.close()
    service.wait_idle()


def test_a_quiet_answer_keeps_its_lease_with_a_renewal_per_most_of_a_lease(
    quiet_turn: tuple[ChatService, SilentUntilClosed, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service, _, message_id = quiet_turn
    renewals: list[object] = []
    renew = leases.renew_lease

    def count(*args: Any) -> None:
        renewals.append(args)
        renew(*args)

    monkeypatch.setattr(leases, "renew_lease", count)
    lapsed = []
    tick = threading.Event()
    # Watched for WATCH_SECONDS of the clock, not a count of ticks: on a loaded machine each
    # look at the leases takes a while, and the renewals go on meanwhile.
    until = time.monotonic() + WATCH_SECONDS
    while time.monotonic() < until:
        tick.wait(0.1)
        if message_id in {m for _, m in leases.stale_messages(service.engine)}:
            lapsed.append(message_id)
    assert not lapsed  # held all along ...
    # ... by about one renewal per RENEW_AFTER of a lease (renewing every third: six)
    assert 1 <= len(renewals) <= WATCH_SECONDS / (LEASE.total_seconds() * RENEW_AFTER) + 1


def test_a_dead_runners_lease_still_runs_out_a_lease_after_its_last_write(
    quiet_turn: tuple[ChatService, SilentUntilClosed, str],
) -> None:
    service, _, message_id = quiet_turn
    (sink,) = [s for s in service._sinks if s.message_id == message_id]
    sink.close()  # the runner's process stops writing, as a killed worker does
    last_write = records.now()
    held = _lease_until(service, message_id)
    assert held is not None and held <= last_write + LEASE
    threading.Event().wait(max(0.0, (held - records.now()).total_seconds()) + 0.2)
    assert message_id in {m for _, m in leases.stale_messages(service.engine)}


def _lease_until(service: ChatService, message_id: str) -> Any:
    import sqlalchemy as sa

    from webapp.chat.tables import ai_chat_logs

    with service.engine.connect() as conn:
        value = conn.execute(
            sa.select(ai_chat_logs.c.lease_until).where(ai_chat_logs.c.id == message_id)
        ).scalar()
    return None if value is None else records.aware(value)
