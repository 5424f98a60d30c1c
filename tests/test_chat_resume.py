"""Interrupted turns: a reader or a starting worker takes over from the last checkpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, api_client, idle_after
from tests.support.turns import MemorySink
from webapp.app import start_worker, stop_worker
from webapp.chat import event_log, leases
from webapp.chat.event_log import SEQ_SKIP, LeaseLost
from webapp.chat.notes import StoredEvent
from webapp.chat.service import ChatService
from webapp.llm.base import ModelError, ModelRequest
from webapp.llm.offline.model import OfflineModel
from webapp.services import chat_service
from webapp.store.app_db import get_engine
from webapp.store.users import user_for_token
from webapp.tools.runner import LocalTools
from webapp.turn.runner import run_turn, start_checkpoint

QUESTION = "What do I owe on my credit cards?"
CREDIT = "silvia://your-account/credit-card"
LEASE = timedelta(seconds=30)


class OneRoundThenDie:
    """The offline engine for one call; the next call fails as a dying worker would."""

    def __init__(self) -> None:
        self.calls = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.calls += 1
        if self.calls > 1:
            raise ModelError("worker died")
        yield from OfflineModel().stream(request)

    def close(self) -> None:
        pass


def service(app: Flask) -> ChatService:
    with app.app_context():
        return chat_service()


def user_id(app: Flask, client: ApiClient) -> int:
    user = user_for_token(get_engine(app), client.token)
    assert user is not None
    return user.id


def dead_runner(
    app: Flask, client: ApiClient, checkpoint: dict[str, Any], stale: int = 0
) -> tuple[str, str, str]:
    """Store a running answer whose runner died after its checkpoint and `stale` more events."""
    engine, uid = get_engine(app), user_id(app, client)
    session_id = client.new_session()
    _, message_id = leases.start_message(engine, uid, session_id, QUESTION, LEASE, "dead")
    event_log.save_checkpoint(engine, message_id, "dead", LEASE, checkpoint, 0)
    for seq in range(1, stale + 1):
        packet = {
            "placement": {
                "turn_index": 0,
                "tab_index": 0,
                "sub_turn_index": None,
                "model_index": 0,
            },
            "obj": {"type": "message_delta", "content": f"stale {seq} "},
        }
        event_log.append_event(
            engine, message_id, "dead", LEASE, StoredEvent(seq, "packet", json.dumps(packet))
        )
    leases.renew_lease(engine, message_id, "dead", timedelta(seconds=-1))  # ... and then died.
    return session_id, message_id, f"/api/chat/sessions/{session_id}/messages/{message_id}/stream"


def checkpoint_after_first_round(
    app: Flask, client: ApiClient, preface: bool = False
) -> dict[str, Any]:
    sink = MemorySink()
    result = run_turn(
        OneRoundThenDie(),
        LocalTools(get_engine(app), user_id(app, client)),
        sink,
        start_checkpoint([], QUESTION),
    )
    assert result.status == "error" and len(sink.checkpoints) == 1
    return sink.checkpoints[0]


def citations(client: ApiClient, session_id: str) -> dict[str, Any]:
    message = client.session(session_id)["messages"][1]
    assert message["status"] == "complete", message["error"]
    return {c["source"]: c["target"] for c in message["citations"]}


def test_a_turn_that_died_before_any_tool_round_starts_over(app: Flask) -> None:
    client = api_client(app)
    with idle_after(app):
        session_id, _, url = dead_runner(app, client, start_checkpoint([], QUESTION))
        events = client.stream(url)
    assert json.loads(events[-1].data) == {"status": "complete"}
    assert citations(client, session_id)[CREDIT]["kind"] == "accounts"


def test_resume_after_a_tool_round_keeps_the_targets(app: Flask) -> None:
    client = api_client(app)
    checkpoint = checkpoint_after_first_round(app, client)
    assert checkpoint["citationTargets"][CREDIT]["kind"] == "accounts"
    with idle_after(app):
        session_id, _, url = dead_runner(app, client, checkpoint)
        client.stream(url)
    assert citations(client, session_id)[CREDIT]["kind"] == "accounts"


def test_resume_from_a_checkpoint_without_targets_streams_untyped(app: Flask) -> None:
    client = api_client(app)
    checkpoint = checkpoint_after_first_round(app, client)
    del checkpoint["citationTargets"]
    with idle_after(app):
        session_id, _, url = dead_runner(app, client, checkpoint)
        events = client.stream(url)
    targets = citations(client, session_id)
    assert targets and all(target is None for target in targets.values())
    live = [json.loads(e.data)["citation"]["target"] for e in events if e.event == "citation"]
    assert live and all(target is None for target in live)


def test_a_takeover_never_reuses_ids_and_withdraws_the_dead_runners_events(app: Flask) -> None:
    client = api_client(app)
    with idle_after(app):
        session_id, _, url = dead_runner(app, client, start_checkpoint([], QUESTION), stale=3)
        events = client.stream(url)
    ids = [int(e.id) for e in events]
    # After the dead runner's 1..3, and past any it may have handed out live unstored.
    assert ids[0] >= 4 + SEQ_SKIP - 1 and ids == sorted(set(ids))
    assert events[0].event == "reset" and json.loads(events[0].data) == {"after": 0}
    assert "stale" not in "".join(e.data for e in events)
    # A reader that saw the stale events (Last-Event-ID 3) gets the reset first.
    assert client.stream(url, last_event_id="3")[0].event == "reset"


def test_the_old_runner_is_refused_after_a_takeover(app: Flask) -> None:
    client = api_client(app)
    engine = get_engine(app)
    with idle_after(app):
        _, message_id, _ = dead_runner(app, client, start_checkpoint([], QUESTION))
        service(app)  # A worker's first use takes over what dead runners left.
    with pytest.raises(LeaseLost):
        event_log.append_event(engine, message_id, "dead", LEASE, StoredEvent(99, "packet", "{}"))
    with pytest.raises(LeaseLost):
        leases.renew_lease(engine, message_id, "dead", LEASE)


def test_a_live_runner_is_not_taken_over(app: Flask) -> None:
    client = api_client(app)
    engine = get_engine(app)
    session_id = client.new_session()
    _, message_id = leases.start_message(
        engine, user_id(app, client), session_id, QUESTION, timedelta(minutes=5), "alive"
    )
    assert leases.claim_stale(engine, message_id, LEASE) is None
    assert not service(app).resume_if_stale(user_id(app, client), message_id)
    event_log.append_event(engine, message_id, "alive", LEASE, StoredEvent(1, "packet", "{}"))


def test_an_orphaned_turn_does_not_block_its_session(app: Flask) -> None:
    client = api_client(app)
    service(app)  # the worker's first-use sweep is behind us: the question finds the orphan
    with idle_after(app):
        session_id, _, _ = dead_runner(app, client, start_checkpoint([], QUESTION))
        busy = client.http.post(
            f"/api/chat/sessions/{session_id}/messages", json={"message": "And my checking?"}
        )
        assert busy.status_code == 409  # ... and the orphan was taken over,
    assert citations(client, session_id)  # ... so it finished,
    asked = client.ask(session_id, "What is my checking balance?")  # ... and the session is free.
    with idle_after(app):
        client.stream(asked["stream_url"])


def test_a_starting_worker_takes_over_stale_turns(app: Flask) -> None:
    client = api_client(app)
    with idle_after(app):
        first, _, _ = dead_runner(app, client, start_checkpoint([], QUESTION))
        second, _, _ = dead_runner(app, client, start_checkpoint([], QUESTION))
        service(app)  # The worker's first use sweeps, with no reader connected.
        assert service(app).resume_stale() == 0  # Nothing is left to take over.
    assert citations(client, first)[CREDIT]["kind"] == "accounts"
    assert citations(client, second)[CREDIT]["kind"] == "accounts"


def test_a_worker_told_to_stop_as_it_boots_takes_no_turn_over(app: Flask) -> None:
    # A deploy's SIGTERM came while this worker booted (a start just before): gunicorn's own
    # handler cleared `alive` before the app's jobs started. The turn another worker handed
    # over is left for a live one, not started here only to be handed over again at exit.
    client = api_client(app)
    _, message_id, _ = dead_runner(app, client, start_checkpoint([], QUESTION))
    start_worker(app, serving=lambda: False)
    try:
        assert service(app).resume_stale() == 0
    finally:
        stop_worker(app)
    assert leases.runs_as(get_engine(app), message_id, "dead")


def test_a_worker_told_to_stop_while_it_takes_a_turn_over_hands_it_back(app: Flask) -> None:
    client = api_client(app)
    chat, engine = service(app), get_engine(app)  # its first-use sweep is behind us
    _, message_id, _ = dead_runner(app, client, start_checkpoint([], QUESTION))
    told = iter([True])  # serving when it looks, told to stop once it has claimed the turn
    chat.upkeep.serving = lambda: next(told, False)
    assert chat.resume_if_stale(user_id(app, client), message_id)
    assert not chat.running_sinks()  # ... and started no runner:
    assert not leases.runs_as(engine, message_id, "dead")
    assert (user_id(app, client), message_id) in leases.stale_messages(engine)  # handed back


def test_one_running_answer_per_session_is_enforced_by_the_database(app: Flask) -> None:
    client = api_client(app)
    engine = get_engine(app)
    session_id = client.new_session()
    leases.start_message(engine, user_id(app, client), session_id, QUESTION, LEASE, "a")
    with pytest.raises(leases.SessionBusy):
        leases.start_message(engine, user_id(app, client), session_id, QUESTION, LEASE, "b")
