"""The offline engine computes over the accounts a person chooses, whatever the wording: totals,
one account less others, what an account would be left at, shares of a whole measured another
way, and a leading clause that leaves something out (issue 19's fourth development set).
The wordings here are in no evaluation set."""

from __future__ import annotations

from datetime import date

import pytest

from webapp.llm.offline.ask import understand
from webapp.llm.offline.compute import computation_queries, read_computation
from webapp.llm.offline.leaving import exclusion_last
from webapp.llm.offline.sides import measure_of, side
from webapp.llm.offline.spending_ask import read_spending


@pytest.mark.parametrize(
    ("text", "op", "count"),
    [
        ("can you sum up my wells fargo checking and my chase savings", "total", 2),
        ("how much do i have in checking and savings combined", "total", 2),
        ("tally up my crypto wallet, my brokerage and my savings", "total", 3),
        (
            "say I cleared the citi card using my wells fargo checking, what's left in it?",
            "left",
            2,
        ),
        ("if we knocked out the amex and the sapphire with savings what remains", "left", 3),
        ("start with my checking and take away the citi balance", "minus", 2),
        ("subtract my card debt from my savings", "minus", 2),
        ("amex vs citi - which is bigger?", "difference", 2),
        # the accounts named first, then summed (issue 19's eleventh set)
        ("checking and the crypto wallet put together, what's that come to?", "total", 2),
        # where it is paid from named first, by what would remain in it
        ("how much would remain in my savings once i cleared both cards entirely", "left", 2),
        ("what would be left in wells fargo checking if i paid off citi", "left", 2),
    ],
)
def test_sums_and_what_ifs_over_chosen_accounts(text: str, op: str, count: int) -> None:
    found = read_computation(text)
    assert found is not None
    assert (found.op, len(found.sides)) == (op, count)


@pytest.mark.parametrize(
    "text",
    [
        "what's the most I could put in a 401k this year",  # a limit, not an account
        "add up the fees on a roth ira",  # nothing of theirs named
        "what would my balance be next year",  # a forecast
    ],
)
def test_no_computation_where_none_is_asked(text: str) -> None:
    found = read_computation(text)
    assert found is None or found.op not in ("highest", "total", "left", "minus")


def test_each_side_is_queried_on_its_own() -> None:
    found = read_computation("add up my amex and my wells fargo checking")
    assert found is not None
    queries = computation_queries(found)
    assert len(queries) == 2  # no query of every account: a label shown twice is one source
    assert "american" in queries[0] and "wells" in queries[1]


@pytest.mark.parametrize(
    ("text", "measure"),
    [
        ("my unused credit", "available"),
        ("my spare room on the cards", "available"),
        ("the total of my card limits", "limit"),
        ("my whole credit line", "limit"),
        ("my uninvested cash", "cash"),
        ("my savings", "balance"),
    ],
)
def test_what_a_side_measures(text: str, measure: str) -> None:
    assert measure_of(side(text)) == measure


def test_a_share_of_a_whole_measured_another_way() -> None:
    found = read_computation("what fraction of my card limits have I not used")
    assert found is None or found.op == "share"
    found = read_computation("how much of my credit line is unused right now")
    assert found is not None and found.op == "share"
    assert found.measures == ("available", "limit")


@pytest.mark.parametrize(
    ("text", "kinds", "left_out"),
    [
        ("Ignoring the house, what am I worth?", (), ("property",)),
        (
            "setting aside my savings: which bank account has the most?",
            ("depository",),
            ("savings",),
        ),
    ],
)
def test_a_leading_clause_leaves_out(
    text: str, kinds: tuple[str, ...], left_out: tuple[str, ...]
) -> None:
    question = understand(text)
    assert question.kinds == kinds
    assert question.excluded_kinds == left_out
    assert exclusion_last("what's my net worth") == "what's my net worth"


def test_leaving_out_one_named_account_is_not_every_card() -> None:
    question = understand("Without the Citi card, how much do I owe?")
    assert question.excluded == ("citi",)
    assert question.excluded_kinds == ()


@pytest.mark.parametrize(
    ("text", "spending"),
    [
        ("how much can I still spend on the amex", False),  # the credit left
        ("what did groceries set me back last month", True),
        ("how much went on dining in October", True),
        ("what did the Pike Place Chowder lunch cost me?", True),  # a payee named, netted
        ("what's left if i paid the sapphire from checking", False),  # a what-if
        ("does my Citi Double Cash agreement have a foreign transaction fee", False),
        ("i get paid in cash, is that taxable?", False),  # no spending asked
    ],
)
def test_spending_or_credit_left(text: str, spending: bool) -> None:
    assert (read_spending(text, date(2026, 12, 1)) is not None) is spending
