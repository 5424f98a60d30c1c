"""A follow-up is read against the chat's latest questions, not its whole history."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.llm.base import ModelRequest
from webapp.llm.offline import conversation, fuzzy, model
from webapp.llm.offline.conversation import FOLLOW_UP_DEPTH, follow_up, previous_question
from webapp.llm.offline.model import OfflineModel

EARLIER = ("How much do I owe on my Amex?",)
FILLER = tuple(f"What is the {n}th word of the day?" for n in range(200))


def test_a_follow_up_after_a_long_chat_reads_the_latest_question() -> None:
    before = previous_question(FILLER + EARLIER)
    assert before is not None and before.institutions
    found = follow_up("What about Citi?", before)
    assert found is not None
    question, assumed = found
    assert "citi" in [name.lower() for name in question.institutions]
    assert assumed


def test_a_long_chat_reads_only_its_latest_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    standing = conversation.standing

    def counted(text: str) -> object:
        read.append(text)
        return standing(text)

    monkeypatch.setattr(conversation, "standing", counted)
    previous_question(FILLER + EARLIER)
    assert 0 < len(read) <= FOLLOW_UP_DEPTH
    assert read[-1] == EARLIER[-1]


def test_the_engine_mends_the_typos_of_only_the_latest_questions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mended: list[str] = []
    correct = fuzzy.correct

    def counted(text: str) -> str:
        mended.append(text)
        return correct(text)

    monkeypatch.setattr(model, "correct", counted)
    messages: list[dict[str, Any]] = []
    for question in FILLER:
        messages += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": "I can't help with that."},
        ]
    messages.append({"role": "user", "content": "What is my net worth?"})
    first = next(iter(OfflineModel().stream(ModelRequest("", messages, []))))
    assert first  # the engine answered
    assert 0 < len(mended) <= FOLLOW_UP_DEPTH + 1  # the latest questions and this one
