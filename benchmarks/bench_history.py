"""Long chats cost what short ones do: the chat page, the API's page and a new turn's first event.

One real exchange (the offline engine answering QUESTION for `demo`) is copied straight into
the tables (`tests/support/history.py`: rows, events, the snapshot its turn left) to make
chats of each size; then, in each of `--rounds` rounds, every size is measured in turn, so
the sizes see the same machine: `GET /chat/<id>` (the browser's page), `GET
/api/chat/sessions/<id>` (the API's page) and a new turn in that chat, from its `POST` to the
first event of its stream (the offline engine; the turn then runs to its end before the next
measure). Each is the median over the rounds; a ratio is against the smallest size's, and
the first event's also against a new chat's, measured in the same rounds. The turns are asked
in a twin of each chat, so the pages read stay their size. The app runs in process through
its WSGI interface (Flask's test client), on SQLite.
Run: `.venv/bin/python benchmarks/bench_history.py [--sizes 10,1000,10000] [--rounds 5]`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _hog  # noqa: E402
from flask import Flask  # noqa: E402
from werkzeug.test import TestResponse  # noqa: E402

from tests.support.apps import app_on_copy, seed_template  # noqa: E402
from tests.support.history import copy_exchange  # noqa: E402
from webapp.chat.conversations import create_session  # noqa: E402
from webapp.services import chat_service  # noqa: E402
from webapp.store.app_db import close_engine, get_engine  # noqa: E402
from webapp.store.users import authenticate, create_api_token  # noqa: E402

QUESTION = "What do I owe on my credit cards?"
_MESSAGE = re.compile(rb'<article class="message ')
LIMITS = {"MAX_NEW_CHATS_PER_MINUTE": 10_000, "MAX_CHATS_PER_USER": 10_000}


@dataclass
class Size:
    """One chat of `messages` messages and what each round measured of it."""

    messages: int
    session_id: str  # its pages are read
    asked_in: str  # a twin of it, where the turns are asked (so the pages stay this size)
    page: list[float] = field(default_factory=list)
    page_bytes: int = 0
    shown: int = 0
    api: list[float] = field(default_factory=list)
    api_bytes: int = 0
    listed: int = 0
    first: list[float] = field(default_factory=list)


def _body(response: TestResponse) -> dict[str, Any]:
    data = response.get_json()
    assert isinstance(data, dict), response.get_data(as_text=True)
    return data


def _timed(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


class Bench:
    """The app, its signed-in browser, its API token and the chats measured."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        engine = get_engine(app)
        user = authenticate(engine, "demo", "demo")
        assert user is not None
        self.user_id = user.id
        self.browser = app.test_client()
        with self.browser.session_transaction() as session:
            session["user_id"] = user.id
        self.api = app.test_client()
        self.auth = {"Authorization": f"Bearer {create_api_token(engine, 'demo')}"}

    def ask(self, session_id: str) -> float:
        """Ask in the chat; return the seconds from the POST to its stream's first event."""
        start = time.perf_counter()
        posted = self.api.post(
            f"/api/chat/sessions/{session_id}/messages",
            json={"message": QUESTION},
            headers=self.auth,
        )
        assert posted.status_code == 202, posted.get_data(as_text=True)
        url = _body(posted)["stream_url"]
        stream = self.api.get(url, headers=self.auth, buffered=False)
        try:
            for chunk in stream.response:
                if b"event:" in chunk:
                    break
            first = time.perf_counter() - start
        finally:
            stream.close()
        with self.app.app_context():
            chat_service(self.app).wait_idle(60)
        return first

    def answer(self) -> str:
        """Return the id of a real answer to QUESTION, in a chat of its own."""
        session_id = create_session(get_engine(self.app), self.user_id).id
        self.ask(session_id)
        data = _body(self.api.get(f"/api/chat/sessions/{session_id}", headers=self.auth))
        return str(data["messages"][-1]["id"])

    def chat(self, messages: int, answer_id: str) -> Size:
        twins = [create_session(get_engine(self.app), self.user_id).id for _ in range(2)]
        for session_id in twins:
            copy_exchange(get_engine(self.app), session_id, answer_id, messages // 2)
        return Size(messages, twins[0], twins[1])

    def measure(self, size: Size) -> None:
        seconds, page = _timed(lambda: self.browser.get(f"/chat/{size.session_id}"))
        assert page.status_code == 200
        size.page.append(seconds)
        size.page_bytes, size.shown = len(page.data), len(_MESSAGE.findall(page.data))
        url = f"/api/chat/sessions/{size.session_id}"
        seconds, api = _timed(lambda: self.api.get(url, headers=self.auth))
        assert api.status_code == 200
        size.api.append(seconds)
        size.api_bytes, size.listed = len(api.data), len(_body(api)["messages"])
        size.first.append(self.ask(size.asked_in))


def _ms(values: Sequence[float]) -> float:
    return statistics.median(values) * 1e3


def report(sizes: Sequence[Size], fresh: Sequence[float], rounds: int) -> None:
    base = sizes[0]
    print(f"median of {rounds} round(s); ratios against the {base.messages}-message chat's page")
    print(f"{'messages':>8} | {'chat page':>9} {'ratio':>6} {'size':>8} {'shown':>5}"
          f" | {'API page':>8} {'ratio':>6} {'size':>8} {'listed':>6}"
          f" | {'first event':>11} {'ratio':>6} {'÷ new chat':>10}")  # fmt: skip
    for s in sizes:
        print(
            f"{s.messages:>8} | {_ms(s.page):>7.1f}ms {_ms(s.page) / _ms(base.page):>5.2f}x"
            f" {s.page_bytes / 1e3:>6.1f}KB {s.shown:>5} | {_ms(s.api):>6.1f}ms"
            f" {_ms(s.api) / _ms(base.api):>5.2f}x {s.api_bytes / 1e3:>6.1f}KB {s.listed:>6}"
            f" | {_ms(s.first):>9.1f}ms {_ms(s.first) / _ms(base.first):>5.2f}x"
            f" {_ms(s.first) / _ms(fresh):>9.2f}x"
        )
    print(f"{'new chat':>8} | {'':>9} {'':>6} {'':>8} {'':>5} | {'':>8} {'':>6} {'':>8} {'':>6}"
          f" | {_ms(fresh):>9.1f}ms {'':>6} {1:>9.2f}x")  # fmt: skip


def main(sizes: Sequence[int] = (10, 1_000, 10_000), rounds: int = 5) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-history-"))
    try:
        app = app_on_copy(seed_template(folder / "template.sqlite"), folder / "db.sqlite", **LIMITS)
        try:
            bench = Bench(app)
            started = time.perf_counter()
            answer_id = bench.answer()
            chats = [bench.chat(n, answer_id) for n in sizes]
            took = time.perf_counter() - started
            print(f"seeded {2 * sum(sizes):,} messages (two chats a size) in {took:.1f}s")
            bench.measure(chats[0])  # warm: templates compiled, account names read
            for chat in chats:
                for measured in (chat.page, chat.api, chat.first):
                    measured.clear()
            fresh: list[float] = []
            for _ in range(rounds):
                for chat in chats:
                    bench.measure(chat)
                fresh.append(bench.ask(create_session(get_engine(app), bench.user_id).id))
            report(chats, fresh, rounds)
        finally:
            close_engine(app)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10,1000,10000", help="messages per chat, smallest first"
    )
    parser.add_argument("--rounds", type=int, default=5)
    _hog.add_flag(parser)
    args = parser.parse_args()
    with _hog.beside(args.hog):
        main(tuple(int(n) for n in args.sizes.split(",")), args.rounds)
