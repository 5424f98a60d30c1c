"""The offline engine computes what the sixth development set's kinds of question ask of a
person's own figures, however worded: the room below a utilization line, a target said in
words, the gap between an account's two ends, an X-to-Y ratio, bank accounts as a share of
assets, what one unit of a holding is worth, and a sum of a balance and a card's unused credit
(issue 19). The wordings here are in no evaluation set."""

from __future__ import annotations

import pytest

from webapp.llm.offline.cite import Result
from webapp.llm.offline.compute import computation_queries, read_computation, write_computation
from webapp.llm.offline.figures import rows_of
from webapp.llm.offline.goals import read_goal
from webapp.llm.offline.scope import scope_reply
from webapp.llm.offline.words import a_or_an


def _result(index: int, *rows: dict[str, object]) -> Result:
    texts = ["\n".join(f"{k}: {v}" for k, v in row.items()) for row in rows]
    block = {
        "type": "search_result",
        "source": "r",
        "title": "r",
        "content": [{"type": "text", "text": t} for t in texts],
    }
    return Result("execute_sql", index, block)


def _card(place: str, owed: float, limit: float) -> dict[str, object]:
    return {
        "account_name": "Credit card",
        "institution_name": place,
        "account_type": "credit",
        "account_subtype": "credit card",
        "current_balance": owed,
        "currency": "USD",
        "credit_limit": limit,
        "available_balance": limit - owed,
    }


def _bank(name: str, place: str, balance: float) -> dict[str, object]:
    return {
        "account_name": name,
        "institution_name": place,
        "account_type": "depository",
        "account_subtype": name.lower(),
        "current_balance": balance,
        "currency": "USD",
    }


def _said(text: str, *rows: dict[str, object]) -> str:
    found = read_computation(text)
    assert found is not None
    blocks = write_computation(found, rows_of([_result(0, *rows)]))
    return "".join(b[0] for b in blocks)


@pytest.mark.parametrize(
    ("text", "pct"),
    [
        ("what's the most I can charge on my cards and still stay under 30% utilization", 30.0),
        ("how much headroom before my visa passes 10 percent of its limit", 10.0),
        ("keeping each card below 25% of the credit line, how much more can go on them", 25.0),
        ("room left on the amex until I hit the 50% mark?", 50.0),
    ],
)
def test_the_room_below_a_utilization_line(text: str, pct: float) -> None:
    found = read_computation(text)
    assert found is not None and (found.op, found.goal) == ("line", pct)


def test_each_card_below_the_line_and_one_over_it() -> None:
    said = _said(
        "how much more can I put on my cards before I go over 30 percent utilization",
        _card("Citi", 500.0, 2_000.0),
        _card("Discover", 900.0, 2_000.0),
    )
    assert "you could put $100.00 more on it" in said
    assert "you are already $300.00 over" in said


@pytest.mark.parametrize(
    ("text", "goal"),
    [
        ("what would it take to bring my savings up to ten grand", 10_000.0),
        ("how much do I need to add to checking to have an even two thousand", 2_000.0),
        ("how far short is my savings of twenty k", 20_000.0),
    ],
)
def test_a_target_said_in_words(text: str, goal: float) -> None:
    found = read_goal(text)
    assert found is not None and (found.op, found.goal) == ("target", goal)


def test_the_gap_between_an_accounts_two_ends() -> None:
    found = read_computation(
        "what's the spread between my richest bank account and my emptiest one"
    )
    assert found is not None and found.op == "difference"
    assert [s.extreme for s in found.sides] == ["most", "least"]
    assert all(s.kinds == found.sides[0].kinds for s in found.sides)
    # each end is read alone, so that it cites that account and no other of its label
    assert all("LIMIT 1" in q for q in computation_queries(found))
    said = _said(
        "what's the spread between my richest bank account and my emptiest one",
        _bank("Checking", "Chase", 900.0),
        _bank("Checking", "Wells Fargo", 100.0),
        _bank("Savings", "Ally", 5_000.0),
    )
    assert "$4,900.00 more than" in said


def test_an_x_to_y_ratio_said_plainly() -> None:
    said = _said(
        "so what's my debt-to-asset ratio",
        _card("Citi", 500.0, 2_000.0),
        _bank("Savings", "Ally", 50_000.0),
    )
    assert "Your debts are 1.0% of your assets" in said


def test_bank_accounts_as_a_share_of_assets() -> None:
    found = read_computation(
        "how much of my total assets sits in checking and savings, rather than the house?"
    )
    assert found is not None and found.op == "share"
    assert found.sides[0].kinds == ("checking", "savings")


def test_a_sum_of_a_balance_and_unused_credit() -> None:
    said = _said(
        "between my checking and the unused credit on my citi card, how much could I spend in total",
        _card("Citi", 500.0, 2_000.0),
        _bank("Checking", "Chase", 1_000.0),
    )
    assert "Together that comes to $2,500.00" in said


def test_sort_it_out_is_no_ranking() -> None:
    assert read_goal("how soon must the bank sort out my complaint about the card") is None
    found = read_goal("sort my cards by what I owe")
    assert found is not None and found.op == "rank"


def test_a_told_card_number_is_not_asked_for() -> None:
    assert scope_reply("what's my card number?") is not None
    assert scope_reply("A thief copied my card number. Am I on the hook for any of it?") is None


@pytest.mark.parametrize(
    ("figure", "article"),
    [
        ("$8,000.00", "an"),
        ("$11,000.00", "an"),
        ("$18.50", "an"),
        ("$800.00", "an"),
        ("$1,800.00", "a"),
        ("$15,000.00", "a"),
        ("$110,000.00", "a"),
        ("80%", "an"),
    ],
)
def test_a_figure_takes_the_article_it_is_read_with(figure: str, article: str) -> None:
    assert a_or_an(figure) == article
