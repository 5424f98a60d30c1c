"""What history a new turn sends the model: the latest exchanges within a budget, text only."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from tests.support.plans import query_plan
from webapp.chat import conversations, leases, notes, records

if TYPE_CHECKING:
    from tests.conftest import SqlBackend


def _exchange(
    backend: SqlBackend, session_id: str, question: str, answer: str, **ending: str | None
) -> None:
    engine, user = backend.engine, backend.users["demo"]
    owner = records.new_id()
    _, answer_id = leases.start_message(
        engine, user.id, session_id, question, timedelta(seconds=30), owner
    )
    leases.finish_message(
        engine,
        answer_id,
        owner,
        status=ending.get("status") or "complete",
        content=answer,
        citations=[],
        inline_citations=[],
        error=None,
        done=notes.StoredEvent(1, "done", '{"status": "complete"}'),
        stop_reason=ending.get("stop_reason"),
    )


def test_history_is_the_latest_exchanges_that_fit_oldest_first(sql_backend: SqlBackend) -> None:
    user = sql_backend.users["demo"]
    session = conversations.create_session(sql_backend.engine, user.id)
    for i in range(30):
        _exchange(sql_backend, session.id, f"question {i:02d}", f"answer {i:02d} " + "x" * 90)
    history = conversations.text_history(sql_backend.engine, user.id, session.id, budget=1000)
    questions = [m["content"] for m in history if m["role"] == "user"]
    # Each exchange is 11 + 100 characters: nine fit in 1,000, the newest nine.
    assert questions == [f"question {i:02d}" for i in range(21, 30)]
    assert [m["role"] for m in history] == ["user", "assistant"] * 9


def test_refused_failed_and_stopped_exchanges_stay_out(sql_backend: SqlBackend) -> None:
    user = sql_backend.users["demo"]
    session = conversations.create_session(sql_backend.engine, user.id)
    _exchange(sql_backend, session.id, "kept first", "fine")
    _exchange(sql_backend, session.id, "refused", "I can't help", stop_reason="refusal")
    _exchange(sql_backend, session.id, "failed", "", status="error")
    _exchange(sql_backend, session.id, "stopped", "half", status="cancelled")
    _exchange(sql_backend, session.id, "kept last", "also fine")
    history = conversations.text_history(sql_backend.engine, user.id, session.id)
    assert [m["content"] for m in history] == ["kept first", "fine", "kept last", "also fine"]


def test_the_history_read_is_the_latest_rows_of_the_keyset_index_never_the_whole_chat(
    sql_backend: SqlBackend,
) -> None:
    user = sql_backend.users["demo"]
    session = conversations.create_session(sql_backend.engine, user.id)
    query = conversations.history_query(user.id, session.id)
    assert {c.name for c in query.selected_columns} == {"role", "content", "status", "stop_reason"}
    assert " LIMIT " in str(query.compile(sql_backend.engine)).replace("\n", " ")
    plan = query_plan(sql_backend.engine, query)
    assert "ix_ai_chat_logs_session_page" in plan, plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan


def test_a_long_chat_sends_the_same_history_as_its_latest_exchanges_alone(
    sql_backend: SqlBackend,
) -> None:
    user = sql_backend.users["demo"]
    long, short = (conversations.create_session(sql_backend.engine, user.id) for _ in range(2))
    for i in range(150):  # 300 messages: past the rows the read takes
        _exchange(sql_backend, long.id, f"question {i}", f"answer {i} " + "x" * 400)
    for i in range(140, 150):
        _exchange(sql_backend, short.id, f"question {i}", f"answer {i} " + "x" * 400)
    budget = 10 * (len("question 149") + len("answer 149 ") + 400)
    history = conversations.text_history(sql_backend.engine, user.id, long.id, budget=budget)
    assert history == conversations.text_history(
        sql_backend.engine, user.id, short.id, budget=budget
    )
    assert len(history) == 20
