"""The history of chats: the sidebar a page at a time, Search chats, titles told apart.

On SQLite and PostgreSQL; each test has a user of its own, so one database per backend
serves the module.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient

from tests.support.apps import idle_after, make_app
from tests.support.history import store_chats
from tests.test_web_auth import csrf_from, login
from webapp.chat.pages import SESSIONS_PAGE
from webapp.chat.search import (
    MAX_QUERY_CHARS,
    SEARCH_PAGE,
    clean_query,
    search_query,
    search_sessions,
)
from webapp.chat.titles import like_literal, next_title
from webapp.store.app_db import close_engine, get_engine
from webapp.store.users import create_user
from webapp.web.chats import snippet

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PASSWORD = "a long password"


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def backend_app(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Flask]:
    folder: Path = tmp_path_factory.mktemp("chats")
    config: dict[str, Any] = {"MAX_NEW_CHATS_PER_MINUTE": 1000}
    if request.param == "postgres":
        config["DATABASE_URL"] = request.getfixturevalue("pg_url")
    app = make_app(folder, **config)
    yield app
    close_engine(app)


def _person(app: Flask) -> tuple[FlaskClient, int]:
    name = f"p{uuid.uuid4().hex[:12]}"
    user = create_user(get_engine(app), name, PASSWORD)
    client = app.test_client()
    assert login(client, name, PASSWORD).status_code == 302
    return client, user.id


@pytest.fixture
def person(backend_app: Flask) -> tuple[FlaskClient, int]:
    """A fresh user of the module's app, signed in: its test client and id."""
    return _person(backend_app)


def _chats(app: Flask, user_id: int, texts: list[tuple[str, str]], at: datetime = AT) -> list[str]:
    """Store chats (title, answer text), each a second older than the one before, each with a
    question and its answer; return their ids, newest first."""
    chats = [(title, f"{title}?", answer) for title, answer in texts]
    return store_chats(get_engine(app), user_id, chats, at)


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def _listed(page: BeautifulSoup) -> list[str]:
    return [str(a["href"]).rsplit("/", 1)[1] for a in page.select("#sessions a.session-link")]


# The sidebar, a page at a time.


def test_the_sidebar_lists_a_page_and_more_chats_reaches_the_oldest(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [(f"Chat {n}", "An answer.") for n in range(120)])
    first = soup(client.get(f"/chat/{ids[0]}").get_data(as_text=True))
    assert _listed(first) == ids[:SESSIONS_PAGE]
    # Without JavaScript, `More chats` is the chat page showing the older page, until the end.
    seen, page = _listed(first), first
    while (more := page.select_one(".more-chats a")) is not None:
        href = str(more["href"])
        assert href.startswith(f"/chat/{ids[0]}?chats_before=")
        page = soup(client.get(href).get_data(as_text=True))
        assert page.select_one(".newest-chats a") is not None
        seen += _listed(page)
        assert len(seen) <= len(ids)
    assert seen == ids
    # The open chat is still the one the conversation shows.
    assert page.select_one("#composer")["action"] == f"/chat/{ids[0]}/messages"


def test_more_chats_with_htmx_brings_the_next_page_without_a_second_heading(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [(f"Chat {n}", "An answer.") for n in range(60)])
    first = soup(client.get(f"/chat/{ids[0]}").get_data(as_text=True))
    more = first.select_one(".more-chats a")
    assert more is not None and more.get("hx-target") == "closest .more-chats"
    fragment = soup(
        client.get(str(more["hx-get"]), headers={"HX-Request": "true"}).get_data(as_text=True)
    )
    links = [str(a["href"]).rsplit("/", 1)[1] for a in fragment.select("a.session-link")]
    assert links == ids[SESSIONS_PAGE:]
    # The page before ended on the same day: its heading is not drawn again.
    assert fragment.select(".session-day") == []
    assert fragment.select_one(".more-chats") is None
    assert fragment.select_one('a[aria-current="page"]') is None  # the open chat is on page 1


def test_a_bad_chats_cursor_shows_the_newest_chats(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [("Only chat", "An answer.")])
    page = client.get(f"/chat/{ids[0]}?chats_before=not-a-cursor")
    assert page.status_code == 200
    assert _listed(soup(page.get_data(as_text=True))) == ids


def test_the_latest_chat_opens_and_a_new_chat_reuses_an_empty_latest(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [(f"Chat {n}", "An answer.") for n in range(3)])
    assert client.get("/").headers["Location"] == f"/chat/{ids[0]}"
    token = csrf_from(client, f"/chat/{ids[0]}")
    made = client.post("/chat", data={"csrf_token": token}).headers["Location"]
    assert made not in {f"/chat/{i}" for i in ids}
    # The new chat is empty and the latest: New chat again reuses it.
    assert client.post("/chat", data={"csrf_token": token}).headers["Location"] == made


