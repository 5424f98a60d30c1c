"""Transactions per turn: batched event writes vs one transaction per event, on PostgreSQL.

Counts every COMMIT the app's engine makes while a turn runs, for the offline engine's
answers and for a Claude-shaped answer (a tool round, then text at a model's pace, from the
fake Claude server). The per-event design this replaced committed once per event plus three
(question, first checkpoint, finish): that figure is computed from the same run's events.

Run: `.venv/bin/python benchmarks/bench_transactions.py [postgresql://...]`
(default: TEST_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/test; a scratch
database is created and dropped).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _databases import scratch  # noqa: E402

from tests.support.fake_claude import FakeClaude, Paced, text_reply, tool_reply  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.chat.store import create_session  # noqa: E402
from webapp.services import chat_service  # noqa: E402
from webapp.store.app_db import get_engine
from webapp.store.demo import seed_demo
from webapp.store.migrate import upgrade_database  # noqa: E402
from webapp.store.users import authenticate

OFFLINE_QUESTIONS = [
    "What do I owe on my credit cards?",
    "What is AAPL trading at?",
    "How is the gain on selling my home taxed?",
]
SQL = "SELECT source, source_account_id, account_name, current_balance FROM account_details"


def claude_answer() -> list[Any]:
    words = "Your balances are listed below with the account each figure comes from. " * 6
    return [tool_reply(("t1", "execute_sql", {"query": SQL})), Paced(text_reply((words, [])), 0.02)]


def run(url: str, config: dict[str, Any], questions: list[str]) -> list[tuple[int, int]]:
    """Return (commits, events) for each question, asked one after another."""
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", **config})
    engine = get_engine(app)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    commits = 0

    def count(_conn: object) -> None:
        nonlocal commits
        commits += 1

    sa.event.listen(engine, "commit", count)
    service = chat_service(app)
    results = []
    for question in questions:
        session_id = create_session(engine, user.id).id
        before = commits
        message_id = service.ask(user.id, session_id, question)
        events = [e for e in service.events(user.id, session_id, message_id) if e is not None]
        service.wait_idle()
        results.append((commits - before, len(events)))
    engine.dispose()
    return results


def main() -> None:
    admin = (
        sys.argv[1]
        if len(sys.argv) > 1
        else os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/test"
    )
    rows: list[tuple[str, int, int]] = []
    with scratch("postgres", admin) as url:
        for question, (commits, events) in zip(
            OFFLINE_QUESTIONS, run(url, {"ANTHROPIC_API_KEY": None}, OFFLINE_QUESTIONS), strict=True
        ):
            rows.append((f"offline: {question}", commits, events))
        with FakeClaude(claude_answer()) as fake:
            config = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": fake.url}
            ((commits, events),) = run(url, config, ["What are my balances?"])
            rows.append(
                ("Claude-shaped: a tool round, then text at 20 ms an event", commits, events)
            )
    print(f"{'turn':<62} {'events':>6} {'commits':>7} {'per-event design':>16} {'ratio':>6}")
    for name, commits, events in rows:
        old = events + 3
        print(f"{name:<62} {events:>6} {commits:>7} {old:>16} {old / commits:>5.1f}x")


if __name__ == "__main__":
    main()
