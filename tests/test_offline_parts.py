"""A later part of a message, or a follow-up, takes what it leaves out from what came before:
the account ("how much is in it"), the question ("and the biggest?"), the period and kind of
a spending question ("and netflix?"). The wordings here are in no evaluation set."""

from __future__ import annotations

from datetime import date

import pytest

from webapp.llm.offline.dispatch import Computed, Context, Figures, tasks
from webapp.llm.offline.library import library
from webapp.llm.offline.spending import follow_spending, read_spending

TODAY = date(2026, 12, 1)


def _tasks(text: str, *earlier: str) -> list[object]:
    return list(tasks(text, Context(library(), None, earlier)))


def test_a_later_part_that_points_back_takes_the_earlier_parts_account() -> None:
    first, second = _tasks(
        "what's the routing number of my wells fargo checking? whats in it right now"
    )
    assert isinstance(second, Figures)
    assert second.question.institutions == ("wells fargo",)
    assert "balances" in second.question.intents
    assert second.note  # says what it assumed


def test_the_end_of_a_list_asked_after_it() -> None:
    (task,) = _tasks("and which of them is the smallest?", "list my card balances")
    assert isinstance(task, Figures)
    assert task.question.extreme == "least" and task.question.kinds == ("credit",)


def test_what_if_pointing_back_at_the_last_question() -> None:
    (task,) = _tasks("say I cleared it with my savings - what's left?", "how much is on my citi")
    assert isinstance(task, Computed)
    assert task.computation.op == "left"
    assert task.computation.sides[1].institutions == ("citi",)
    assert task.computation.note


def test_a_forecast_is_still_a_forecast() -> None:
    (task,) = _tasks("what would my savings be worth in ten years?")
    assert not isinstance(task, Computed)


@pytest.mark.parametrize(
    ("follow", "category", "merchant"),
    [
        ("and netflix?", None, "netflix"),
        ("what about coffee", "coffee", None),
        ("how about gas?", "fuel", None),
    ],
)
def test_spending_follow_ups_keep_the_period(
    follow: str, category: str | None, merchant: str | None
) -> None:
    found = follow_spending(follow, "how much did I spend on groceries in October?", TODAY)
    assert found is not None
    ask, note = found
    assert (ask.category[1] if ask.category else None) == category
    assert ask.merchant == merchant
    before = read_spending("how much did i spend on groceries in october?", TODAY)
    assert before is not None and ask.period == before.period
    assert "October" in note


def test_no_spending_follow_up_after_another_kind_of_question() -> None:
    assert follow_spending("and netflix?", "what's my net worth?", TODAY) is None
    assert follow_spending("and my amex?", "what did i spend last month", TODAY) is None


@pytest.mark.parametrize(
    "text",
    [
        "whats my credit score? been meaning to check it for like a year",
        "what's my fico score? asking cause my landlord wants it",
        "whats a good chili recipe? having people over sunday for the game",
        "will the market crash next month? trying to decide when to buy",
    ],
)
def test_a_later_part_that_only_tells_gets_no_answer_of_its_own(text: str) -> None:
    found = _tasks(text)
    assert len(found) == 1, found  # the question's answer, and nothing for the remark


def test_a_later_part_that_asks_is_still_answered() -> None:
    assert len(_tasks("whats my amex balance? tell me about pmi")) == 2
    assert len(_tasks("whats my citi balance? and the apr on it")) == 2


def test_a_part_that_points_back_is_ranked_as_what_it_points_at() -> None:
    _, second = _tasks("what's an escrow account? how often do they review it")
    assert isinstance(second, Figures)
    assert [h.doc.title for h in second.hits][:1] == ["Mortgage escrow accounts: the basics"]
    _, limit = _tasks("what does fdic insurance cover? is there a limit on it")
    assert isinstance(limit, Figures)  # the FDIC's limit, not every page with a limit
    assert [h.doc.title for h in limit.hits] == ["Understanding deposit insurance"]
