"""The chat history people see: short titles, grouped by day, no empty chats listed."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient

from tests.support.apps import idle_after
from tests.test_web_auth import csrf_from, login
from webapp.chat.conversations import SHORT_TITLE_CHARS, create_session, short_title
from webapp.chat.records import SessionRow
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.web.history import by_day


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("What do I owe on my credit cards?", "What do I owe on my credit cards"),
        (
            "hi, can you tell me how the gain on selling my home is taxed?",
            "How the gain on selling my home is taxed",
        ),
        ("Hey! Could you please explain escrow?", "Escrow"),
        ("  what is my Chase checking balance?\nthanks", "What is my Chase checking balance"),
        ("Hi", None),
    ],
)
def test_a_chat_is_named_after_the_first_words_of_its_question(
    question: str, title: str | None
) -> None:
    assert short_title(question) == title


def test_a_long_question_is_cut_at_a_word_never_inside_one() -> None:
    title = short_title(
        "How much should I set aside every month for retirement if I am "
        "thirty five and earn about seventy thousand dollars a year?"
    )
    assert title is not None and title.endswith("…")
    assert len(title) <= SHORT_TITLE_CHARS + 1
    words = title.removesuffix("…").split()
    assert all(
        word
        in ["How", "much", "should", "I", "set", "aside", "every", "month", "for", "retirement"]
        for word in words
    )


def test_chats_are_grouped_under_the_day_they_were_last_used() -> None:
    today = date(2026, 11, 30)
    sessions = [
        SessionRow(id, "Chat", at, at)
        for id, at in [
            ("a", datetime(2026, 11, 30, 9, tzinfo=UTC)),
            ("b", datetime(2026, 11, 30, 1, tzinfo=UTC)),
            ("c", datetime(2026, 11, 29, 23, tzinfo=UTC)),
            # 01:00 on the 30th, three hours east of UTC, is the 29th in UTC.
            ("x", datetime(2026, 11, 30, 1, tzinfo=timezone(timedelta(hours=3)))),
            ("d", datetime(2026, 11, 26, 12, tzinfo=UTC)),
            ("e", datetime(2026, 10, 2, 12, tzinfo=UTC)),
        ]
    ]
    grouped = [(label, [s.id for s in items]) for label, items in by_day(sessions, today)]
    assert grouped == [
        ("Today", ["a", "b"]),
        ("Yesterday", ["c", "x"]),
        ("Previous 7 days", ["d"]),
        ("October 2026", ["e"]),
    ]


def _titles(page: str) -> list[str]:
    return [a.get_text() for a in BeautifulSoup(page, "html.parser").select("#sessions a")]


def test_empty_chats_stay_out_of_the_history_but_the_open_one(
    app: Flask, client: FlaskClient
) -> None:
    login(client)
    engine = get_engine(app)
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    empty = create_session(engine, user.id).id
    with idle_after(app):
        asked = client.post(
            f"/chat/{empty}/messages",
            data={
                "message": "What do I owe on my credit cards?",
                "csrf_token": csrf_from(client, f"/chat/{empty}"),
                "idempotency_key": "k-1",
            },
        )
        assert asked.status_code == 302
    other_empty = create_session(engine, user.id).id
    on_answered = client.get(f"/chat/{empty}").get_data(as_text=True)
    on_new = client.get(f"/chat/{other_empty}").get_data(as_text=True)
    assert _titles(on_answered) == ["What do I owe on my credit cards"]
    assert _titles(on_new) == ["New chat", "What do I owe on my credit cards"]
    headings = BeautifulSoup(on_answered, "html.parser").select("#sessions .session-day")
    assert [h.get_text() for h in headings] == ["Today"]
