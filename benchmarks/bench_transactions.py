"""Transactions per turn, as PostgreSQL counts them, beside the app's own COMMITs.

For each turn (the offline engine's answers, and Claude-shaped answers of 20, 200 and 2,000
text deltas at a model's pace from the fake Claude server, read to `done` in-process) this
prints two counts side by side:
- **commits**: the COMMITs the app's engine makes (a SQLAlchemy `commit` listener);
- **pg xact**: the scratch database's `pg_stat_database.xact_commit` over the turn, every
  backend included: reads, pool pings and notifications count there too. The app's
  connections are closed before each reading, so their statistics have reached the server.
Then an idle running answer (the model quiet for `--idle` seconds): xact_commit per second.
The goal (issue 21): at most 30 a turn at any length plus one a checkpoint; 0.05/s idle.

Run: `.venv/bin/python benchmarks/bench_transactions.py [--deltas 20,200,2000] [--idle 30]`
(`--admin-url`, default TEST_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/test; a
scratch database is created and dropped).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # `_databases`, when loaded by a test

from _databases import scratch  # noqa: E402

from tests.support.fake_claude import (  # noqa: E402
    FakeClaude,
    Paced,
    text_reply,
    tool_reply,
)
from webapp import create_app  # noqa: E402
from webapp.chat.conversations import create_session  # noqa: E402
from webapp.services import chat_service  # noqa: E402
from webapp.store.app_db import get_engine  # noqa: E402
from webapp.store.demo import seed_demo  # noqa: E402
from webapp.store.migrate import upgrade_database  # noqa: E402
from webapp.store.users import authenticate  # noqa: E402

OFFLINE_QUESTIONS = [
    "What do I owe on my credit cards?",
    "What is AAPL trading at?",
    "How is the gain on selling my home taxed?",
]
SQL = "SELECT source, source_account_id, account_name, current_balance FROM account_details"
STATS_SETTLE_SECONDS = 1.2  # a backend sends its statistics at most once a second


def claude_answer(deltas: int, pace: float) -> list[Any]:
    """A tool round, then `deltas` text deltas (7 characters each) `pace` seconds apart."""
    words = ("Balances: " * (deltas * 7 // 10 + 1))[: deltas * 7]
    return [tool_reply(("t1", "execute_sql", {"query": SQL})), Paced(text_reply((words, [])), pace)]


class Counter:
    """xact_commit of one database, read from another one's connection (not counted)."""

    def __init__(self, admin: str, url: str) -> None:
        self._admin = make_url(admin).set(drivername="postgresql").render_as_string(False)
        self._name = make_url(url).database

    def read(self, engine: Engine | None = None) -> int:
        if engine is not None:
            engine.dispose()  # closed connections have sent their statistics
        time.sleep(STATS_SETTLE_SECONDS)
        with psycopg.connect(self._admin, autocommit=True) as conn:
            for _ in range(100):  # ... once their backends have exited
                if engine is None or not self._backends(conn):
                    break
                time.sleep(0.05)
            row = conn.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = %s", (self._name,)
            ).fetchone()
        return int(row[0]) if row else 0

    def _backends(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self._name,)
        ).fetchone()
        return int(row[0]) if row else 0


def run(
    url: str,
    counter: Counter,
    config: dict[str, Any],
    questions: list[str],
    during: Callable[[Engine, Counter], None] | None = None,
) -> list[tuple[int, int, int, float]]:
    """Return (commits, pg xact, events, seconds) for each question, one after another."""
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
        before, pg_before = commits, counter.read(engine)
        started = time.monotonic()
        message_id = service.ask(user.id, session_id, question)
        watcher = threading.Thread(target=during, args=(engine, counter)) if during else None
        if watcher:
            watcher.start()
        events = [e for e in service.events(user.id, session_id, message_id) if e is not None]
        service.wait_idle()
        seconds = time.monotonic() - started
        if watcher:
            watcher.join()
        results.append((commits - before, counter.read(engine) - pg_before, len(events), seconds))
    engine.dispose()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", default="20,200,2000")
    parser.add_argument("--pace", type=float, default=0.02)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--offline", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/test",
    )
    args = parser.parse_args(argv)
    rows: list[tuple[str, int, int, int, float]] = []
    with scratch("postgres", args.admin_url) as url:
        counter = Counter(args.admin_url, url)
        if args.offline:
            offline = run(url, counter, {"ANTHROPIC_API_KEY": None}, OFFLINE_QUESTIONS)
            for question, result in zip(OFFLINE_QUESTIONS, offline, strict=True):
                rows.append((f"offline: {question}", *result))
        for deltas in [int(d) for d in args.deltas.split(",") if d]:
            with FakeClaude(claude_answer(deltas, args.pace)) as fake:
                config = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": fake.url}
                (measured,) = run(url, counter, config, ["What are my balances?"])
            name = f"Claude-shaped: a tool round, {deltas} deltas {args.pace * 1000:g} ms apart"
            rows.append((name, *measured))
        idle: list[float] = []
        if args.idle > 0:
            # The model only pings (once a second) for `idle` seconds and more, then answers.
            reply = text_reply(("Done.", []))
            pings = [{"type": "ping"}] * int(args.idle + 4)
            quiet = Paced([reply[0], *pings, *reply[1:]], 1.0)
            window = args.idle

            def measure(engine: Engine, counter: Counter) -> None:
                time.sleep(2)  # the question's own writes are behind
                counter.read(engine)
                # A served app's pool holds its connections; the reading above closed them
                # (its statistics reach the server only so), and a new connection is a
                # transaction of its own (the backend's start): open one, as a pool would
                # have it, before the window opens.
                with engine.connect() as conn:  # its statistics sent at once, not in 10 s
                    conn.execute(sa.text("SELECT pg_stat_force_next_flush()"))
                start = counter.read()
                time.sleep(window)
                idle.append((counter.read(engine) - start) / (window + STATS_SETTLE_SECONDS))

            with FakeClaude([quiet]) as fake:
                config = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": fake.url}
                run(url, counter, config, ["Anything new?"], measure)
    print(f"{'turn':<62} {'events':>6} {'commits':>7} {'pg xact':>7} {'seconds':>7}")
    for name, commits, xact, events, seconds in rows:
        print(f"{name:<62} {events:>6} {commits:>7} {xact:>7} {seconds:>7.1f}")
    for rate in idle:
        print(f"an idle running answer, {args.idle:g} s: {rate:.3f} transactions/s (pg xact)")


if __name__ == "__main__":
    main()
