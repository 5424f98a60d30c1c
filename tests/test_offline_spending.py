"""The offline engine's answers about money over time: the question read, the queries run on
both databases, and each figure citing the accounts (or the file) whose rows it summed."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, api_client, idle_after
from webapp.llm.offline.periods import month_start
from webapp.llm.offline.spending import follow_spending
from webapp.llm.offline.spending_ask import read_spending, spending_queries
from webapp.packets.documents import search_doc_from_json
from webapp.packets.select import select_sources
from webapp.packets.state import PacketStream
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

TODAY = date(2026, 3, 17)


@pytest.mark.parametrize(
    ("question", "kind", "start", "end"),
    [
        ("What did I spend on groceries last month?", "spend", "2026-02-01", "2026-03-01"),
        ("How much did I spend this month?", "spend", "2026-03-01", "2026-03-18"),
        ("What did I spend at Safeway in November?", "spend", "2025-11-01", "2025-12-01"),
        ("My spending in the last 30 days", "spend", "2026-02-16", "2026-03-18"),
        ("Where did my money go in January 2026?", "categories", "2026-01-01", "2026-02-01"),
        ("What was my cash flow last month?", "cash_flow", "2026-02-01", "2026-03-01"),
        ("What were my biggest purchases this month?", "largest", "2026-03-01", "2026-03-18"),
    ],
)
def test_the_question_and_its_period_are_read(
    question: str, kind: str, start: str, end: str
) -> None:
    ask = read_spending(question, TODAY)
    assert ask is not None and ask.kind == kind
    assert ask.period is not None
    assert (ask.period.start.isoformat(), ask.period.end.isoformat()) == (start, end)


def test_a_payee_named_as_who_charged_or_billed_is_the_merchant() -> None:
    for text, merchant in (
        ("What has Spotify billed us this month?", "spotify"),
        # a payee's name may hold a category's word: the payee, not all the gym's charges
        ("how much did anytime fitness charge me in february", "anytime fitness"),
    ):
        ask = read_spending(text, TODAY)
        assert ask is not None and ask.kind == "spend", text
        assert ask.merchant == merchant and ask.category is None, text
    # a bank or the user's own card charging is its fees, not spending at a payee
    assert read_spending("how much did wells fargo charge me last month", TODAY) is None
    assert read_spending("what did my citi card bill me in february", TODAY) is None


def test_category_merchant_and_files_are_read() -> None:
    groceries = read_spending("What did I spend on groceries last month?", TODAY)
    assert groceries is not None and groceries.category is not None
    assert groceries.category[1] == "groceries" and groceries.merchant is None
    safeway = read_spending("How much did I spend at Safeway last month?", TODAY)
    assert safeway is not None and safeway.merchant == "safeway"
    upload = read_spending("What did I spend on groceries in my uploaded statement?", TODAY)
    assert upload is not None and upload.files_only and upload.period is None
    for other in (
        "What is my net worth?",
        "How much do I owe on my cards?",
        "hello",
        "What is cash flow?",
        "How much does a mortgage cost?",
        # the money in an account, not money coming in: "in it" ends the question
        "which account of mine has the most money in it?",
        "is there more money in it?",
    ):
        assert read_spending(other, TODAY) is None


@pytest.mark.parametrize(
    "question",
    [
        "What did I spend on groceries last month?",
        "Where did my money go last month?",
        "How does this month compare to last month?",
        "What was my cash flow last month?",
        "What are my recurring charges?",
        "What were my largest purchases last month?",
        "How am I doing this month?",
        "What did I spend at Safeway in the last 30 days?",
    ],
)
def test_every_query_runs_on_both_databases(sql_backend: SqlBackend, question: str) -> None:
    today = datetime.now(UTC).date()  # the backends were seeded today
    ask = read_spending(question, today)
    assert ask is not None
    for query in spending_queries(ask, today):
        result = run_sql(sql_backend.engine, sql_backend.users["demo"].id, query)
        assert result.error is None, (query, result.error)
        assert result.rows, query
        assert {"source", "source_account_id", "file_id"} <= set(result.columns)


@pytest.fixture
def demo(app: Flask) -> ApiClient:
    return api_client(app, "demo")


def _ask(app: Flask, client: ApiClient, question: str) -> list[tuple[str, dict[str, Any]]]:
    with idle_after(app):
        session_id = client.new_session()
        asked = client.ask(session_id, question)
        events = client.stream(asked["stream_url"])
    return [(e.event, json.loads(e.data)) for e in events]


def _answer_text(events: list[tuple[str, dict[str, Any]]]) -> str:
    (message,) = [data for name, data in events if name == "message"]
    return "".join(block.get("text", "") for block in message["message"]["content"])


def test_groceries_last_month_cite_exactly_the_accounts_summed(app: Flask, demo: ApiClient) -> None:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    last = month_start(datetime.now(UTC).date(), 1)
    nxt = month_start(last, -1)
    truth = run_sql(
        get_engine(app),
        user.id,
        "SELECT source_account_id, amount FROM transaction_details"
        " WHERE subcategory = 'FOOD_AND_DRINK_GROCERIES'"
        f" AND date >= '{last.isoformat()}' AND date < '{nxt.isoformat()}'",
    )
    assert truth.error is None and truth.rows
    total = sum(float(str(row["amount"])) for row in truth.rows)
    accounts = {str(row["source_account_id"]) for row in truth.rows}

    events = _ask(app, demo, "What did I spend on groceries last month?")
    text = _answer_text(events)
    assert f"${total:,.2f} on groceries last month" in text
    (summary,) = [data for name, data in events if name == "citations_summary"]
    cited: set[str] = set()
    for citation in summary["citations"]:
        target = citation["target"]
        assert target["kind"] in ("account", "accounts")
        refs = [target] if target["kind"] == "account" else target["accounts"]
        cited |= {ref["accountId"] for ref in refs}
    assert cited == accounts


def test_a_question_about_an_uploaded_file_cites_the_file_under_user_files(
    app: Flask, demo: ApiClient
) -> None:
    day = month_start(datetime.now(UTC).date(), 1).isoformat()
    csv = f"Date,Description,Amount\n{day},SAFEWAY #9 OAKLAND,-40.00\n{day},SHELL OIL,-30.00\n"
    uploaded = demo.http.post("/api/files", files={"file": ("oakland.csv", csv.encode())})
    assert uploaded.status_code == 201, uploaded.text
    file_id = uploaded.json()["id"]

    events = _ask(app, demo, "What did I spend on groceries in my uploaded file?")
    assert "$40.00 on groceries" in _answer_text(events)
    (summary,) = [data for name, data in events if name == "citations_summary"]
    assert [c["target"] for c in summary["citations"]] == [{"kind": "file", "fileId": file_id}]
    assert summary["citations"][0]["source"] == f"silvia://your-file/{file_id}"

    stream = PacketStream(0)
    stream.extend(data for name, data in events if name == "packet")
    chosen = select_sources(stream.state)
    (doc,) = chosen.files
    assert doc.file_id == file_id and doc.link is None
    assert doc.semantic_identifier == "oakland.csv"
    assert not chosen.cited and not chosen.more
    assert search_doc_from_json({"document_id": doc.document_id, "file_id": file_id}).file_id


def test_a_figure_counts_every_row_not_only_those_shown_to_the_model(
    app: Flask, demo: ApiClient
) -> None:
    # 60 purchases in one file: more than the 40 rows of one source the model is shown.
    day = month_start(datetime.now(UTC).date(), 1).isoformat()
    lines = [f"{day},SAFEWAY #{i} OAKLAND,-{i + 1}.00" for i in range(60)]
    csv = "Date,Description,Amount\n" + "\n".join(lines) + "\n"
    uploaded = demo.http.post("/api/files", files={"file": ("many.csv", csv.encode())})
    assert uploaded.status_code == 201, uploaded.text

    text = _answer_text(_ask(app, demo, "What did I spend on groceries in my uploaded file?"))
    # 1 + 2 + ... + 60 = 1,830: all sixty rows, though only forty are written out to cite.
    assert "$1,830.00 on groceries" in text and "60 transactions" in text


def test_a_follow_up_asks_the_same_spending_of_a_period_named_against_the_last() -> None:
    asked = "what did i spend on coffee in february?"
    earlier = follow_spending("what about the previous month?", asked, TODAY)
    assert earlier is not None
    ask, note = earlier
    assert ask.category is not None and ask.category[1] == "coffee"
    assert ask.period is not None and ask.period.start == date(2026, 1, 1)
    assert "January 2026" in note
    named = follow_spending("and in december?", asked, TODAY)
    assert named is not None and named[0].period is not None
    assert named[0].period.start == date(2025, 12, 1)
    # a span of days: as many days before it
    days = follow_spending("and the 30 days before that?", "my spending in the last 30 days", TODAY)
    assert days is not None and days[0].period is not None
    assert (days[0].period.start, days[0].period.end) == (date(2026, 1, 17), date(2026, 2, 16))
    # this month has no month after it yet
    assert follow_spending("and the month after?", "what have i spent this month?", TODAY) is None
