"""Regenerate, versions and Edit in the JSON API; what the model is sent is the chat as shown."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask

from tests.support.apps import ApiClient, api_client, idle_after
from tests.support.fake_claude import FakeClaude, text_reply


def _texts(request: dict[str, Any]) -> list[tuple[str, str]]:
    """Return the conversation a request sent the model: (role, its text), oldest first."""
    sent = []
    for message in request["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        sent.append((message["role"], str(content)))
    return sent


def _done(app: Flask, api: ApiClient, session_id: str, body: dict[str, Any]) -> dict[str, Any]:
    with idle_after(app):
        api.stream(body["stream_url"])
    return api.wait_done(session_id)


def _ask(app: Flask, api: ApiClient, session_id: str, question: str) -> dict[str, Any]:
    return _done(app, api, session_id, api.ask(session_id, question))


def test_regenerate_writes_a_version_in_place_from_the_chat_as_shown(
    claude_app: tuple[Flask, FakeClaude],
) -> None:
    app, fake = claude_app
    fake.replies += [
        text_reply(("Cards: $100.", [])),
        text_reply(("Holdings: AAPL.", [])),
        text_reply(("Holdings: AAPL and VTI.", [])),
        text_reply(("About your holdings, again.", [])),
    ]
    api = api_client(app)
    session_id = api.new_session()
    _ask(app, api, session_id, "What do I owe?")
    asked = _ask(app, api, session_id, "What do I hold?")
    old = asked["messages"][-1]["id"]

    response = api.http.post(f"/api/chat/sessions/{session_id}/messages/{old}/regenerate")
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["stream_url"].endswith(f"/messages/{body['message_id']}/stream")
    shown = _done(app, api, session_id, body)["messages"]
    # The question is not repeated, and the new version stands in the old one's place.
    assert [(m["role"], m["content"]) for m in shown] == [
        ("user", "What do I owe?"),
        ("assistant", "Cards: $100."),
        ("user", "What do I hold?"),
        ("assistant", "Holdings: AAPL and VTI."),
    ]
    assert shown[-1]["versions"] == [old, body["message_id"]]
    assert shown[-1]["version_of"] == old and shown[1]["versions"] == [shown[1]["id"]]
    # The model was asked the question once, after the chat before it, not its old answer.
    assert _texts(fake.requests[2]) == [
        ("user", "What do I owe?"),
        ("assistant", "Cards: $100."),
        ("user", "What do I hold?"),
    ]

    # Showing the first version again is kept, and the next question's history says it.
    flipped = api.http.post(f"/api/chat/sessions/{session_id}/messages/{old}/show")
    assert flipped.status_code == 200 and flipped.json()["id"] == old
    assert flipped.json()["versions"] == [old, body["message_id"]]
    assert api.session(session_id)["messages"][-1]["content"] == "Holdings: AAPL."
    _ask(app, api, session_id, "And again?")
    assert ("assistant", "Holdings: AAPL.") in _texts(fake.requests[3])
    assert ("assistant", "Holdings: AAPL and VTI.") not in _texts(fake.requests[3])


def test_only_the_latest_answer_is_regenerated_and_never_while_one_is_written(
    app: Flask,
) -> None:
    api = api_client(app)
    session_id = api.new_session()
    first = _ask(app, api, session_id, "What do I owe on my credit cards?")["messages"][-1]["id"]
    _ask(app, api, session_id, "How is my portfolio invested?")
    late = api.http.post(f"/api/chat/sessions/{session_id}/messages/{first}/regenerate")
    assert late.status_code == 409 and "latest answer" in late.json()["error"]
    question = api.session(session_id)["messages"][0]["id"]
    not_an_answer = api.http.post(f"/api/chat/sessions/{session_id}/messages/{question}/regenerate")
    assert not_an_answer.status_code == 404
    other = api_client(app, "alex")
    their = other.http.post(f"/api/chat/sessions/{session_id}/messages/{first}/regenerate")
    assert their.status_code == 404
    assert len(api.session(session_id)["messages"]) == 4


def test_edit_asks_in_place_and_what_followed_leaves_the_chat_and_the_history(
    claude_app: tuple[Flask, FakeClaude],
) -> None:
    app, fake = claude_app
    fake.replies += [
        text_reply(("One.", [])),
        text_reply(("Two.", [])),
        text_reply(("Edited.", [])),
    ]
    api = api_client(app)
    session_id = api.new_session()
    _ask(app, api, session_id, "first")
    before = _ask(app, api, session_id, "second")["messages"]
    question = before[0]["id"]

    url = f"/api/chat/sessions/{session_id}/messages/{question}/edit"
    assert api.http.post(url, json={"message": "  "}).status_code == 400
    response = api.http.post(url, json={"message": "first, edited"})
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["left_out"] == [m["id"] for m in before]
    shown = _done(app, api, session_id, body)["messages"]
    assert [(m["role"], m["content"]) for m in shown] == [
        ("user", "first, edited"),
        ("assistant", "Edited."),
    ]
    assert shown[0]["id"] == body["question_id"] and shown[0]["version_of"] == question
    assert shown[1]["id"] == body["message_id"]
    # The model saw only the edited question: nothing of the branch it replaced.
    assert _texts(fake.requests[-1]) == [("user", "first, edited")]
    assert "Two." not in json.dumps(fake.requests[-1]["messages"])
    # What an edit left out can be neither edited nor shown again.
    again = api.http.post(url, json={"message": "once more"})
    assert again.status_code == 409
    show = api.http.post(f"/api/chat/sessions/{session_id}/messages/{before[1]['id']}/show")
    assert show.status_code == 409
