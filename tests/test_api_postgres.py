"""The same turn on PostgreSQL: chat storage and row-level-secured SQL through DATABASE_URL."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import api_client, idle_after

pytestmark = pytest.mark.postgres


def test_credit_card_turn_on_postgres(pg_app: Flask) -> None:
    demo, alex = api_client(pg_app, "demo"), api_client(pg_app, "alex")
    with idle_after(pg_app):
        session_id = demo.new_session()
        events = demo.stream(
            demo.ask(session_id, "What do I owe on my credit cards?")["stream_url"]
        )
        other = alex.new_session()
        alex.stream(alex.ask(other, "What do I owe on my credit cards?")["stream_url"])
    assert events[-1].event == "done"
    mine = demo.session(session_id)["messages"][1]
    theirs = alex.session(other)["messages"][1]
    targets = {c["source"]: c["target"] for c in mine["citations"]}
    assert targets["silvia://your-account/credit-card"]["kind"] == "accounts"
    assert targets["silvia://your-account/sapphire-preferred"]["kind"] == "account"
    # Alex's own card only: one account, none of demo's.
    (card,) = [c for c in theirs["citations"] if c["source"].endswith("credit-card")]
    assert card["target"]["kind"] == "account"
    demo_ids = {a["accountId"] for a in targets["silvia://your-account/credit-card"]["accounts"]}
    assert card["target"]["accountId"] not in demo_ids
    assert alex.http.get(f"/api/chat/sessions/{session_id}").status_code == 404
