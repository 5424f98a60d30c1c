"""The chat page: sessions, asking with and without htmx, the HTML stream, and history."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from typing import Any

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.support.apps import idle_after
from webapp.chat.conversations import (
    create_session,
    get_message,
    get_session,
    list_sessions,
    session_messages,
)
from webapp.chat.event_log import append_event
from webapp.chat.leases import finish_message, start_message
from webapp.chat.notes import StoredEvent
from webapp.chat.tables import ai_chat_logs
from webapp.services import chat_service
from webapp.sse import ServerSentEvent, SSEDecoder
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

QUESTION = "What do I owe on my credit cards?"


def soup(html: str | TestResponse) -> BeautifulSoup:
    text = html if isinstance(html, str) else html.get_data(as_text=True)
    return BeautifulSoup(text, "html.parser")


def user_id(app: Flask, username: str = "demo") -> int:
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    return user.id


def sign_in(app: Flask, client: FlaskClient, username: str = "demo") -> None:
    with client.session_transaction() as session:
        session["user_id"] = user_id(app, username)


def csrf(client: FlaskClient) -> str:
    field = soup(client.get("/accounts")).select_one('input[name="csrf_token"]')
    assert field is not None
    return str(field["value"])


def new_chat(app: Flask, username: str = "demo") -> str:
    return create_session(get_engine(app), user_id(app, username)).id


def used_chat(app: Flask, username: str = "demo") -> str:
    """A chat with one finished exchange, still called "New chat": the history lists it."""
    session_id, uid = new_chat(app, username), user_id(app, username)
    at = datetime.now(UTC)
    rows = [
        {
            "id": uuid.uuid4().hex,
            "session_id": session_id,
            "user_id": uid,
            "role": role,
            "content": "Hello",
            "status": "complete",
            "created_at": at,
            "completed_at": at,
        }
        for role in ("user", "assistant")
    ]
    with get_engine(app).begin() as conn:
        conn.execute(ai_chat_logs.insert(), rows)
    return session_id


def ask(
    client: FlaskClient,
    session_id: str,
    message: str,
    *,
    htmx: bool = True,
    token: str | None = None,
) -> TestResponse:
    headers = {"HX-Request": "true"} if htmx else {}
    data = {"message": message, "csrf_token": csrf(client) if token is None else token}
    return client.post(f"/chat/{session_id}/messages", data=data, headers=headers)


def read_stream(client: FlaskClient, url: str) -> list[ServerSentEvent]:
    response = client.get(url)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    assert (
        response.headers["Cache-Control"] == "no-store"
    )  # a user's answer: never kept (DESIGN, service-grade contracts)
    decoder = SSEDecoder()
    return decoder.decode(response.get_data(as_text=True)) + decoder.flush()


def squash(html: str) -> str:
    """Return the HTML without the whitespace between tags, and what each render of a form
    makes fresh blank: its idempotency key and its CSRF token (signed with the second it was
    drawn, so two renders a tick apart differ there alone)."""
    html = re.sub(r'(name="idempotency_key"[^>]*value=")[0-9a-f]+', r"\1", html)
    html = re.sub(r'(name="csrf_token"[^>]*value=")[^"]+', r"\1", html)
    return re.sub(r">\s+<", "><", " ".join(html.split()))


VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if self.open and self.open[-1] == tag:
            self.open.pop()
        else:
            where = f"while <{self.open[-1]}> is open" if self.open else "with nothing open"
            self.problems.append(f"</{tag}> {where}")


def unbalanced(fragment: str) -> list[str]:
    """Return what is wrong with the tags of an HTML fragment: every one closed, in order."""
    checker = _Balance()
    checker.feed(fragment)
    checker.close()
    return checker.problems + [f"<{tag}> is never closed" for tag in checker.open]


@pytest.mark.parametrize(
    ("fragment", "problems"),
    [
        ('<div class="a"><p>x<br>y</p><svg><path d="M0"/></svg></div>', []),
        ("<div><p>x</p>", ["<div> is never closed"]),
        ("<div><span>x</div></span>", ["</div> while <span> is open", "<div> is never closed"]),
        ("<p>x</p></div>", ["</div> with nothing open"]),
    ],
    ids=["whole", "missing-close", "crossed", "stray-close"],
)
def test_the_fragment_check_finds_unclosed_tags(fragment: str, problems: list[str]) -> None:
    assert unbalanced(fragment) == problems


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    sign_in(app, client)
    return client


def test_home_opens_the_latest_chat_or_a_new_one(app: Flask, demo: FlaskClient) -> None:
    first = demo.get("/")
    assert first.status_code == 302 and first.location.startswith("/chat/")
    assert demo.get("/").location == first.location
    assert len(list_sessions(get_engine(app), user_id(app))) == 1


def test_new_chat_reuses_an_empty_latest_chat(app: Flask, demo: FlaskClient) -> None:
    token = csrf(demo)
    first = demo.post("/chat", data={"csrf_token": token}).location
    assert demo.post("/chat", data={"csrf_token": token}).location == first
    start_message(get_engine(app), user_id(app), first.rsplit("/", 1)[1], "q", timedelta(0), "t")
    assert demo.post("/chat", data={"csrf_token": token}).location != first


def test_the_chat_page_has_a_labelled_question_box_that_works_without_js(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    page = soup(demo.get(f"/chat/{session_id}"))
    box = page.select_one("#" + str(page.find("label", string="Message")["for"]))
    assert box is not None and box.name == "textarea" and box["name"] == "message"
    form = box.find_parent("form")
    assert form["method"] == "post" and form["action"] == f"/chat/{session_id}/messages"
    assert form["hx-post"] == form["action"] and form["hx-swap"] == "beforeend"
    assert form.select_one('input[name="csrf_token"]')["value"]
    assert form.select_one('button[type="submit"]').get_text() == "Send"


@pytest.mark.parametrize(
    "path",
    ["/chat/{other}", "/chat/nope", "/chat/{other}/messages/x/events"],
    ids=["other-users-chat", "unknown-chat", "other-users-events"],
)
def test_other_users_chats_are_not_found(app: Flask, demo: FlaskClient, path: str) -> None:
    other = new_chat(app, "alex")
    assert demo.get(path.format(other=other)).status_code == 404


def test_asking_in_another_users_chat_is_not_found(app: Flask, demo: FlaskClient) -> None:
    other = new_chat(app, "alex")
    assert ask(demo, other, "hi").status_code == 404


def test_the_sidebar_lists_only_the_users_own_chats(app: Flask, demo: FlaskClient) -> None:
    mine, _ = new_chat(app), new_chat(app, "alex")
    links = [a["href"] for a in soup(demo.get(f"/chat/{mine}")).select("#sessions a")]
    assert links == [f"/chat/{mine}"]


def test_asking_with_htmx_returns_the_question_and_a_streaming_placeholder(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        response = ask(demo, session_id, "<b>Bold?</b> " + QUESTION)
    assert response.status_code == 200
    page = soup(response)
    assert page.select_one(".message.user .bubble").get_text() == "<b>Bold?</b> " + QUESTION
    placeholder = page.select_one("article.message.assistant")
    assert placeholder["hx-ext"] == "sse" and placeholder["sse-close"] == "done"
    assert re.fullmatch(
        rf"/chat/{session_id}/messages/[0-9a-f]+/events", str(placeholder["sse-connect"])
    )
    assert placeholder.select_one('[sse-swap="answer"] .thinking') is not None
    # Not read out while it is re-rendered; the page announces it once it is done.
    assert placeholder["aria-busy"] == "true"
    assert placeholder.select_one('[sse-swap="sources"]') is not None
    assert page.select_one('#sessions[hx-swap-oob="true"]') is not None


def test_asking_without_js_redirects_back_and_the_page_shows_the_answer(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        response = ask(demo, session_id, QUESTION, htmx=False)
    assert response.status_code == 302 and response.location == f"/chat/{session_id}"
    page = soup(demo.get(response.location))
    assert page.select_one(".message.user .bubble").get_text() == QUESTION
    answer = page.select_one("article.message.assistant")
    assert not answer.has_attr("sse-connect") and not answer.has_attr("aria-busy")
    assert "$4,782.07" in answer.select_one(".answer-body").get_text()
    assert " ".join(answer.select_one(".sources-bar").get_text().split()) == "Sources · 2"


@pytest.mark.parametrize(
    ("message", "status"),
    [("", 400), ("   ", 400), ("x" * 8001, 400)],
    ids=["empty", "blank", "too-long"],
)
def test_a_bad_question_gets_a_clear_message(
    app: Flask, demo: FlaskClient, message: str, status: int
) -> None:
    session_id = new_chat(app)
    response = ask(demo, session_id, message)
    assert response.status_code == status
    assert "Write a message" in soup(response).get_text()
    plain = ask(demo, session_id, message, htmx=False)
    assert plain.status_code == 302
    assert "Write a message" in soup(demo.get(plain.location)).select_one(".notice").get_text()


def test_asking_needs_the_csrf_token(app: Flask, demo: FlaskClient) -> None:
    assert ask(demo, new_chat(app), QUESTION, token="").status_code == 400


def test_asking_while_an_answer_is_running_is_refused(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    start_message(get_engine(app), user_id(app), session_id, "first", timedelta(minutes=5), "t")
    response = ask(demo, session_id, "second")
    assert response.status_code == 409
    assert "still answering" in soup(response).get_text()


def test_the_stream_sends_answer_fragments_then_sources_then_done(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        placeholder = soup(ask(demo, session_id, QUESTION)).select_one("[sse-connect]")
        events = read_stream(demo, str(placeholder["sse-connect"]))
    kinds = [e.event for e in events]
    assert (
        kinds[-2:] == ["sources", "done"]
        and kinds[0] == "answer"
        and set(kinds[:-2]) <= {"answer", "patch"}
    )
    final = soup(events[-3].data)
    assert "$4,782.07" in final.get_text()
    cites = final.select(".answer-body .cite")
    assert [c.get_text() for c in cites] == ["1", "2", "1", "2"]
    assert cites[0].name == "button" and cites[0]["popovertarget"]
    assert final.select_one(f"#{cites[0]['popovertarget']}[popover]") is not None
    assert cites[1].name == "a" and cites[1]["href"].startswith("/accounts/")
    sheet = soup(events[-2].data)
    assert " ".join(sheet.select_one(".sources-bar").get_text().split()) == "Sources · 2"
    assert [h.get_text() for h in sheet.select("dialog h3")] == ["Cited Sources"]
    assert events[-1].data == "complete"
    for event in events[:-1]:
        assert unbalanced(event.data) == [], event.data


def test_history_renders_the_same_html_the_stream_sent(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        placeholder = soup(ask(demo, session_id, QUESTION)).select_one("[sse-connect]")
        events = read_stream(demo, str(placeholder["sse-connect"]))
    page = soup(demo.get(f"/chat/{session_id}"))
    article = page.select_one("article.message.assistant")
    assert squash(article.select_one(".answer").decode_contents()) == squash(
        soup(events[-3].data).decode()
    )
    assert squash(article.select_one(".answer-sources").decode_contents()) == squash(
        soup(events[-2].data).decode()
    )
    assert len(page.select("article.message.assistant")) == 1


def test_the_stream_of_an_unknown_message_is_not_found(app: Flask, demo: FlaskClient) -> None:
    assert demo.get(f"/chat/{new_chat(app)}/messages/nope/events").status_code == 404


# Hostile stored answers: everything from tools and the model is text.


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
    error: str | None = None,
) -> None:
    engine = get_engine(app)
    lease = timedelta(seconds=30)
    _, answer_id = start_message(engine, user_id(app), session_id, question, lease, "test")
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
        error=error,
        done=done,
    )


HOSTILE_DOCS = [
    {
        "document_id": "d1",
        "semantic_identifier": "<script>alert('title')</script>",
        "link": "javascript:alert(1)",
        "blurb": "<img src=x onerror=alert(2)>",
        "match_highlights": ["<hi>owe</hi> <iframe src=//evil></iframe>"],
    },
    {
        "document_id": "d2",
        "semantic_identifier": "Evil <b>site</b>",
        "link": 'https://evil.example.com/x"onmouseover="alert(3)',
        "source_type": "web",
    },
    {
        "document_id": "d3",
        "semantic_identifier": "Spoofed",
        "link": "data:text/html,hi",
        "target": {"kind": "web", "url": "javascript:alert(4)"},
    },
]


def test_hostile_sources_and_answers_render_as_text(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    text = (
        "<script>alert(5)</script> [x](javascript:alert(6)) owe [[1]]() "
        "[[2]](https://evil.example.com) [[3]]() [proto](//evil.example/x) "
        "[slash](/\\evil.example/y)"
    )
    store_answer(
        app,
        session_id,
        "<i>question</i>",
        [
            {"type": "search_tool_documents_delta", "documents": HOSTILE_DOCS},
            {"type": "message_start", "final_documents": None},
            {"type": "message_delta", "content": text},
            *(
                {"type": "citation_info", "citation_number": n, "document_id": f"d{n}"}
                for n in (1, 2, 3)
            ),
            {"type": "stop", "stop_reason": None},
        ],
    )
    response = demo.get(f"/chat/{session_id}")
    page = soup(response)
    conversation = page.select_one("#conversation")
    assert not conversation.select("script, iframe, img:not(.source-icon), b, i")
    assert not page.select("[onerror], [onmouseover]")
    # The page's own links are paths on this site; the model's are absolute https URLs.
    # `//host` and `/\\host` are other sites to a browser: their words stay, as plain text.
    hrefs = [str(a["href"]) for a in conversation.select("a[href]")]
    assert hrefs and all(h.startswith("https://") or re.match(r"/[^/\\]", h) for h in hrefs), hrefs
    assert all(a.has_attr("href") for a in conversation.select("a")), "a dead <a>"
    for text in ("proto", "slash"):
        assert not [a for a in conversation.select("a") if a.get_text() == text]
        assert text in conversation.select_one(".answer-body").get_text()
    assert "<script>alert('title')</script>" in [t.get_text() for t in page.select(".source-title")]
    assert page.select_one(".message.user .bubble").get_text() == "<i>question</i>"
    assert page.select_one(".source-snippet mark").get_text() == "owe"
    assert "alert(5)" in page.select_one(".answer-body").get_text()


def test_a_failed_answer_shows_its_error(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    store_answer(
        app,
        session_id,
        "q",
        [{"type": "message_delta", "content": "Partial"}],
        status="error",
        error="The model service is <unavailable>.",
    )
    page = soup(demo.get(f"/chat/{session_id}"))
    assert page.select_one(".answer-error").get_text() == "The model service is <unavailable>."
    assert page.select_one(".sources-bar") is None


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain-form"])
def test_an_oversize_body_is_refused_before_anything_is_stored(
    app: Flask, demo: FlaskClient, htmx: bool
) -> None:
    session_id = new_chat(app)
    response = ask(demo, session_id, "x" * 100_000, htmx=htmx)
    assert response.status_code == 413
    assert "Traceback" not in response.get_data(as_text=True)
    assert soup(demo.get(f"/chat/{session_id}")).select(".message") == []


def test_the_conversation_is_not_a_live_region(app: Flask, demo: FlaskClient) -> None:
    page = soup(demo.get(f"/chat/{new_chat(app)}"))
    assert not page.select("#conversation[aria-live], #conversation [aria-live]")
    announcer = page.select_one("#announcer")
    assert announcer is not None and announcer["role"] == "status"
    assert announcer["aria-live"] == "polite" and "visually-hidden" in announcer["class"]
    # A manual popover is drawn in the top layer: above an open sheet too.
    assert page.select_one("#toast")["popover"] == "manual"
    # What app.js shows when a stream cannot reconnect: the same words as the server's.
    template = page.select_one("template#interrupted-notice")
    notice = template.find(class_="answer-interrupted") if template else None
    # (bs4 leaves a template's text out of get_text: it is inert until cloned.)
    assert notice is not None and ">Reload the page</a> to continue." in str(notice)


@pytest.mark.parametrize(
    ("accept", "status"),
    [("text/event-stream", 401), ("text/html", 302), ("*/*", 302)],
    ids=["event-source", "page", "anything"],
)
def test_a_signed_out_event_stream_is_refused_not_redirected(
    app: Flask, client: FlaskClient, accept: str, status: int
) -> None:
    response = client.get(f"/chat/{new_chat(app)}/messages/x/events", headers={"Accept": accept})
    assert response.status_code == status
    assert ("Location" in response.headers) is (status == 302)


# Asking once per rendered form.


def composer_key(page: BeautifulSoup) -> str:
    field = page.select_one('#composer input[name="idempotency_key"]')
    assert field is not None and field["id"] == "composer-key"
    return str(field["value"])


def ask_with_key(
    client: FlaskClient, session_id: str, message: str, key: str, *, htmx: bool = True
) -> TestResponse:
    headers = {"HX-Request": "true"} if htmx else {}
    data = {"message": message, "csrf_token": csrf(client), "idempotency_key": key}
    return client.post(f"/chat/{session_id}/messages", data=data, headers=headers)


def exchanges(app: Flask, session_id: str) -> list[tuple[str, str]]:
    return [
        (m.role, m.content) for m in session_messages(get_engine(app), user_id(app), session_id)
    ]


def test_each_render_of_the_question_box_carries_a_fresh_key(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    first = soup(demo.get(f"/chat/{session_id}"))
    second = soup(demo.get(f"/chat/{session_id}"))
    assert composer_key(first) != composer_key(second)
    chips = [str(f["value"]) for f in first.select('.suggestions input[name="idempotency_key"]')]
    assert len(chips) == 4 and len(set(chips + [composer_key(first)])) == 5
    # The answer sent to htmx brings the next key, out of band.
    with idle_after(app):
        response = ask_with_key(demo, session_id, QUESTION, composer_key(first))
    fresh = soup(response).select_one('#composer-key[hx-swap-oob="true"]')
    assert fresh is not None and fresh["name"] == "idempotency_key"
    assert fresh["value"] not in (composer_key(first), composer_key(second))


def test_a_form_sent_twice_without_js_asks_once_and_shows_the_answer(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    key = composer_key(soup(demo.get(f"/chat/{session_id}")))
    with idle_after(app):
        first = ask_with_key(demo, session_id, QUESTION, key, htmx=False)
        second = ask_with_key(demo, session_id, QUESTION, key, htmx=False)
    assert first.status_code == 302 and first.location == f"/chat/{session_id}"
    answer_id = session_messages(get_engine(app), user_id(app), session_id)[1].id
    assert second.status_code == 302
    assert second.location == f"/chat/{session_id}#message-{answer_id}"
    # Resubmitted once the answer has finished: still once.
    third = ask_with_key(demo, session_id, QUESTION, key, htmx=False)
    assert third.location == second.location
    assert [role for role, _ in exchanges(app, session_id)] == ["user", "assistant"]


def test_a_repeated_htmx_ask_reloads_the_page_instead_of_asking(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        first = ask_with_key(demo, session_id, QUESTION, "form-1")
        again = ask_with_key(demo, session_id, QUESTION, "form-1")
    assert first.status_code == 200
    answer_id = soup(first).select_one("article.message.assistant")["id"].removeprefix("message-")
    assert again.status_code == 204 and again.get_data() == b""
    assert again.headers["HX-Refresh"] == "true"
    assert again.headers["HX-Redirect"] == f"/chat/{session_id}#message-{answer_id}"
    assert len(exchanges(app, session_id)) == 2


def test_an_old_page_sending_a_new_question_with_its_used_key_asks_it(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        ask_with_key(demo, session_id, QUESTION, "kept-page", htmx=False)
    with idle_after(app):
        response = ask_with_key(demo, session_id, "What are my holdings?", "kept-page")
    assert response.status_code == 200
    assert [content for role, content in exchanges(app, session_id) if role == "user"] == [
        QUESTION,
        "What are my holdings?",
    ]


# Stop and Retry.


def running_answer(app: Flask, session_id: str, text: str = "Partial answer") -> str:
    """Store a question and a running answer that has written `text` (no runner)."""
    engine = get_engine(app)
    lease = timedelta(minutes=5)
    _, answer_id = start_message(engine, user_id(app), session_id, "What do I owe?", lease, "t")
    objs: list[dict[str, Any]] = [
        {"type": "message_start", "final_documents": None},
        {"type": "message_delta", "content": text},
    ]
    for seq, obj in enumerate(objs, start=1):
        append_event(engine, answer_id, "t", lease, StoredEvent(seq, "packet", _packet(obj)))
    return answer_id


def cancel(
    client: FlaskClient,
    session_id: str,
    answer_id: str,
    *,
    htmx: bool = False,
    token: str | None = None,
) -> TestResponse:
    headers = {"HX-Request": "true"} if htmx else {}
    data = {"csrf_token": csrf(client) if token is None else token}
    return client.post(
        f"/chat/{session_id}/messages/{answer_id}/cancel", data=data, headers=headers
    )


def test_a_streaming_answer_has_a_stop_button_that_works_without_js(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    answer_id = running_answer(app, session_id)
    article = soup(demo.get(f"/chat/{session_id}")).select_one("article.message.assistant")
    form = article.select_one(".answer form.answer-stop")
    assert form is not None and form["method"] == "post"
    assert form["action"] == form["hx-post"] == f"/chat/{session_id}/messages/{answer_id}/cancel"
    assert form.select_one('input[name="csrf_token"]')["value"]
    assert form.select_one('button[type="submit"]').get_text() == "Stop"
    assert article.select_one(".answer-regenerate") is None

    response = cancel(demo, session_id, answer_id)
    assert response.status_code == 302
    assert response.location == f"/chat/{session_id}#message-{answer_id}"
    article = soup(demo.get(f"/chat/{session_id}")).select_one("article.message.assistant")
    assert not article.has_attr("sse-connect")
    assert article.select_one(".answer-body").get_text().strip() == "Partial answer"
    assert article.select_one(".answer-stopped").get_text() == "Stopped."
    assert article.select_one(".answer-stop") is None
    retry = article.select_one("form.answer-regenerate")
    assert retry["action"] == f"/chat/{session_id}/messages/{answer_id}/regenerate"
    assert retry.select_one("button").get_text() == "Retry"
    assert retry.select_one('input[name="csrf_token"]')["value"]
    stored = session_messages(get_engine(app), user_id(app), session_id)[1]
    assert stored.status == "cancelled" and stored.content == "Partial answer"


def test_stop_with_htmx_answers_no_content_and_the_stream_shows_it_stopped(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    answer_id = running_answer(app, session_id, "Your cards total")
    response = cancel(demo, session_id, answer_id, htmx=True)
    assert response.status_code == 204
    # Stopping an answer that has already ended changes nothing.
    assert cancel(demo, session_id, answer_id, htmx=True).status_code == 204
    events = read_stream(demo, f"/chat/{session_id}/messages/{answer_id}/events")
    answers = [soup(e.data) for e in events if e.event == "answer"]
    # While it streamed, the answer had Stop; its final render has none, and says Stopped.
    assert answers[0].select_one("form.answer-stop button").get_text() == "Stop"
    final = answers[-1]
    assert final.select_one(".answer-stop") is None
    assert final.select_one(".answer-stopped").get_text() == "Stopped."
    assert final.select_one(".answer-body").get_text().strip() == "Your cards total"
    assert final.select_one("form.answer-regenerate button").get_text() == "Retry"
    assert events[-1].event == "done"
    for event in events[:-1]:
        assert unbalanced(event.data) == [], event.data


def test_a_complete_answer_offers_regenerate_not_stop_or_retry(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        placeholder = soup(ask(demo, session_id, QUESTION)).select_one("article.assistant")
        events = read_stream(demo, str(placeholder["sse-connect"]))
    assert placeholder.select_one("form.answer-stop button").get_text() == "Stop"
    assert placeholder.select_one(".answer-regenerate") is None
    final = soup([e for e in events if e.event == "answer"][-1].data)
    page = soup(demo.get(f"/chat/{session_id}"))
    for drawn in (final, page):
        assert drawn.select_one(".answer-stop, .answer-stopped") is None
        assert drawn.select_one("form.answer-regenerate button").get_text() == "Regenerate"


def test_a_failed_answer_offers_retry(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    store_answer(
        app,
        session_id,
        "q",
        [{"type": "message_delta", "content": "Partial"}],
        status="error",
        error="The model service is unavailable.",
    )
    page = soup(demo.get(f"/chat/{session_id}"))
    assert page.select_one("form.answer-regenerate button").get_text() == "Retry"
    assert page.select_one(".answer-stopped") is None


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain-form"])
def test_retry_answers_the_same_question_again_in_place(
    app: Flask, demo: FlaskClient, htmx: bool
) -> None:
    session_id = new_chat(app)
    answer_id = running_answer(app, session_id)
    cancel(demo, session_id, answer_id)
    retry = soup(demo.get(f"/chat/{session_id}")).select_one("form.answer-regenerate")
    assert retry["hx-target"] == f"#message-{answer_id}" and retry["hx-swap"] == "outerHTML"
    data = {
        "csrf_token": csrf(demo),
        "idempotency_key": retry.select_one('input[name="idempotency_key"]')["value"],
    }
    headers = {"HX-Request": "true"} if htmx else {}
    with idle_after(app):
        response = demo.post(str(retry["action"]), data=data, headers=headers)
        # The same Retry button twice answers once.
        twice = demo.post(str(retry["action"]), data=data, headers=headers)
    messages = session_messages(get_engine(app), user_id(app), session_id)
    # The question is not repeated: the new version stands in the stopped one's place.
    assert [(m.role, m.content) for m in messages][:1] == [("user", "What do I owe?")]
    assert [m.role for m in messages] == ["user", "assistant"]
    version = messages[1]
    assert version.status == "complete" and version.version_of == answer_id
    if htmx:
        assert response.status_code == 200
        page = soup(response)
        assert page.select_one(".message.user") is None
        article = page.select_one("article.message.assistant")
        assert article["id"] == f"message-{version.id}" and article["sse-connect"]
        assert twice.status_code == 204 and twice.headers["HX-Refresh"] == "true"
    else:
        assert response.status_code == 302
        assert response.location == f"/chat/{session_id}#message-{version.id}"
        assert twice.status_code == 302 and twice.location == response.location


def test_only_the_latest_answer_can_be_regenerated(app: Flask, demo: FlaskClient) -> None:
    session_id = new_chat(app)
    for question in (QUESTION, "What are my holdings?"):
        with idle_after(app):
            ask(demo, session_id, question, htmx=False)
    first = session_messages(get_engine(app), user_id(app), session_id)[1].id
    page = soup(demo.get(f"/chat/{session_id}"))
    assert page.select_one(f"#message-{first} .answer-regenerate") is None
    assert len(page.select("form.answer-regenerate")) == 1
    url = f"/chat/{session_id}/messages/{first}/regenerate"
    response = demo.post(url, data={"csrf_token": csrf(demo)}, headers={"HX-Request": "true"})
    assert response.status_code == 409
    assert "Only the latest answer" in soup(response).get_text()
    assert len(session_messages(get_engine(app), user_id(app), session_id)) == 4


@pytest.mark.parametrize("action", ["cancel", "regenerate"])
def test_stop_and_retry_need_the_csrf_token_and_the_users_own_answer(
    app: Flask, demo: FlaskClient, action: str
) -> None:
    mine = new_chat(app)
    answer_id = running_answer(app, mine)
    theirs = new_chat(app, "alex")
    their_answer = start_message(
        get_engine(app), user_id(app, "alex"), theirs, "q", timedelta(minutes=5), "t"
    )[1]
    token = csrf(demo)
    assert (
        demo.post(
            f"/chat/{mine}/messages/{answer_id}/{action}", data={"csrf_token": ""}
        ).status_code
        == 400
    )
    for path in (
        f"/chat/{theirs}/messages/{their_answer}/{action}",
        f"/chat/{mine}/messages/{their_answer}/{action}",
        f"/chat/{mine}/messages/nope/{action}",
    ):
        assert demo.post(path, data={"csrf_token": token}).status_code == 404, path
    statuses = [m.status for m in session_messages(get_engine(app), user_id(app), mine)]
    assert statuses == ["complete", "running"]
    alex = [m.status for m in session_messages(get_engine(app), user_id(app, "alex"), theirs)]
    assert alex == ["complete", "running"]


# Rename and delete in the sidebar.


def sidebar_forms(page: BeautifulSoup, session_id: str) -> tuple[Any, Any]:
    rename = page.select_one(f'#sessions form[action="/chat/{session_id}/rename"]')
    delete = page.select_one(f'#sessions form[action="/chat/{session_id}/delete"]')
    assert rename is not None and delete is not None
    return rename, delete


def post_form(client: FlaskClient, form: Any, *, htmx: bool = False, **values: str) -> TestResponse:
    data = {str(f["name"]): str(f.get("value", "")) for f in form.select("input[name]")}
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(str(form["action"]), data={**data, **values}, headers=headers)


def test_each_chat_in_the_sidebar_can_be_renamed_and_deleted_without_js(
    app: Flask, demo: FlaskClient
) -> None:
    first, second = used_chat(app), new_chat(app)
    page = soup(demo.get(f"/chat/{second}"))
    for session_id in (first, second):
        rename, delete = sidebar_forms(page, session_id)
        for form in (rename, delete):
            assert form["method"] == "post" and form["hx-post"] == form["action"]
            assert form["hx-target"] == "#sessions" and form["hx-swap"] == "outerHTML"
            assert form.select_one('input[name="csrf_token"]')["value"]
            assert form.select_one('input[name="open"]')["value"] == second
        title = rename.select_one('input[name="title"]')
        assert title["value"] == "New chat" and title["maxlength"] == "80"
        assert page.select_one(f'label[for="{title["id"]}"]').get_text() == "Chat name"
        # Delete asks first: its form is in a second popover, opened from the menu.
        menu = page.select_one(f"#chat-menu-{session_id}")
        assert menu.has_attr("popover") and rename in menu.select("form")
        confirm = page.select_one(f"#chat-delete-{session_id}")
        assert confirm.has_attr("popover") and delete.find_parent(id=confirm["id"])
        assert menu.select_one(f'[popovertarget="{confirm["id"]}"]').get_text() == "Delete chat…"
        assert delete.select_one("button").get_text() == "Delete"


def test_renaming_without_js_returns_to_the_open_chat(app: Flask, demo: FlaskClient) -> None:
    first, second = used_chat(app), new_chat(app)
    rename, _ = sidebar_forms(soup(demo.get(f"/chat/{second}")), first)
    response = post_form(demo, rename, title="  Taxes  ")
    assert response.status_code == 302 and response.location == f"/chat/{second}"
    assert get_session(get_engine(app), user_id(app), first).title == "Taxes"
    page = soup(demo.get(f"/chat/{first}"))
    assert page.select_one("title").get_text() == "Taxes · Finance Chat"


def test_renaming_with_htmx_swaps_the_sidebar_in_place(app: Flask, demo: FlaskClient) -> None:
    first, second = used_chat(app), new_chat(app)
    page = soup(demo.get(f"/chat/{second}"))
    other = post_form(demo, sidebar_forms(page, first)[0], htmx=True, title="Budget <b>")
    assert other.status_code == 200
    swapped = soup(other)
    assert swapped.select_one("nav#sessions") is not None and swapped.select_one("title") is None
    links = {a["href"]: a for a in swapped.select("#sessions a")}
    assert links[f"/chat/{first}"].get_text() == "Budget <b>"
    assert links[f"/chat/{second}"]["aria-current"] == "page"
    # Renaming the open chat renames the page as well.
    own = soup(post_form(demo, sidebar_forms(page, second)[0], htmx=True, title="Open one"))
    assert own.select_one("title").get_text() == "Open one · Finance Chat"


@pytest.mark.parametrize(
    "title",
    ["", "   ", "x" * 81, "line\nbreak", "\u202eevil"],
    ids=["empty", "blank", "too-long", "newline", "bidi"],
)
def test_a_bad_title_gets_a_clear_message(app: Flask, demo: FlaskClient, title: str) -> None:
    session_id = new_chat(app)
    rename, _ = sidebar_forms(soup(demo.get(f"/chat/{session_id}")), session_id)
    response = post_form(demo, rename, htmx=True, title=title)
    assert response.status_code == 400 and soup(response).select_one(".notice").get_text()
    plain = post_form(demo, rename, title=title)
    assert plain.status_code == 302
    assert soup(demo.get(plain.location)).select_one(".notice").get_text()
    assert get_session(get_engine(app), user_id(app), session_id).title == "New chat"


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain-form"])
def test_deleting_another_chat_stays_on_the_open_one(
    app: Flask, demo: FlaskClient, htmx: bool
) -> None:
    first, second = new_chat(app), new_chat(app)
    store_answer(app, first, "q", [{"type": "message_delta", "content": "a"}])
    _, delete = sidebar_forms(soup(demo.get(f"/chat/{second}")), first)
    response = post_form(demo, delete, htmx=htmx)
    if htmx:
        assert response.status_code == 200
        assert [a["href"] for a in soup(response).select("#sessions a")] == [f"/chat/{second}"]
    else:
        assert response.status_code == 302 and response.location == f"/chat/{second}"
    assert get_session(get_engine(app), user_id(app), first) is None
    assert session_messages(get_engine(app), user_id(app), first) == []
    assert demo.get(f"/chat/{first}").status_code == 404


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain-form"])
def test_deleting_the_open_chat_goes_to_the_latest_other_chat_or_a_new_one(
    app: Flask, demo: FlaskClient, htmx: bool
) -> None:
    older, latest, open_chat = new_chat(app), new_chat(app), new_chat(app)
    store_answer(app, older, "old", [])
    store_answer(app, latest, "new", [])  # used last: first in the list
    store_answer(app, open_chat, "open", [])

    def delete_open(session_id: str) -> str:
        _, delete = sidebar_forms(soup(demo.get(f"/chat/{session_id}")), session_id)
        response = post_form(demo, delete, htmx=htmx)
        if htmx:
            assert response.status_code == 204
            return str(response.headers["HX-Redirect"])
        assert response.status_code == 302
        return str(response.location)

    assert delete_open(open_chat) == f"/chat/{latest}"
    assert delete_open(latest) == f"/chat/{older}"
    where = delete_open(older)
    remaining = list_sessions(get_engine(app), user_id(app))
    assert [s.id for s in remaining] == [where.rsplit("/", 1)[1]]
    assert remaining[0].title == "New chat"


def test_deleting_a_chat_stops_its_running_answer(
    app: Flask, demo: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    session_id = new_chat(app)
    answer_id = running_answer(app, session_id)
    stopped: list[str] = []
    with app.app_context():
        service = chat_service()
    real_cancel = service.cancel

    def spy(user: int, session: str, message: str) -> bool:
        stopped.append(message)
        return real_cancel(user, session, message)

    monkeypatch.setattr(service, "cancel", spy)
    _, delete = sidebar_forms(soup(demo.get(f"/chat/{session_id}")), session_id)
    assert post_form(demo, delete).status_code == 302
    assert stopped == [answer_id]
    assert get_message(get_engine(app), user_id(app), session_id, answer_id) is None


@pytest.mark.parametrize("action", ["rename", "delete"])
def test_rename_and_delete_need_the_csrf_token_and_the_users_own_chat(
    app: Flask, demo: FlaskClient, action: str
) -> None:
    mine, theirs = new_chat(app), new_chat(app, "alex")
    token = csrf(demo)
    assert (
        demo.post(f"/chat/{mine}/{action}", data={"csrf_token": "", "title": "x"}).status_code
        == 400
    )
    for target in (theirs, "nope"):
        response = demo.post(
            f"/chat/{target}/{action}",
            data={"csrf_token": token, "title": "Mine now", "open": mine},
        )
        assert response.status_code == 404
    assert get_session(get_engine(app), user_id(app, "alex"), theirs).title == "New chat"
    assert get_session(get_engine(app), user_id(app), mine).title == "New chat"


def test_without_javascript_the_sources_bar_is_a_link_to_a_page_of_the_sources(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        ask(demo, session_id, "What do I owe on my credit cards?", htmx=False)
    page = soup(demo.get(f"/chat/{session_id}"))
    bar = page.select_one(".sources-bar")
    assert bar is not None and bar.name == "a" and bar["role"] == "button"
    listed = soup(demo.get(bar["href"]))
    assert listed.select_one("h1").get_text() == "Sources"
    assert [h.get_text() for h in listed.select("h2")] == [
        h.get_text() for h in page.select(".sheet-section h3")
    ]
    rows = [r.get_text(" ", strip=True) for r in listed.select(".source-list li")]
    assert rows and rows == [
        r.get_text(" ", strip=True) for r in page.select(".sheet .source-list li")
    ]
    back = listed.select_one('a[href^="/chat/"]')
    assert back is not None and back["href"].startswith(f"/chat/{session_id}#message-")
    # Another user's answer is not found, whatever its id.
    other = app.test_client()
    sign_in(app, other, "alex")
    assert other.get(bar["href"]).status_code == 404


def test_copy_is_offered_on_a_written_answer_not_while_it_is_written(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = new_chat(app)
    with idle_after(app):
        placeholder = soup(ask(demo, session_id, "What do I owe on my credit cards?"))
    assert placeholder.select_one("article.assistant .answer-copy") is None
    page = soup(demo.get(f"/chat/{session_id}"))
    copy = page.select("article.assistant .answer-copy")
    assert len(copy) == 1 and copy[0].get_text() == "Copy" and copy[0].has_attr("data-copy-answer")
