"""An interrupted turn resumes from its checkpoint when a reader finds its lease expired."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from flask import Flask

from tests.support.apps import ApiClient, api_client, idle_after
from tests.support.turns import MemorySink
from webapp.chat import LocalTools
from webapp.chat import _store as store
from webapp.engines import EngineError, ModelRequest, OfflineEngine
from webapp.store import get_engine, user_for_token
from webapp.turn import run_turn, start_checkpoint

QUESTION = "What do I owe on my credit cards?"
CREDIT = "silvia://your-account/credit-card"


class OneRoundThenDie:
    """The offline engine for one call; the next call fails as a dying worker would."""

    def __init__(self) -> None:
        self.calls = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.calls += 1
        if self.calls > 1:
            raise EngineError("worker died")
        yield from OfflineEngine().stream(request)


def interrupted(app: Flask, client: ApiClient, checkpoint: dict[str, Any]) -> tuple[str, str]:
    """Store a running answer whose runner died after writing `checkpoint`."""
    user = user_for_token(get_engine(app), client.token)
    assert user is not None
    session_id = client.new_session()
    _, message_id = store.start_message(get_engine(app), user.id, session_id, QUESTION,
                                        timedelta(seconds=-1))
    store.save_checkpoint(get_engine(app), message_id, checkpoint, 0)
    return session_id, f"/api/chat/sessions/{session_id}/messages/{message_id}/stream"


def checkpoint_after_first_round(app: Flask, client: ApiClient) -> dict[str, Any]:
    user = user_for_token(get_engine(app), client.token)
    assert user is not None
    sink = MemorySink()
    result = run_turn(OneRoundThenDie(), LocalTools(get_engine(app), user.id), sink,
                      start_checkpoint([], QUESTION))
    assert result.status == "error" and len(sink.checkpoints) == 1
    return sink.checkpoints[0]


def citations(client: ApiClient, session_id: str) -> dict[str, Any]:
    message = client.session(session_id)["messages"][1]
    assert message["status"] == "complete", message["error"]
    return {c["source"]: c["target"] for c in message["citations"]}


def test_a_turn_that_died_before_any_tool_round_starts_over(app: Flask) -> None:
    client = api_client(app)
    with idle_after(app):
        session_id, url = interrupted(app, client, start_checkpoint([], QUESTION))
        events = client.stream(url)
    assert json.loads(events[-1].data) == {"status": "complete"}
    assert citations(client, session_id)[CREDIT]["kind"] == "accounts"


def test_resume_after_a_tool_round_keeps_the_targets(app: Flask) -> None:
    client = api_client(app)
    checkpoint = checkpoint_after_first_round(app, client)
    assert checkpoint["citationTargets"][CREDIT]["kind"] == "accounts"
    with idle_after(app):
        session_id, url = interrupted(app, client, checkpoint)
        client.stream(url)
    assert citations(client, session_id)[CREDIT]["kind"] == "accounts"


def test_resume_from_a_checkpoint_without_targets_streams_untyped(app: Flask) -> None:
    client = api_client(app)
    checkpoint = checkpoint_after_first_round(app, client)
    del checkpoint["citationTargets"]
    with idle_after(app):
        session_id, url = interrupted(app, client, checkpoint)
        events = client.stream(url)
    targets = citations(client, session_id)
    assert targets and all(target is None for target in targets.values())
    live = [json.loads(e.data)["citation"]["target"] for e in events if e.event == "citation"]
    assert live and all(target is None for target in live)


def test_a_live_runner_is_not_taken_over(app: Flask) -> None:
    client = api_client(app)
    user = user_for_token(get_engine(app), client.token)
    assert user is not None
    session_id = client.new_session()
    _, message_id = store.start_message(get_engine(app), user.id, session_id, QUESTION,
                                        timedelta(minutes=5))
    assert not store.claim_stale(get_engine(app), message_id, timedelta(seconds=30))
