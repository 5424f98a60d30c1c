"""Regenerate, versions and Edit on the chat page: plain forms without JavaScript, htmx in place."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.support.apps import idle_after
from tests.test_web_chat import ask, csrf, new_chat, read_stream, sign_in, soup, user_id
from webapp.chat.conversations import session_messages
from webapp.store.app_db import get_engine

CARDS = "What do I owe on my credit cards?"
HOLDINGS = "How is my portfolio invested?"
HTMX = {"HX-Request": "true"}


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    sign_in(app, client)
    return client


def _asked(app: Flask, client: FlaskClient, *questions: str) -> str:
    session_id = new_chat(app)
    for question in questions:
        with idle_after(app):
            ask(client, session_id, question, htmx=False)
    return session_id


def _contents(app: Flask, session_id: str) -> list[str]:
    return [m.content for m in session_messages(get_engine(app), user_id(app), session_id)]


def _post(client: FlaskClient, url: str, htmx: bool, **fields: str) -> object:
    return client.post(
        url, data={"csrf_token": csrf(client), **fields}, headers=HTMX if htmx else {}
    )


@pytest.mark.parametrize("htmx", [False, True], ids=["plain-form", "htmx"])
def test_regenerate_then_flip_between_versions(app: Flask, demo: FlaskClient, htmx: bool) -> None:
    session_id = _asked(app, demo, CARDS)
    page = soup(demo.get(f"/chat/{session_id}"))
    first = page.select_one("article.message.assistant")["id"].removeprefix("message-")
    form = page.select_one("form.answer-regenerate")
    assert form["method"] == "post" and form.select_one('input[name="csrf_token"]')["value"]
    assert page.select_one(".versions") is None  # one version: no count
    with idle_after(app):
        response = _post(demo, str(form["action"]), htmx)
    messages = session_messages(get_engine(app), user_id(app), session_id)
    assert [m.role for m in messages] == ["user", "assistant"]
    second = messages[1].id
    assert second != first and messages[1].version_of == first
    if htmx:
        assert response.status_code == 200  # type: ignore[attr-defined]
        article = soup(response).select_one("article.message.assistant")  # type: ignore[arg-type]
        assert article["id"] == f"message-{second}"
        # While it is written it streams, with Stop; its stream's last render has the versions.
        events = read_stream(demo, str(article["sse-connect"]))
        final = soup([e for e in events if e.event == "answer"][-1].data)
        assert final.select_one(".version-count").get_text(" ", strip=True) == "Version 2 / 2"
    else:
        assert response.location == f"/chat/{session_id}#message-{second}"  # type: ignore[attr-defined]

    # The page after a reload: 2 / 2, Previous version posts to the first, Next is disabled.
    page = soup(demo.get(f"/chat/{session_id}"))
    versions = page.select_one(f"#message-{second} .versions")
    assert versions["role"] == "group"
    assert versions.select_one(".version-count").get_text(strip=True).endswith("2 / 2")
    previous = versions.select_one('button[aria-label="Previous version"]')
    assert previous.find_parent("form")["action"] == f"/chat/{session_id}/messages/{first}/show"
    assert versions.select_one('button[aria-label="Next version"]').has_attr("disabled")

    flipped = _post(demo, str(previous.find_parent("form")["action"]), htmx)
    if htmx:
        article = soup(flipped).select_one("article.message.assistant")  # type: ignore[arg-type]
        assert article["id"] == f"message-{first}"
        assert article.select_one(".version-count").get_text(strip=True).endswith("1 / 2")
    else:
        assert flipped.location == f"/chat/{session_id}#message-{first}"  # type: ignore[attr-defined]
    # The choice is kept: the page shows the first version on every reload.
    page = soup(demo.get(f"/chat/{session_id}"))
    (article,) = page.select("article.message.assistant")
    assert article["id"] == f"message-{first}"
    assert article.select_one(".version-count").get_text(strip=True).endswith("1 / 2")
    assert article.select_one('button[aria-label="Previous version"]').has_attr("disabled")


@pytest.mark.parametrize("htmx", [False, True], ids=["plain-form", "htmx"])
def test_edit_a_question_and_what_followed_it_leaves_the_chat(
    app: Flask, demo: FlaskClient, htmx: bool
) -> None:
    session_id = _asked(app, demo, CARDS, HOLDINGS)
    page = soup(demo.get(f"/chat/{session_id}"))
    first_question = page.select("article.message.user")[0]
    link = first_question.select_one("a.question-edit-link")
    assert link.get_text(" ", strip=True) == "Edit this question"
    # Without JavaScript the link opens the chat with the question as a form; htmx swaps it in.
    opened = demo.get(str(link["href"]), headers=HTMX if htmx else {})
    assert opened.status_code == 200
    form = soup(opened).select_one("form.question-edit")
    assert form.select_one("textarea").get_text() == CARDS
    assert form.select_one("label").get_text() == "Edit your question"
    if not htmx:
        assert soup(opened).select_one("#composer") is not None  # the whole chat page

    left = [m.id for m in session_messages(get_engine(app), user_id(app), session_id)]
    with idle_after(app):
        response = _post(demo, str(form["action"]), htmx, message="What do I owe on my Citi card?")
    assert _contents(app, session_id)[0] == "What do I owe on my Citi card?"
    assert len(_contents(app, session_id)) == 2
    if htmx:
        swapped = soup(response)  # type: ignore[arg-type]
        assert swapped.select_one(".message.user .bubble").get_text() == (
            "What do I owe on my Citi card?"
        )
        assert swapped.select_one("article.message.assistant")["sse-connect"]
        deleted = {d["id"] for d in swapped.select('[hx-swap-oob="delete"]')}
        assert deleted == {f"message-{i}" for i in left[1:]}
    else:
        assert response.status_code == 302 and "#message-" in response.location  # type: ignore[attr-defined]
    page = soup(demo.get(f"/chat/{session_id}"))
    assert [b.get_text() for b in page.select(".message.user .bubble")] == [
        "What do I owe on my Citi card?"
    ]
    assert len(page.select("article.message.assistant")) == 1


def test_edit_and_version_forms_need_the_token_and_the_users_own_chat(
    app: Flask, demo: FlaskClient
) -> None:
    session_id = _asked(app, demo, CARDS)
    question, answer = (m.id for m in session_messages(get_engine(app), user_id(app), session_id))
    for path in (f"messages/{question}/edit", f"messages/{answer}/show"):
        url = f"/chat/{session_id}/{path}"
        assert demo.post(url, data={"csrf_token": "", "message": "x"}).status_code == 400
    theirs = new_chat(app, "alex")
    token = csrf(demo)
    for url in (
        f"/chat/{theirs}/messages/{question}/edit",
        f"/chat/{session_id}/messages/nope/edit",
        f"/chat/{session_id}/messages/{answer}/edit",  # an answer is no question
        f"/chat/{session_id}/messages/{question}/show",  # a question has no versions
    ):
        assert demo.post(url, data={"csrf_token": token, "message": "x"}).status_code == 404, url
    assert demo.get(f"/chat/{session_id}/messages/nope/edit").status_code == 404
    assert _contents(app, session_id)[0] == CARDS


def test_a_blank_edit_is_refused_and_keeps_the_question(app: Flask, demo: FlaskClient) -> None:
    session_id = _asked(app, demo, CARDS)
    question = session_messages(get_engine(app), user_id(app), session_id)[0].id
    url = f"/chat/{session_id}/messages/{question}/edit"
    response = _post(demo, url, False, message="   ")
    assert response.status_code == 302 and response.location == url  # type: ignore[attr-defined]
    page = soup(demo.get(url))
    assert "Write a message" in page.select_one(".notice").get_text()
    assert _contents(app, session_id)[0] == CARDS
