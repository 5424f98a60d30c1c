"""The pure helpers behind the accounts pages: money, the balance sheet, allocation, quote age."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from webapp.money import format_money, format_percent
from webapp.web.allocation import allocations, shares
from webapp.web.balances import balance_sheet, side_of
from webapp.web.quote_age import LIVE_FOR, quote_age


@pytest.mark.parametrize(
    ("value", "currency", "signed", "shown"),
    [
        (1842.17, "USD", False, "$1,842.17"),
        (1842.17, None, False, "$1,842.17"),
        (1842.17, "usd", False, "$1,842.17"),
        (-20, "USD", False, "-$20.00"),
        (0.09, "USD", True, "+$0.09"),
        (-0.09, "USD", True, "-$0.09"),
        (0, "USD", True, "$0.00"),
        (-0.001, "USD", False, "$0.00"),
        (2.675, "USD", False, "$2.68"),
        (1234.5, "EUR", False, "1,234.50 EUR"),
        (-1234.5, "gbp", False, "-1,234.50 GBP"),
        (150000, "JPY", False, "150,000 JPY"),
        (1e30, "USD", False, "$" + f"{10**30:,}.00"),
        (Decimal("533034.14"), "USD", False, "$533,034.14"),
        (None, "USD", False, "—"),
        ("12", "USD", False, "—"),
        (True, "USD", False, "—"),
        (float("nan"), "USD", False, "—"),
        (float("inf"), "USD", False, "—"),
    ],
    ids=[
        "dollars",
        "no-currency-is-dollars",
        "lower-case-code",
        "negative",
        "signed-up",
        "signed-down",
        "signed-zero",
        "no-negative-zero",
        "half-up",
        "euro-keeps-code",
        "negative-pound",
        "yen-no-cents",
        "huge",
        "decimal",
        "missing",
        "text",
        "bool",
        "nan",
        "infinity",
    ],
)
def test_money_has_one_format(value: object, currency: object, signed: bool, shown: str) -> None:
    assert format_money(value, currency, signed=signed) == shown


@pytest.mark.parametrize(
    ("value", "places", "signed", "shown"),
    [
        (25.34, 1, False, "25.3%"),
        (0.0467, 2, True, "+0.05%"),
        (-0.16, 2, True, "-0.16%"),
        (None, 1, False, "—"),
    ],
    ids=["share", "change-up", "change-down", "missing"],
)
def test_percent(value: object, places: int, signed: bool, shown: str) -> None:
    assert format_percent(value, places=places, signed=signed) == shown


@pytest.mark.parametrize(
    ("kind", "side"),
    [
        ("credit", "debt"),
        ("loan", "debt"),
        ("Credit", "debt"),
        ("depository", "asset"),
        ("investment", "asset"),
        ("property", "asset"),
        ("crypto", "asset"),
        (None, "asset"),
    ],
    ids=[
        "credit",
        "loan",
        "capitalised",
        "depository",
        "investment",
        "property",
        "crypto",
        "unknown",
    ],
)
def test_debts_are_credit_and_loan_accounts(kind: object, side: str) -> None:
    assert side_of(kind) == side


def account(kind: str, balance: object, currency: str | None = "USD") -> dict[str, Any]:
    return {
        "account_name": f"{kind} {balance}",
        "account_type": kind,
        "current_balance": balance,
        "currency": currency,
    }


def test_the_balance_sheet_adds_each_side_and_each_currency_on_its_own() -> None:
    sheet = balance_sheet(
        [
            account("depository", 100.10),
            account("credit", 40.05),
            account("loan", -1000),
            account("depository", 0.2),
            account("investment", None),
            account("depository", 50, "EUR"),
            account("credit", 20, "EUR"),
            account("property", 1, None),
        ]
    )
    assert [line.amount for line in sheet.debts.lines] == [
        Decimal("40.05"),
        Decimal(1000),
        Decimal(20),
    ]
    assert dict(sheet.assets.totals) == {"USD": Decimal("101.30"), "EUR": Decimal(50)}
    assert dict(sheet.debts.totals) == {"USD": Decimal("1040.05"), "EUR": Decimal(20)}
    assert dict(sheet.net_worth) == {"USD": Decimal("-938.75"), "EUR": Decimal(30)}
    assert [line.account["account_type"] for line in sheet.uncounted] == ["investment"]
    assert (sheet.assets.counted, sheet.debts.counted) == (4, 3)


def test_no_accounts_is_an_empty_sheet() -> None:
    sheet = balance_sheet([])
    assert sheet.assets.lines == sheet.debts.lines == () and sheet.net_worth == ()


@pytest.mark.parametrize(
    "values",
    [
        [1, 1, 1],
        [5712.5, 11584, 5250],
        [1],
        [1, 0],
        [1, 2, 3, 4, 5, 6, 7],
        [0.01, 1_000_000],
        [2, 2, 2, 2, 2, 2],
        [1 / 3, 2 / 3],
    ],
    ids=["thirds", "demo", "one", "with-zero", "seven", "tiny-and-huge", "sixths", "fractions"],
)
def test_shares_add_up_to_exactly_100(values: list[float]) -> None:
    decimals = [Decimal(repr(float(v))) for v in values]
    got = shares(decimals)
    assert sum(got) == 100
    total = sum(decimals)
    for value, share in zip(decimals, got, strict=True):
        assert abs(share - value * 100 / total) < Decimal("0.1")


@pytest.mark.parametrize("values", [[], [0, 0], [1, -1]], ids=["none", "zero-sum", "negative"])
def test_shares_refuse_what_has_no_whole(values: list[int]) -> None:
    with pytest.raises(ValueError):
        shares([Decimal(v) for v in values])


def test_allocation_charts_positive_holdings_largest_first_per_currency() -> None:
    holdings: list[dict[str, Any]] = [
        {"ticker": "AAA", "market_value": 100, "currency": "USD"},
        {"ticker": "BBB", "market_value": 300, "currency": "USD"},
        {
            "ticker": None,
            "security_name": "A very long fund name",
            "market_value": 100,
            "currency": "USD",
        },
        {"ticker": "SHORT", "market_value": -5, "currency": "USD"},
        {"ticker": "NONE", "market_value": None, "currency": "USD"},
        {"ticker": "EUR1", "market_value": 10, "currency": "EUR"},
    ]
    charts, left_out = allocations(holdings)
    assert [c.currency for c in charts] == ["USD", "EUR"]
    usd = charts[0]
    assert [b.label for b in usd.bars] == ["BBB", "AAA", "A very …"]
    assert [b.share for b in usd.bars] == [Decimal("60.0"), Decimal("20.0"), Decimal("20.0")]
    assert usd.total == 500 and usd.height == 3 * 32
    assert [b.y for b in usd.bars] == sorted(b.y for b in usd.bars)
    assert usd.bars[0].width == pytest.approx(3 * usd.bars[1].width)
    assert [h["ticker"] for h in left_out] == ["SHORT", "NONE"]
    assert [b.share for b in charts[1].bars] == [Decimal(100)]


NOW = datetime(2026, 1, 5, 15, 0, tzinfo=UTC)


def stamp(moment: datetime) -> int:
    return int(moment.timestamp())


def test_a_snapshot_quote_is_never_live_even_when_fresh() -> None:
    age = quote_age(stamp(NOW), live_source=False, now=NOW)
    assert not age.live and age.headline == "Not a live price."
    assert age.warning is not None and "snapshot" in age.warning and "5 Jan 2026" in age.warning
    assert age.as_of == "5 Jan 2026"


def test_the_bundled_snapshots_stamp_reads_27_jun_2025() -> None:
    age = quote_age(1751054400, live_source=False, now=NOW)
    assert age.as_of == "27 Jun 2025" and age.iso == "2025-06-27T20:00:00Z"


@pytest.mark.parametrize(
    ("ago", "live"),
    [
        (timedelta(0), True),
        (LIVE_FOR, True),
        (LIVE_FOR + timedelta(seconds=1), False),
        (timedelta(days=3), False),
        (-timedelta(minutes=1), True),
    ],
    ids=["now", "at-the-limit", "just-past", "weekend", "slight-skew"],
)
def test_a_live_sources_quote_is_live_only_while_recent(ago: timedelta, live: bool) -> None:
    age = quote_age(stamp(NOW - ago), live_source=True, now=NOW)
    assert age.live is live
    assert (age.warning is None) is live and (age.headline is None) is live
    if live:
        assert age.as_of is not None and age.as_of.endswith("UTC")


@pytest.mark.parametrize(
    "raw",
    [0, None, "1751054400", True, 2**40, stamp(NOW + timedelta(days=2))],
    ids=["zero", "missing", "text", "bool", "too-big", "future"],
)
def test_an_unknown_time_is_never_live(raw: object) -> None:
    for live_source in (True, False):
        age = quote_age(raw, live_source=live_source, now=NOW)
        assert not age.live and age.as_of is None and age.headline == "Not a live price."