# Search chats.


def _search(client: FlaskClient, query: str, **args: str) -> BeautifulSoup:
    response = client.get("/chats", query_string={"q": query, **args})
    assert response.status_code == 200
    return soup(response.get_data(as_text=True))


def _found(page: BeautifulSoup) -> list[str]:
    return [a.get_text() for a in page.select(".search-results a.result-link")]


def test_search_finds_chats_by_title_and_by_answer_text(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    _chats(
        backend_app,
        user_id,
        [
            ("Escrow on my mortgage", "Your lender holds it."),
            ("Roth limits", "You may put in **$7,000** for 2025, or $8,000 from age 50."),
            ("Card balances", "You owe $1,842.17."),
        ],
    )
    assert _found(_search(client, "ESCROW")) == ["Escrow on my mortgage"]
    page = _search(client, "from age")
    assert _found(page) == ["Roth limits"]
    words = page.select_one(".result-words")
    assert words is not None and words.select_one("mark") is not None
    assert words.select_one("mark").get_text() == "from age"
    assert "**" not in words.get_text()  # the answer's words, not its markdown
    assert _found(_search(client, "nothing like this")) == []
    assert "No chats with" in _search(client, "nothing like this").get_text()


def test_search_finds_only_your_own_chats(backend_app: Flask) -> None:
    (mine, me), (_, them) = _person(backend_app), _person(backend_app)
    _chats(backend_app, me, [("My pension", "Mine.")])
    _chats(backend_app, them, [("Their pension", "Theirs."), ("Other", "About a pension.")])
    assert _found(_search(mine, "pension")) == ["My pension"]
    fragment = mine.get("/chats/search", query_string={"q": "theirs"})
    assert fragment.status_code == 200
    assert soup(fragment.get_data(as_text=True)).select("a.result-link") == []


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("100%", ["Saved 100%"]),
        ("a_b", ["Key a_b"]),
        ("50\\50", ["Split 50\\50"]),
        ("%", ["Saved 100%"]),
    ],
    ids=["percent", "underscore", "backslash", "bare-percent"],
)
def test_like_wildcards_in_a_search_are_literal(
    backend_app: Flask, person: tuple[FlaskClient, int], query: str, found: list[str]
) -> None:
    client, user_id = person
    _chats(
        backend_app,
        user_id,
        [
            ("Saved 100%", "All."),
            ("Saved 1000 dollars", "Some."),
            ("Key a_b", "One."),
            ("Key axb", "Two."),
            ("Split 50\\50", "Half."),
            ("Split 50x50", "Also half."),
        ],
    )
    assert _found(_search(client, query)) == found


