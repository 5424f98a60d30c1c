"""The offline engine computes over the user's own figures however they word it: the gap within
a pair of accounts, one figure netted against others, a total less others, a trip named by its
payees, a payee's charge or a paycheck asked of alone, what an account is left at after a bill
(a follow-up), a regular saving counted over a span, and how long a balance pays a bill (issue
19's ninth development set). The wordings here are in no evaluation set."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from tests.eval.scoring import Evaluator, Question
from tests.support.sql_results import row_result
from webapp.llm.offline.after_bill import read_after_bill
from webapp.llm.offline.bill_months import read_bill_months
from webapp.llm.offline.cite import Block
from webapp.llm.offline.compute import read_computation, write_computation
from webapp.llm.offline.figures import rows_of
from webapp.llm.offline.guidance import read_guided_after
from webapp.llm.offline.projection import read_projection
from webapp.llm.offline.regular import read_regular
from webapp.llm.offline.spending import read_spending
from webapp.llm.offline.trips import read_trip

TODAY = date(2026, 12, 1)


def account(name: str, place: str, kind: str, subtype: str, balance: float) -> dict[str, object]:
    return {
        "source": "plaid",
        "source_account_id": f"{place}-{name}".replace(" ", "-"),
        "account_name": name,
        "institution_name": place,
        "account_type": kind,
        "account_subtype": subtype,
        "current_balance": balance,
        "currency": "USD",
    }


CHECKING = account("Checking", "Chase", "depository", "checking", 1200.0)
OTHER_CHECKING = account("Checking", "Ally", "depository", "checking", 450.0)
SAVINGS = account("Savings", "Chase", "depository", "savings", 9000.0)
CARD = account("Freedom", "Chase", "credit", "credit card", 700.0)


def written(blocks: list[Block]) -> str:
    return "".join(text for text, _ in blocks)


# --- a pair, netting, a total less others ------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "how far apart are both of my checking accounts",
        "what's the spread between my 2 checking accounts",
        "difference in my two checking accounts?",
    ],
)
def test_the_gap_within_a_pair_of_accounts(text: str) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "difference"
    assert [s.extreme for s in found.sides] == ["most", "least"]
    assert all(s.kinds == ("checking",) for s in found.sides)
    rows = rows_of([row_result(0, "a", CHECKING, OTHER_CHECKING)])
    assert "$750.00 more than" in written(write_computation(found, rows))


def test_two_sides_of_their_own_are_no_pair() -> None:
    found = read_computation("the gap between both my checking and my savings")
    assert found is not None and found.op == "difference"
    assert not any(s.extreme for s in found.sides)


@pytest.mark.parametrize(
    ("text", "base", "taken"),
    [
        ("net out my freedom card against chase checking and savings", 2, "credit"),
        ("net my chase savings against the freedom card", 1, "credit"),  # the debt netted off
        ("total my checking and savings, then subtract the freedom card", 2, "credit"),
        ("add up savings and checking and then take away what i owe on cards", 2, "credit"),
        ("take the freedom card off my checking and savings, what do i get", 2, "credit"),
    ],
)
def test_one_figure_netted_against_others(text: str, base: int, taken: str) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "minus"
    assert len(found.sides[0].kinds) == base and found.sides[1].kinds == (taken,)


def test_netted_written_from_each_accounts_rows() -> None:
    found = read_computation("net my chase card against my chase checking and savings")
    assert found is not None
    rows = rows_of(
        [row_result(0, "c", CHECKING), row_result(1, "s", SAVINGS), row_result(2, "f", CARD)]
    )
    assert "comes to $9,500.00" in written(write_computation(found, rows))


# --- spending by payee, and money in an account ------------------------------------------------


def test_money_in_an_account_is_no_cash_flow() -> None:
    for text in ("which account has the most money in it", "is there money in them"):
        found = read_spending(text, TODAY)
        assert found is None or found.kind != "cash_flow"
    flow = read_spending("money in vs money out this month", TODAY)
    assert flow is not None and flow.kind == "cash_flow"


@pytest.mark.parametrize(
    ("text", "merchant"),
    [
        ("how much did we pay comcast in october", "comcast"),
        ("what have i paid verizon this month", "verizon"),
        ("how much did i pay off on my card last month", None),
        ("what did i pay for the house", None),
    ],
)
def test_the_payee_paid(text: str, merchant: str | None) -> None:
    found = read_spending(text, TODAY)
    assert (found.merchant if found else None) == merchant


# --- a trip by its payees ----------------------------------------------------------------------


def test_a_trip_named_by_its_payees() -> None:
    trip = read_trip("what did my vacation cost me, the delta flight plus the marriott", TODAY)
    assert trip is not None and trip.place is None
    assert {"delta", "marriott"} <= trip.payees
    assert read_trip("how much did my last trip cost", TODAY) is None
    where = {"account_name": "Freedom", "institution_name": "Chase", "first_date": "2026-10-01"}
    rows: list[dict[str, object]] = [
        {"merchant": "Delta", "first_memo": "DELTA AIR", "last_memo": "DELTA AIR", "total": 300},
        {"merchant": "Marriott", "first_memo": "MARRIOTT", "last_memo": "MARRIOTT REFUND"},
        {"merchant": "Blue Bottle", "first_memo": "BLUE BOTTLE", "last_memo": "BLUE BOTTLE"},
    ]
    rows[1].update(total=250, refunded=50)
    rows[2].update(total=12)
    for row in rows:
        row.update(where)
    text = written(trip.write([row_result(0, "t", *rows)]))
    assert "$550.00, after $50.00 refunded" in text and "Blue Bottle" not in text


# --- a charge or a paycheck alone; after a bill, as a follow-up --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "what am i paying for netflix",
        "how large is each paycheck",
        "how big is a paycheck",
        # the payee as what is paid, with no "for" or "to"
        "what are we paying spotify",
        "how much do i pay planet fitness monthly",
    ],
)
def test_a_charge_or_a_paycheck_alone(text: str) -> None:
    assert read_regular(text, (), TODAY) is not None


@pytest.mark.parametrize("text", ["how much am i paying off each month", "what do i pay at costco"])
def test_what_is_paid_off_or_at_a_shop_is_no_regular_charge(text: str) -> None:
    assert read_regular(text, (), TODAY) is None


def test_after_a_bill_as_a_follow_up_of_a_balance() -> None:
    found = read_after_bill(
        "and once the mortgage is paid?", ("how much is in chase checking",), TODAY
    )
    assert found is not None and found.account.kinds == ("checking",)
    assert read_after_bill("and once the mortgage is paid?", (), TODAY) is None


def test_a_rule_asked_of_an_account_in_a_longer_follow_up() -> None:
    earlier = "whats the roth ira contribution limit for 2025"
    found = read_guided_after("could i pay that out of my savings right now", earlier)
    assert found is not None and found.question.kinds == ("savings",)


# --- a regular saving over a span --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "amount", "every", "months", "into"),
    [
        ("if i put $200 a week into savings, where will it be in 6 months", 200, "week", 6, True),
        (
            "say i save 150 out of each paycheck, what do i end up with in two years",
            150,
            "paycheck",
            24,
            False,
        ),
        (
            "if i keep stashing $1,000 a month in my checking what will it be by next year",
            1000,
            "month",
            12,
            True,
        ),
        (
            "depositing 75 dollars every two weeks, how much will i have 18 months from now",
            75,
            "fortnight",
            18,
            False,
        ),
    ],
)
def test_a_regular_saving_over_a_span(
    text: str, amount: float, every: str, months: float, into: bool
) -> None:
    found = read_projection(text, TODAY)
    assert found is not None
    assert (found.amount, found.every, found.months) == (amount, every, months)
    assert (found.into is not None) == into


@pytest.mark.parametrize(
    "text",
    [
        "should i put $500 a month into savings for a year",  # advice
        "what will my savings be next year",  # no amount: a forecast
        "i put $500 into savings last month",  # once, not again and again
        "how much will i have if i save $300 a month",  # no span
    ],
)
def test_no_projection_where_none_is_asked(text: str) -> None:
    assert read_projection(text, TODAY) is None


def test_a_saving_counted_from_the_account_and_the_pay() -> None:
    found = read_projection("if i move $250 a month into savings what will it be in a year", TODAY)
    assert found is not None
    text = written(found.write([row_result(0, "s", SAVINGS)]))
    assert "$12,000.00" in text and "interest" in text
    pay = {
        "source": "plaid",
        "source_account_id": "Chase-Checking",
        "account_name": "Checking",
        "institution_name": "Chase",
        "merchant": "Initech",
        "subcategory": "INCOME_WAGES",
        "charges": 13,
        "months": 6,
        "typical": -1800,
    }
    paid = read_projection(
        "if i save $100 from every paycheck how much will i have in 6 months", TODAY
    )
    assert paid is not None
    assert "$1,300.00" in written(paid.write([row_result(0, "p", pay)]))


# --- how long a balance pays a bill ------------------------------------------------------------


def test_how_long_a_balance_pays_a_bill() -> None:
    found = read_bill_months("how many months of rent could that pay for", ("my savings?",), TODAY)
    assert found is not None and found.account.kinds == ("savings",) and found.note
    rent = {
        "source": "plaid",
        "source_account_id": "Chase-Checking",
        "account_name": "Checking",
        "institution_name": "Chase",
        "merchant": "Maple Court",
        "subcategory": "RENT_AND_UTILITIES_RENT",
        "charges": 6,
        "months": 6,
        "typical": 1500,
    }
    text = written(found.write([row_result(0, "r", rent), row_result(1, "s", SAVINGS)]))
    assert "6.0 months of Maple Court" in text
    assert read_bill_months("how many weeks of rent is my checking", (), TODAY) is not None
    assert read_bill_months("how many months of rent is that", (), TODAY) is None


# --- through the API ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evaluator]:
    found = Evaluator(Path(tmp_path_factory.mktemp("calc")))
    yield found
    found.close()


@pytest.mark.parametrize(
    ("user", "before", "ask", "says"),
    [
        ("demo", (), "how far apart are my two checking accounts", "$2,715.57"),
        ("demo", (), "net the amex against my wells fargo checking", "$262.59"),
        (
            "alex",
            (),
            "if i tuck away $100 every paycheck how much will i have after 6 months",
            "$1,300.00",
        ),
        ("demo", ("what's in my savings",), "how many months of mortgage is that", "8.5 months"),
        ("alex", ("how much is in my checking",), "and once rent goes out?", "$1,245.44"),
    ],
)
def test_through_the_api(
    evaluator: Evaluator, user: str, before: tuple[str, ...], ask: str, says: str
) -> None:
    answer = evaluator.ask(Question(user=user, intent="compute", ask=ask, before=before))
    assert says in answer.content
    assert answer.citations


@pytest.mark.parametrize(
    ("text", "op", "count"),
    [
        ("add my checking accounts together and subtract the freedom card", "minus", 2),
        ("sum up my savings and checking and take away the amex", "minus", 2),
        ("could my checking pay that off today", "left", 2),
        ("would my savings cover the amex and the citi", "left", 3),
    ],
)
def test_more_sums_less_others_and_what_a_bank_account_would_pay(
    text: str, op: str, count: int
) -> None:
    found = read_computation(text)
    assert found is not None and (found.op, len(found.sides)) == (op, count)


@pytest.mark.parametrize(
    "text",
    ["can my sapphire cover rental car insurance", "does the chase sapphire cover trip delays"],
)
def test_what_a_card_covers_is_no_payment(text: str) -> None:
    found = read_computation(text)
    assert found is None or found.op != "left"
