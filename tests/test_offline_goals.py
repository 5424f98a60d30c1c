"""The offline engine computes what people ask of their own figures however they word it: the
gap to a target, a ranking, how many times one figure covers another, sides that point back at
earlier questions, a bill or pay over a span, and utilization after a supposed charge (issue
19's fifth development set). The wordings here are in no evaluation set."""

from __future__ import annotations

from datetime import date

import pytest

from tests.support.sql_results import row_result
from webapp.llm.offline.ask import understand
from webapp.llm.offline.card_limits import supposed
from webapp.llm.offline.compute import read_computation, write_computation
from webapp.llm.offline.conversation import follow_up, previous_question
from webapp.llm.offline.figures import rows_of
from webapp.llm.offline.markets import holdings
from webapp.llm.offline.pointing import back, resolved
from webapp.llm.offline.regular import named, read_regular, read_span
from webapp.llm.offline.trips import read_trip

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize(
    ("text", "goal", "kind"),
    [
        ("how far am I from 10k in my chase checking", 10_000.0, "checking"),
        ("what's left to save to get my savings to $30,000", 30_000.0, "savings"),
        ("how much would I need to put into my checking to reach 3 grand", 3_000.0, "checking"),
        ("savings goal is 40k, how far off is my savings account", 40_000.0, "savings"),
    ],
)
def test_the_gap_to_a_target(text: str, goal: float, kind: str) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "target"
    assert found.goal == goal and kind in found.sides[0].kinds


def test_a_target_the_last_question_named() -> None:
    found = read_computation("how far is it from 50k?")
    assert found is not None and found.op == "target" and back(found.sides[0]) == 1
    pointed = resolved(found, ("whats in my chase savings",))
    assert pointed is not None and pointed.sides[0].kinds == ("savings",)
    assert "Chase savings account" in pointed.note


def test_the_gap_written_from_the_rows() -> None:
    found = read_computation("how short of 25k is my savings")
    assert found is not None
    savings = {
        "account_name": "Savings",
        "institution_name": "Chase",
        "account_type": "depository",
        "account_subtype": "savings",
        "current_balance": 18250,
        "currency": "USD",
    }
    text = "".join(t for t, _ in write_computation(found, rows_of([row_result(0, "s", savings)])))
    assert "$6,750.00 short of $25,000.00" in text


@pytest.mark.parametrize(
    ("text", "ascending"),
    [
        ("sort my accounts by balance, smallest first", True),
        ("list my cards from largest to smallest balance", False),
        ("put my credit cards in order of what I owe", False),
    ],
)
def test_a_ranking(text: str, ascending: bool) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "rank" and found.ascending == ascending


def test_how_many_times_one_figure_covers_another() -> None:
    found = read_computation("how many times over would my checking cover the amex")
    assert found is not None and found.op == "ratio"


@pytest.mark.parametrize(
    ("text", "earlier", "kinds"),
    [
        ("what's the difference between those two", ("my savings?", "and my checking?"), 2),
        ("how does that compare with my savings", ("whats in my wells fargo checking",), 2),
        ("what share of the first is the second", ("my net worth?", "what's the house worth"), 1),
    ],
)
def test_sides_that_point_back(text: str, earlier: tuple[str, ...], kinds: int) -> None:
    found = read_computation(text)
    assert found is not None and any(back(s) for s in found.sides)
    pointed = resolved(found, earlier)
    assert pointed is not None and pointed.note.startswith("Taking")
    assert sum(bool(s.kinds) for s in pointed.sides) == kinds


def test_one_account_on_its_own_after_a_question_about_all() -> None:
    found = follow_up("and the citi by itself?", previous_question(["what do i owe on my cards"]))
    assert found is not None and "citi" in found[0].institutions
    assert found[0].intents == ("debts",)


@pytest.mark.parametrize(
    ("text", "months", "paydays"),
    [
        ("what does my gym membership come to a year", 12.0, None),
        ("netflix and hulu, how much is that per month", 1.0, None),
        ("how much does rent cost me over 6 months", 6.0, None),
        ("what do three paychecks from acme add up to", None, 3),
    ],
)
def test_a_bill_or_pay_over_a_span(text: str, months: float | None, paydays: int | None) -> None:
    span = read_span(text)
    assert span is not None and (span.months, span.paydays) == (months, paydays)
    assert read_regular(text, (), TODAY) is not None


@pytest.mark.parametrize(
    "text",
    [
        "how much do i spend a month on groceries",  # spending, not a bill
        "could i save $500 a month",  # advice
        "how much can I put in an ira per year",  # a limit, no bill named
    ],
)
def test_no_bill_over_a_span_where_none_is_asked(text: str) -> None:
    assert read_regular(text, (), TODAY) is None


def test_a_span_alone_is_the_last_bill_over_it() -> None:
    found = read_regular("and over a year?", ("how much is my netflix",), TODAY)
    assert found is not None and "netflix" in found.text and found.note


