"""Score the offline engine on the evaluation set: each question through the real JSON API,
the answer checked for what it must say and what it must cite.

Used by `tests/eval/test_eval.py` (every question must pass) and by
`benchmarks/bench_eval.py` (prints the score: answers fully correct / total).
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask

from tests.support.apps import ApiClient, api_client, idle_after, make_app
from webapp.citations.targets import target_to_json
from webapp.packets.select import select_sources
from webapp.packets.state import PacketStream
from webapp.store.accounts import list_accounts
from webapp.store.app_db import close_engine, get_engine
from webapp.store.users import authenticate
from webapp.tools.readers import READER_TOOLS, DocumentRead, read_document
from webapp.turn.citable import from_document

QUESTIONS = Path(__file__).with_name("questions.toml")
USERS = ("demo", "alex")
INTENTS = frozenset(
    {
        "balances",
        "debts",
        "net_worth",
        "cash",
        "utilization",
        "institution",
        "account",
        "holdings",
        "allocation",
        "quote",
        "document",
        "small_talk",
        "out_of_scope",
        "no_data",
        "compute",
        "multi",
        "follow_up",
        "open",
        "advice",
        "action",
    }
)
ALWAYS_NEVER = ("null", "None")


@dataclass(frozen=True)
class Question:
    """One question of the set and what a correct answer holds."""

    user: str
    intent: str
    ask: str
    says: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    cites: tuple[dict[str, Any], ...] = ()
    cites_one_of: tuple[dict[str, Any], ...] = ()
    sources: int | None = None
    max_sources: int | None = None
    after: tuple[str, ...] = ()  # earlier questions of the same chat, asked first


@dataclass(frozen=True)
class Answer:
    """What the API gave back: the stored answer and the number of sources the sheet lists."""

    status: str
    content: str
    citations: tuple[dict[str, Any], ...]
    sources: int
    seconds: float


@dataclass
class Verdict:
    question: Question
    answer: Answer
    problems: list[str] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return not self.problems


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    """Read the evaluation set."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Question(
            user=q["user"],
            intent=q["intent"],
            ask=q["ask"],
            says=tuple(q.get("says", ())),
            never=tuple(q.get("never", ())),
            cites=tuple(q.get("cites", ())),
            cites_one_of=tuple(q.get("cites_one_of", ())),
            sources=q.get("sources"),
            max_sources=q.get("max_sources"),
            after=tuple(q.get("after", ())),
        )
        for q in data["question"]
    ]


