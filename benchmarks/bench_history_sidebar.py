"""The chat page for a user with 10 / 1,000 / 10,000 chats, and Search chats, against 10 chats.

Each size is a user of its own in one database, each chat a question and its answer; the
page opened is the user's newest chat, so only the sidebar differs. Everything the server
does for the page (its queries, its templates) runs in process through Flask's test client,
on SQLite or PostgreSQL. The sizes are measured interleaved, round after round, and each
row gives the median and its ratio to the 10-chat user's (issue 21's goal: at most 2x).

Search chats is measured the same way for words found in no chat: the worst case, which
reads every message of the user's (the sidebar's page stops at 50 chats; a search that
finds nothing has nothing to stop at).

Run: `.venv/bin/python benchmarks/bench_history_sidebar.py [--sizes 10,1000,10000]
[--rounds 15] [--db sqlite|postgres] [--admin-url postgresql://...]`
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its helpers, when loaded by a test

import _hog  # noqa: E402
from _databases import scratch  # noqa: E402
from flask import Flask  # noqa: E402
from flask.testing import FlaskClient  # noqa: E402

from tests.support.history import store_chats  # noqa: E402
from webapp import create_app  # noqa: E402
from webapp.store.app_db import close_engine, get_engine  # noqa: E402
from webapp.store.migrate import upgrade_database  # noqa: E402
from webapp.store.users import create_user  # noqa: E402

PASSWORD = "a long password"
DEFAULT_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
ANSWER = "Your cards add up to $1,842.17, most of it on the Sapphire card. " * 4


MINUTE = timedelta(minutes=1)  # between one stored chat and the next older one


def chats_of(count: int) -> list[tuple[str, str, str]]:
    """`count` chats of a question and an answer each, as `store_chats` takes them."""
    return [(f"Chat {n}", f"What do I owe, question {n}?", ANSWER) for n in range(count)]


def signed_in(app: Flask, count: int) -> tuple[FlaskClient, str]:
    """Make a user with `count` chats, sign them in; return their client and newest chat."""
    name = f"b{uuid.uuid4().hex[:12]}"
    user = create_user(get_engine(app), name, PASSWORD)
    newest = store_chats(get_engine(app), user.id, chats_of(count), datetime.now(UTC), MINUTE)[0]
    client = app.test_client()
    found = _CSRF.search(client.get("/login").get_data(as_text=True))
    assert found is not None
    data = {"username": name, "password": PASSWORD, "csrf_token": found.group(1)}
    assert client.post("/login", data=data).status_code == 302
    return client, newest


def timed(client: FlaskClient, url: str) -> tuple[float, int]:
    """Return the seconds and bytes of one GET of `url` (200 expected)."""
    start = time.perf_counter()
    response = client.get(url)
    body = response.get_data()
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, (url, response.status_code)
    return elapsed, len(body)


def measure(url: str, sizes: Sequence[int], rounds: int) -> list[dict[str, Any]]:
    """Return, for each size, the page's and the empty search's median ms and bytes."""
    app = create_app({"DATABASE_URL": url, "SECRET_KEY": "bench", "ANTHROPIC_API_KEY": None})
    try:
        upgrade_database(get_engine(app))
        people = {size: signed_in(app, size) for size in sizes}
        pages: dict[int, list[float]] = {size: [] for size in sizes}
        searches: dict[int, list[float]] = {size: [] for size in sizes}
        sizes_of: dict[int, tuple[int, int]] = {}
        for client, newest in people.values():  # warm each path once, unmeasured
            timed(client, f"/chat/{newest}")
        for _ in range(rounds):
            for size, (client, newest) in people.items():
                seconds, page_bytes = timed(client, f"/chat/{newest}")
                pages[size].append(seconds)
                found, search_bytes = timed(client, "/chats/search?q=no+chat+says+this")
                searches[size].append(found)
                sizes_of[size] = (page_bytes, search_bytes)
        return [
            {
                "size": size,
                "page_ms": statistics.median(pages[size]) * 1000,
                "page_bytes": sizes_of[size][0],
                "search_ms": statistics.median(searches[size]) * 1000,
            }
            for size in sizes
        ]
    finally:
        close_engine(app)


def main(sizes: Sequence[int], rounds: int, db: str = "sqlite", admin_url: str = "") -> None:
    """Print one row per size: the chat page and an empty search, each against the smallest."""
    with scratch(db, admin_url or os.environ.get("TEST_DATABASE_URL") or DEFAULT_ADMIN) as url:
        rows = measure(url, sizes, rounds)
    floor = rows[0]
    print(f"# {db}, {rounds} rounds, medians; ratios against {floor['size']} chats")
    print(f"{'chats':>6} {'page ms':>9} {'page KB':>8} {'ratio':>6} {'search ms':>10} {'ratio':>6}")
    for row in rows:
        print(
            f"{row['size']:>6} {row['page_ms']:>9.1f} {row['page_bytes'] / 1024:>7.1f}K"
            f" {row['page_ms'] / floor['page_ms']:>5.2f}x {row['search_ms']:>10.1f}"
            f" {row['search_ms'] / floor['search_ms']:>5.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,10000")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--admin-url", default="")
    _hog.add_flag(parser)
    args = parser.parse_args()
    with _hog.beside(args.hog):
        main([int(n) for n in args.sizes.split(",")], args.rounds, args.db, args.admin_url)
