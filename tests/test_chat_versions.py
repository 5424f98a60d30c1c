"""Versions of an answer and questions edited in place, in the store (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

from webapp.chat import conversations, leases, notes, records, versions
from webapp.chat.leases import SessionBusy, TooManyTurns

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

LEASE = timedelta(seconds=30)
CHECKPOINT: dict[str, Any] = {"messages": []}


def _finish(backend: SqlBackend, answer_id: str, owner: str, text: str) -> None:
    leases.finish_message(
        backend.engine,
        answer_id,
        owner,
        status="complete",
        content=text,
        citations=[],
        inline_citations=[],
        error=None,
        done=notes.StoredEvent(1, "done", '{"status": "complete"}'),
    )


def _exchange(backend: SqlBackend, session_id: str, question: str, answer: str) -> tuple[str, str]:
    owner = records.new_id()
    user = backend.users["demo"]
    ids = leases.start_message(backend.engine, user.id, session_id, question, LEASE, owner)
    _finish(backend, ids[1], owner, answer)
    return ids


def _regenerate(backend: SqlBackend, session_id: str, answer_id: str, text: str | None) -> str:
    """Write a new version of the answer; finish it with `text` unless None (still running)."""
    owner = records.new_id()
    user = backend.users["demo"]
    version = versions.start_version(
        backend.engine, user.id, session_id, answer_id, LEASE, owner, CHECKPOINT
    )
    if text is not None:
        _finish(backend, version, owner, text)
    return version


def _shown(backend: SqlBackend, session_id: str) -> list[str]:
    user = backend.users["demo"]
    return [m.content for m in conversations.session_messages(backend.engine, user.id, session_id)]


def _history(backend: SqlBackend, session_id: str) -> list[str]:
    user = backend.users["demo"]
    return [m["content"] for m in conversations.text_history(backend.engine, user.id, session_id)]


def test_a_new_version_takes_the_answers_place_and_the_chosen_one_stays_shown(
    sql_backend: SqlBackend,
) -> None:
    engine, user = sql_backend.engine, sql_backend.users["demo"]
    session = conversations.create_session(engine, user.id)
    _, first = _exchange(sql_backend, session.id, "What do I owe?", "first answer")
    second = _regenerate(sql_backend, session.id, first, "second answer")

    # The question is not repeated; the new version stands in the old one's place.
    assert _shown(sql_backend, session.id) == ["What do I owe?", "second answer"]
    assert _history(sql_backend, session.id) == ["What do I owe?", "second answer"]
    messages = conversations.session_messages(engine, user.id, session.id)
    found = versions.versions_of(engine, user.id, messages)[second]
    assert (found.ids, found.number, found.count) == ((first, second), 2, 2)
    assert (found.previous, found.next) == (first, None)
    assert messages[1].version_of == first

    # Showing the first again is kept: the chat and the model's history say it from now on.
    versions.show_version(engine, user.id, session.id, first)
    assert _shown(sql_backend, session.id) == ["What do I owe?", "first answer"]
    assert _history(sql_backend, session.id) == ["What do I owe?", "first answer"]
    messages = conversations.session_messages(engine, user.id, session.id)
    found = versions.versions_of(engine, user.id, messages)[first]
    assert (found.number, found.count, found.next) == (1, 2, second)

    # A third version is a version of the first, whichever was shown.
    third = _regenerate(sql_backend, session.id, first, "third answer")
    messages = conversations.session_messages(engine, user.id, session.id)
    assert versions.versions_of(engine, user.id, messages)[third].ids == (first, second, third)
    stored = conversations.get_message(engine, user.id, session.id, third)
    assert stored is not None and stored.version_of == first


def test_only_the_latest_answer_is_regenerated(sql_backend: SqlBackend) -> None:
    engine, user = sql_backend.engine, sql_backend.users["demo"]
    session = conversations.create_session(engine, user.id)
    _, first = _exchange(sql_backend, session.id, "one", "answer one")
    _exchange(sql_backend, session.id, "two", "answer two")
    with pytest.raises(versions.NotLatest):
        versions.question_for(engine, user.id, session.id, first)
    with pytest.raises(versions.NotLatest):
        _regenerate(sql_backend, session.id, first, "again")
    assert _shown(sql_backend, session.id) == ["one", "answer one", "two", "answer two"]


def test_regenerating_keeps_one_running_answer_per_chat_and_the_users_cap(
    sql_backend: SqlBackend,
) -> None:
    engine, user = sql_backend.engine, sql_backend.users["demo"]
    session = conversations.create_session(engine, user.id)
    _, first = _exchange(sql_backend, session.id, "q", "a")
    running = _regenerate(sql_backend, session.id, first, None)
    with pytest.raises((SessionBusy, versions.NotLatest)):
        _regenerate(sql_backend, session.id, running, None)
    with pytest.raises(versions.VersionBusy):
        versions.show_version(engine, user.id, session.id, first)

    other = conversations.create_session(engine, user.id)
    _, answer = _exchange(sql_backend, other.id, "q", "a")
    with pytest.raises(TooManyTurns):
        versions.start_version(
            engine, user.id, other.id, answer, LEASE, "o", CHECKPOINT, max_running=1
        )
    # Refused whole: the answer refused a new version is still the one shown.
    assert _shown(sql_backend, other.id) == ["q", "a"]


def test_an_edited_question_is_asked_in_its_place_and_what_followed_leaves_the_chat(
    sql_backend: SqlBackend,
) -> None:
    engine, user = sql_backend.engine, sql_backend.users["demo"]
    session = conversations.create_session(engine, user.id)
    _exchange(sql_backend, session.id, "first question", "first answer")
    asked, answered = _exchange(sql_backend, session.id, "second question", "second answer")
    version = _regenerate(sql_backend, session.id, answered, "second answer again")
    _exchange(sql_backend, session.id, "third question", "third answer")

    owner = records.new_id()
    edited = versions.start_edit(
        engine, user.id, session.id, asked, "second, edited", LEASE, owner, CHECKPOINT
    )
    _finish(sql_backend, edited.answer_id, owner, "edited answer")
    shown = conversations.session_messages(engine, user.id, session.id)
    assert [m.content for m in shown] == [
        "first question",
        "first answer",
        "second, edited",
        "edited answer",
    ]
    assert shown[2].id == edited.question_id and shown[2].version_of == asked
    # What was shown from the edited question on left the chat, and the model's history.
    assert len(edited.left_out) == 4 and edited.left_out[:2] == (asked, version)
    assert answered not in edited.left_out  # a version not shown was not in the chat
    assert _history(sql_backend, session.id) == [m.content for m in shown]
    # For good: none of it can be shown or edited again.
    with pytest.raises(versions.NotInChat):
        versions.show_version(engine, user.id, session.id, answered)
    with pytest.raises(versions.NotInChat):
        versions.question_to_edit(engine, user.id, session.id, asked)
    # The new answer has no versions of the old ones.
    found = versions.versions_of(engine, user.id, shown)[edited.answer_id]
    assert found.count == 1


def test_history_before_a_question_is_what_was_shown_before_it(sql_backend: SqlBackend) -> None:
    engine, user = sql_backend.engine, sql_backend.users["demo"]
    session = conversations.create_session(engine, user.id)
    _exchange(sql_backend, session.id, "one", "answer one")
    asked, _ = _exchange(sql_backend, session.id, "two", "answer two")
    question = versions.question_to_edit(engine, user.id, session.id, asked)
    history = conversations.text_history(engine, user.id, session.id, before=question.created_at)
    assert [m["content"] for m in history] == ["one", "answer one"]


def test_another_users_messages_have_no_versions_to_show(sql_backend: SqlBackend) -> None:
    engine = sql_backend.engine
    demo, alex = sql_backend.users["demo"], sql_backend.users["alex"]
    session = conversations.create_session(engine, demo.id)
    asked, answer = _exchange(sql_backend, session.id, "q", "a")
    with pytest.raises(LookupError):
        versions.show_version(engine, alex.id, session.id, answer)
    with pytest.raises(LookupError):
        versions.question_for(engine, alex.id, session.id, answer)
    with pytest.raises(LookupError):
        versions.question_to_edit(engine, alex.id, session.id, asked)
    with pytest.raises(LookupError):  # a question is no answer
        versions.show_version(engine, demo.id, session.id, asked)