class Evaluator:
    """An app on a fresh seeded database, and what each demo user's accounts are called."""

    def __init__(self, folder: Path, database_url: str | None = None) -> None:
        self.app: Flask = make_app(
            folder, **({"DATABASE_URL": database_url} if database_url else {})
        )
        self.clients: dict[str, ApiClient] = {u: api_client(self.app, u) for u in USERS}
        engine = get_engine(self.app)
        self.accounts: dict[str, list[dict[str, Any]]] = {}
        for username in USERS:
            user = authenticate(engine, username, "demo")
            assert user is not None
            self.accounts[username] = [dict(a) for a in list_accounts(engine, user.id)]

    def close(self) -> None:
        """Wait for background turns, then release the app's database connections."""
        with idle_after(self.app):
            pass
        close_engine(self.app)

    def ask(self, question: Question) -> Answer:
        """Ask through the API on a new session (after its earlier questions, if any); wait
        for the whole answer."""
        client = self.clients[question.user]
        with idle_after(self.app):
            session_id = client.new_session()
            for earlier in question.after:
                client.stream(client.ask(session_id, earlier)["stream_url"])
            started = time.perf_counter()
            events = client.stream(client.ask(session_id, question.ask)["stream_url"])
            seconds = time.perf_counter() - started
        stream = PacketStream(0)
        stream.extend(json.loads(e.data) for e in events if e.event == "packet")
        message = client.session(session_id)["messages"][-1]
        return Answer(
            str(message["status"]),
            str(message["content"] or ""),
            tuple(message["citations"]),
            select_sources(stream.state).count,
            seconds,
        )

    def judge(self, question: Question) -> Verdict:
        """Ask one question and list what its answer gets wrong."""
        answer = self.ask(question)
        verdict = Verdict(question, answer)
        problems = verdict.problems
        if answer.status != "complete":
            problems.append(f"the answer ended as {answer.status}")
        text = answer.content.lower()
        problems += [f"does not say {p!r}" for p in question.says if p.lower() not in text]
        problems += [f"says {p!r}" for p in question.never if p.lower() in text]
        # A missing value printed as code: "null", "None" (as words, whatever the question).
        problems += [f"says {p!r}" for p in ALWAYS_NEVER if re.search(rf"\b{p}\b", answer.content)]
        cited = [(str(c["source"]), c["target"]) for c in answer.citations]
        for spec in question.cites:
            if not any(self.matches(question.user, spec, c) for c in cited):
                problems.append(f"does not cite {spec}")
        if question.cites_one_of and not any(
            self.matches(question.user, spec, c) for spec in question.cites_one_of for c in cited
        ):
            problems.append(f"cites none of {list(question.cites_one_of)}")
        if question.sources is not None and answer.sources != question.sources:
            problems.append(f"lists {answer.sources} sources, not {question.sources}")
        if question.max_sources is not None and answer.sources > question.max_sources:
            problems.append(f"lists {answer.sources} sources, more than {question.max_sources}")
        return verdict

    def _account_id(self, user: str, name: str) -> str:
        place, _, account = name.rpartition(" / ")
        found = [
            a
            for a in self.accounts[user]
            if a["account_name"] == account and (not place or a["institution_name"] == place)
        ]
        assert len(found) == 1, f"{name!r} names {len(found)} accounts of {user}"
        return str(found[0]["source_account_id"])

    def matches(self, user: str, spec: dict[str, Any], cited: tuple[str, Any]) -> bool:
        """Tell whether one citation (source, target) is the one `spec` describes."""
        source, target = cited
        if "account" in spec:
            return (
                bool(target)
                and target.get("kind") == "account"
                and target.get("accountId") == self._account_id(user, spec["account"])
            )
        if "accounts" in spec:
            wanted = sorted(self._account_id(user, name) for name in spec["accounts"])
            return (
                bool(target)
                and target.get("kind") == "accounts"
                and sorted(a["accountId"] for a in target.get("accounts", [])) == wanted
            )
        if "label" in spec:
            return bool(
                source == "silvia://your-account/" + spec["label"].lower().replace(" ", "-")
            )
        if "ticker" in spec:
            return bool(target == {"kind": "market_data", "ticker": spec["ticker"]})
        if "portfolio" in spec:
            return bool(target == {"kind": "portfolio"})
        if "url" in spec:
            return bool(target == {"kind": "web", "url": spec["url"]})
        if "document" in spec:
            expected = document_citation(spec["document"])
            return (source, target) == expected
        raise ValueError(f"unknown citation spec {spec}")


def document_citation(document: str) -> tuple[str, dict[str, Any] | None]:
    """Return the source and target JSON a corpus document is cited under."""
    corpus, _, path = document.partition("/")
    tool = next(t for t, c in READER_TOOLS.items() if c == corpus)
    read = read_document(tool, path)
    assert isinstance(read, DocumentRead), document
    citable = from_document(tool, read)
    return citable.source, None if citable.target is None else target_to_json(citable.target)


def evaluate(folder: Path, questions: list[Question] | None = None) -> Iterator[Verdict]:
    """Judge every question (or those given) on one fresh app, in order."""
    evaluator = Evaluator(folder)
    try:
        for question in questions if questions is not None else load_questions():
            yield evaluator.judge(question)
    finally:
        evaluator.close()