def test_bills_are_matched_by_payee_and_by_kind() -> None:
    def bill(merchant: str, sub: str, typical: float) -> dict[str, object]:
        return {
            "account_name": "Checking",
            "institution_name": "Chase",
            "merchant": merchant,
            "description": merchant.upper(),
            "subcategory": sub,
            "charges": 6,
            "months": 6,
            "typical": typical,
        }

    results = [
        row_result(0, "c", bill("Oakwood Apartments", "RENT_AND_UTILITIES_RENT", 1875.0)),
        row_result(1, "d", bill("Netflix", "ENTERTAINMENT_TV_AND_MOVIES", 15.49)),
    ]
    rows = rows_of(results)
    assert [r.get("merchant") for r in named("my rent plus netflix", rows)] == [
        "Oakwood Apartments",
        "Netflix",
    ]
    found = read_regular("what do my rent and netflix cost a year", (), TODAY)
    assert found is not None
    text = "".join(t for t, _ in found.write(results))
    assert "$22,685.88" in text  # (1,875.00 + 15.49) x 12


def test_utilization_after_a_supposed_charge_or_payment() -> None:
    cards = rows_of([row_result(0, "c", {"account_type": "credit", "current_balance": 500})])
    (charged,) = supposed("if i charged $1,500 to it", (1500.0,), 500.0, 5000.0, cards)
    assert "$2,000.00 against $5,000.00: 40.0%" in charged[0]
    (paid,) = supposed("say i paid $500 off", (500.0,), 500.0, 5000.0, cards)
    assert "$0.00 against $5,000.00: 0.0%" in paid[0]
    assert supposed("what is my utilization", (), 500.0, 5000.0, cards) == []


@pytest.mark.parametrize(
    ("text", "ticker", "pct", "account"),
    [
        ("if apple dropped 15% what would my robinhood account be worth", "AAPL", -15.0, True),
        ("suppose VTI rose by 8 percent, what's my portfolio worth then", "VTI", 8.0, False),
        ("say nvidia crashed 40% - what happens to my brokerage", "NVDA", -40.0, True),
    ],
)
def test_a_holding_supposed_to_move(text: str, ticker: str, pct: float, account: bool) -> None:
    found = read_computation(text)
    assert found is not None and found.op == "move" and found.goal == pct
    assert found.sides[0].tickers == (ticker,) and (len(found.sides) == 2) == account


def test_no_move_where_a_forecast_is_asked() -> None:
    found = read_computation("will VTI fall 10% next year")
    assert found is None or found.op != "move"


def test_what_one_unit_is_worth_by_the_holding() -> None:
    holding = {
        "account_name": "Individual",
        "institution_name": "Robinhood",
        "ticker": "MSFT",
        "quantity": 4,
        "market_value": 1600.0,
        "security_type": "equity",
        "currency": "USD",
    }
    rows = rows_of([row_result(0, "r", holding)])
    text = holdings(understand("what's a single share of my msft worth"), rows)[0][0]
    assert "one MSFT is worth $400.00" in text
    assert "one MSFT" not in holdings(understand("how much msft do i have"), rows)[0][0]


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("How much did our Denver vacation cost, all in?", "denver"),
        ("what did the trip to new york come to", "new york"),
        ("add up my boston getaway for me", "boston"),
        ("how much is covered on my italy trip by the sapphire", None),  # a benefit, not a cost
        ("what did that Seattle Hilton stay cost me", None),  # one payee: the spending answer
    ],
)
def test_what_a_trip_came_to(text: str, place: str | None) -> None:
    found = read_trip(text, TODAY)
    assert (found.place if found else None) == place


def test_a_trip_is_the_place_named_charges_and_the_one_offs_around_them() -> None:
    def payee(merchant: str, memo: str, first: str, last: str, total: float) -> dict[str, object]:
        return {
            "account_name": "Sapphire Preferred",
            "institution_name": "Chase",
            "merchant": merchant,
            "first_memo": memo,
            "last_memo": memo,
            "first_date": first,
            "last_date": last,
            "total": total,
            "refunded": 50.0 if merchant == "Hyatt" else 0.0,
        }

    results = [
        row_result(0, "s", payee("Frontier", "FRONTIER AIR", "2026-09-01", "2026-09-01", 300.0)),
        row_result(1, "t", payee("Hyatt", "HYATT DENVER", "2026-09-03", "2026-09-06", 450.0)),
        row_result(2, "u", payee("Blue Bottle", "BLUE BOTTLE", "2026-06-02", "2026-11-30", 90.0)),
    ]
    found = read_trip("what did my denver trip cost", TODAY)
    assert found is not None
    text = "".join(t for t, _ in found.write(results))
    assert "came to $750.00, after $50.00 refunded by Hyatt" in text
    assert "Blue Bottle" not in text  # a routine payee, charging outside the trip's days


@pytest.mark.parametrize(
    "text", ["what is the 401k limit per year", "how much does my amex cost per year"]
)
def test_no_bill_when_the_span_is_of_a_rule_or_an_account(text: str) -> None:
    assert read_regular(text, (), TODAY) is None
