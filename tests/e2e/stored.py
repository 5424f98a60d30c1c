"""A stored answer citing every kind of source, written straight into a chat's history."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from flask import Flask

from webapp.chat.conversations import create_session
from webapp.chat.event_log import append_event
from webapp.chat.leases import finish_message, start_message
from webapp.chat.notes import StoredEvent
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

MIXED_QUESTION = "Show me every kind of source"
WEB_URL = "https://www.irs.gov/publications/p523"
FILE_NOTICE = "Preview isn't available yet"


def demo_user_id(app: Flask, username: str = "demo") -> int:
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    return user.id


def _packet(obj: dict[str, Any]) -> str:
    placement = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    return json.dumps({"placement": placement, "obj": obj})


def store_answer(
    app: Flask,
    session_id: str,
    question: str,
    packets: list[dict[str, Any]],
    *,
    status: str = "complete",
    username: str = "demo",
) -> str:
    """Store `question` and a finished answer made of `packets`; return the answer's id."""
    engine = get_engine(app)
    lease = timedelta(seconds=30)
    _, answer_id = start_message(
        engine, demo_user_id(app, username), session_id, question, lease, "test"
    )
    for seq, obj in enumerate(packets, start=1):
        append_event(engine, answer_id, "test", lease, StoredEvent(seq, "packet", _packet(obj)))
    done = StoredEvent(len(packets) + 1, "done", json.dumps({"status": status}))
    finish_message(
        engine,
        answer_id,
        "test",
        status=status,
        content="",
        citations=[],
        inline_citations=[],
        error=None,
        done=done,
    )
    return answer_id


def card_ids(app: Flask) -> list[str]:
    """Return the demo user's two "Credit card" account ids."""
    accounts = list_accounts(get_engine(app), demo_user_id(app))
    return [str(a["source_account_id"]) for a in accounts if a["account_name"] == "Credit card"]


def mixed_packets(app: Flask) -> list[dict[str, Any]]:
    """Return an answer citing a web page, a file, a source with no target, a quote, the
    portfolio and two cards at once, with one more uncited web source."""
    cards = [{"accountId": account_id, "provider": "plaid"} for account_id in card_ids(app)]
    docs = [
        {
            "document_id": "web",
            "semantic_identifier": "Publication 523",
            "link": WEB_URL,
            "source_type": "web",
            "updated_at": "2025-01-02T00:00:00Z",
            "match_highlights": [
                "You can exclude up to **$250,000** of <hi>gain</hi> "
                "([see the worksheet](https://www.irs.gov/w))."
            ],
        },
        {
            "document_id": "file",
            "semantic_identifier": "2024 W-2.pdf",
            "file_id": "f-1",
            "blurb": "Wages, tips, other compensation: `84,000`",
        },
        {
            "document_id": "none",
            "semantic_identifier": "Analyst note",
            "target": {"kind": "analysis"},
            "blurb": "1. **Look again.** Check the _numbers_ twice.\n2. Then decide.",
        },
        {
            "document_id": "market",
            "semantic_identifier": "AAPL quote",
            "target": {"kind": "market_data", "ticker": "AAPL"},
        },
        {
            "document_id": "portfolio",
            "semantic_identifier": "Your portfolio",
            "target": {"kind": "portfolio"},
        },
        {
            "document_id": "cards",
            "semantic_identifier": "Credit card",
            "target": {"kind": "accounts", "accounts": cards},
        },
        {
            "document_id": "more",
            "semantic_identifier": "Home sale FAQ",
            "link": "https://www.irs.gov/faq",
            "source_type": "web",
            "blurb": "## Selling your home\n> Most people owe *nothing*.",
        },
    ]
    text = (
        "The exclusion is $250,000 [[1]](). Your W-2 shows your wages [[2]](). "
        "A note [[3]](). Apple trades at $192.78 [[4]](). Your portfolio [[5]](). "
        "Your cards [[6]]()."
    )
    cites = ["web", "file", "none", "market", "portfolio", "cards"]
    return [
        {"type": "search_tool_documents_delta", "documents": docs},
        {"type": "message_start", "final_documents": None},
        {"type": "message_delta", "content": text},
        *(
            {"type": "citation_info", "citation_number": n, "document_id": d}
            for n, d in enumerate(cites, start=1)
        ),
        {"type": "stop", "stop_reason": None},
    ]


def store_mixed_answer(app: Flask, username: str = "demo") -> str:
    """Store the mixed answer in a new chat of `username`; return the chat's id."""
    session_id = create_session(get_engine(app), demo_user_id(app, username)).id
    store_answer(app, session_id, MIXED_QUESTION, mixed_packets(app), username=username)
    return session_id