def test_search_results_come_a_page_at_a_time(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    total = SEARCH_PAGE + 5
    _chats(
        backend_app,
        user_id,
        [(f"Budget {n}", "A plan.") for n in range(total)] + [("Other", "No.")],
    )
    page = _search(client, "budget")
    assert _found(page) == [f"Budget {n}" for n in range(SEARCH_PAGE)]
    more = page.select_one(".more-results a")
    assert more is not None
    rest = soup(client.get(str(more["href"])).get_data(as_text=True))
    assert _found(rest) == [f"Budget {n}" for n in range(SEARCH_PAGE, total)]
    assert rest.select_one(".more-results") is None
    # With htmx, the next page's items alone, in place of `More results`.
    fragment = soup(client.get(str(more["hx-get"])).get_data(as_text=True))
    assert [a.get_text() for a in fragment.select("li.result a")] == _found(rest)
    assert fragment.select_one("section") is None


def test_the_live_results_fragment_says_how_many_were_found(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [("Taxes on my home sale", "Publication 523.")])
    html = client.get("/chats/search", query_string={"q": "home", "open": ids[0]})
    page = soup(html.get_data(as_text=True))
    status = page.select_one("#chat-search-status")
    assert status is not None and status.get_text() == "1 chat found"
    assert status.get("hx-swap-oob") == "innerHTML"
    assert page.select_one('a.result-link[aria-current="page"]') is not None
    empty = soup(client.get("/chats/search", query_string={"q": "  "}).get_data(as_text=True))
    assert empty.select("section") == [] and empty.select_one("#chat-search-status") is not None


def test_search_chats_is_a_get_form_on_the_chat_page(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, user_id = person
    ids = _chats(backend_app, user_id, [("Anything", "At all.")])
    page = soup(client.get(f"/chat/{ids[0]}").get_data(as_text=True))
    form = page.select_one("form.chat-search")
    assert form is not None and form["method"] == "get" and form["action"] == "/chats"
    box = form.select_one('input[role="searchbox"][name="q"]')
    assert box is not None and box["id"] == "chat-search"
    assert box["maxlength"] == str(MAX_QUERY_CHARS)
    assert page.select_one('label[for="chat-search"]').get_text() == "Search chats"
    # The phone's Chats button: a dialog with JavaScript, the Chats page without.
    button = page.select_one("a.chats-button")
    assert button is not None and button["href"] == "/chats"
    assert button["data-open-dialog"] == "chats-dialog"
    assert page.select_one("dialog#chats-dialog") is not None
    chats = soup(client.get("/chats").get_data(as_text=True))
    assert [h.get_text() for h in chats.select("#sessions .session-day")] == ["March 2026"]
    assert chats.select_one('input[role="searchbox"]') is not None


def test_a_search_reads_each_of_the_users_chats_by_index_never_every_message(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    _, user_id = person
    other = create_user(get_engine(backend_app), f"o{uuid.uuid4().hex[:12]}", PASSWORD)
    _chats(backend_app, other.id, [(f"Theirs {n}", "Their answer.") for n in range(200)])
    _chats(backend_app, user_id, [("Mine", "My answer.")])
    engine = get_engine(backend_app)
    compiled = search_query(user_id, "nothing", 20, None).compile(
        engine, compile_kwargs={"literal_binds": True}
    )
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("ANALYZE ai_chat_logs"))
            plan = "\n".join(conn.execute(sa.text(f"EXPLAIN {compiled}")).scalars())
        else:
            rows = conn.execute(sa.text(f"EXPLAIN QUERY PLAN {compiled}"))
            plan = "\n".join(str(r[-1]) for r in rows)
    assert "ix_chat_sessions_user_page" in plan, plan
    assert "ix_ai_chat_logs_session_page" in plan, plan
    # Not a scan of everyone's messages (PostgreSQL's hashed EXISTS, SQLite's SCAN).
    assert "hashed" not in plan and "Seq Scan on ai_chat_logs" not in plan, plan
    assert "SCAN ai_chat_logs" not in plan, plan


def test_a_search_is_bounded_and_its_query_cleaned() -> None:
    assert clean_query("  net \n worth ") == "net worth"
    assert len(clean_query("x" * 1000)) == MAX_QUERY_CHARS
    assert clean_query(None) == ""
    assert like_literal("50%_\\") == "50\\%\\_\\\\"


def test_an_empty_search_finds_nothing(backend_app: Flask) -> None:
    assert search_sessions(get_engine(backend_app), 1, "   ").rows == []


def test_a_snippet_marks_the_words_found_and_escapes_the_rest() -> None:
    text = "Intro. " * 20 + "The <b>limit</b> is $7,000 for 2025." + " More." * 40
    shown = str(snippet(text, "7,000"))
    assert "<mark>7,000</mark>" in shown and "&lt;b&gt;" in shown
    assert shown.startswith("…") and shown.endswith("…")
    assert snippet(None, "x") is None


# Titles told apart.


@pytest.mark.parametrize(
    ("taken", "title"),
    [
        ([], "Net worth"),
        (["Other"], "Net worth"),
        (["Net worth"], "Net worth (2)"),
        (["Net worth", "Net worth (2)"], "Net worth (3)"),
        (["Net worth (4)"], "Net worth (5)"),
        (["Net worth (x)", "Net worth today"], "Net worth"),
    ],
    ids=["none", "other", "one", "two", "gap", "not-numbered"],
)
def test_a_repeated_title_gets_the_next_number(taken: list[str], title: str) -> None:
    assert next_title("Net worth", taken) == title


def test_asking_the_same_first_question_in_three_chats_names_them_apart(
    backend_app: Flask, person: tuple[FlaskClient, int]
) -> None:
    client, _ = person
    for n in range(3):
        made = client.post("/chat", data={"csrf_token": csrf_from(client, "/chats")})
        chat = made.headers["Location"]
        with idle_after(backend_app):
            asked = client.post(
                f"{chat}/messages",
                data={
                    "message": "What is my net worth?",
                    "csrf_token": csrf_from(client, chat),
                    "idempotency_key": f"k-{n}",
                },
            )
            assert asked.status_code == 302
    page = soup(client.get("/chats").get_data(as_text=True))
    titles = [a.get_text() for a in page.select("#sessions a.session-link")]
    assert titles == [
        "What is my net worth (3)",
        "What is my net worth (2)",
        "What is my net worth",
    ]
