"""Where account, portfolio and market-data citations open: the user's own pages only."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from bs4 import BeautifulSoup, Tag
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.support.paths import account_path
from webapp.services import override_services
from webapp.store.accounts import list_accounts, list_holdings
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.tools.python.market import FinnhubLive, SnapshotMarket
from webapp.web.accounts import kind_words

PROVIDERS = ("plaid", "snaptrade", "manual")


def soup(response: TestResponse) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


def accounts_of(app: Flask, username: str) -> list[dict[str, Any]]:
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    return list_accounts(get_engine(app), user.id)


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    with client.session_transaction() as session:
        session["user_id"] = user.id
    return client


def assert_no_provider(response: TestResponse) -> None:
    main = soup(response).select_one("main")
    assert main is not None
    assert not any(p in main.get_text().lower() for p in PROVIDERS)


def test_the_accounts_page_lists_the_users_accounts(app: Flask, demo: FlaskClient) -> None:
    response = demo.get("/accounts")
    assert response.status_code == 200
    names = [n.get_text() for n in soup(response).select(".account-name")]
    assert sorted(names) == sorted(str(a["account_name"]) for a in accounts_of(app, "demo"))
    assert names.count("Credit card") == 2 and "Sapphire Preferred" in names
    links = {a["href"] for a in soup(response).select("a.account-link")}
    assert account_path(str(accounts_of(app, "demo")[0]["source_account_id"])) in links
    assert_no_provider(response)


def test_each_account_says_when_its_data_last_synced(app: Flask, demo: FlaskClient) -> None:
    cards = {
        card.select_one(".account-name").get_text(): card.get_text(" ", strip=True)
        for card in soup(demo.get("/accounts")).select(".account-card")
    }
    # Seeded as the bank would have synced them: Chase 2 hours ago; the house typed in by hand.
    assert "Synced 2 hours ago" in cards["Sapphire Preferred"]
    assert "Entered by hand" in cards["Home"] and "Synced" not in cards["Home"]
    home = next(a for a in accounts_of(app, "demo") if a["account_name"] == "Home")
    page = soup(demo.get(account_path(str(home["source_account_id"]))))
    assert "Entered by hand" in page.select_one("h1 + p").get_text()


@pytest.mark.parametrize(
    "name", ["Sapphire Preferred", "Individual", "Home"], ids=["plaid-card", "brokerage", "manual"]
)
def test_an_account_page_shows_that_account(app: Flask, demo: FlaskClient, name: str) -> None:
    account = next(a for a in accounts_of(app, "demo") if a["account_name"] == name)
    response = demo.get(account_path(str(account["source_account_id"])))
    assert response.status_code == 200
    assert soup(response).select_one("h1").get_text() == name
    assert_no_provider(response)


def test_the_brokerage_page_lists_its_holdings(app: Flask, demo: FlaskClient) -> None:
    account = next(a for a in accounts_of(app, "demo") if a["account_name"] == "Individual")
    page = soup(demo.get(account_path(str(account["source_account_id"]))))
    assert [a.get_text() for a in page.select(".holdings a")] == ["AAPL", "VTI"]


def test_another_users_account_is_not_found_like_an_unknown_one(
    app: Flask, demo: FlaskClient
) -> None:
    theirs = accounts_of(app, "alex")[0]
    other = demo.get(account_path(str(theirs["source_account_id"])))
    unknown = demo.get(account_path("AAAAAAAAAAAAAAAAAAAAAAAA"))
    assert other.status_code == unknown.status_code == 404
    assert soup(other).select_one("main").get_text() == soup(unknown).select_one("main").get_text()
    assert str(theirs["account_name"]) not in other.get_data(as_text=True)


@pytest.mark.parametrize(
    "path",
    [
        "/accounts/..%2F..%2Fetc%2Fpasswd",
        "/accounts/../../etc/passwd",
        "/accounts/%00",
        "/accounts/12345678901234567890",
        "/accounts/short",
        "/accounts/" + "a" * 200,
        "/accounts/<script>alert(1)</script>",
        "/accounts/a%20b%20c%20d%20e%20f%20g%20h",
        "/accounts/AtVPgKt5aF8ZFKGcCMHn2zgT/extra",
    ],
    ids=[
        "encoded-traversal",
        "traversal",
        "nul",
        "all-digits",
        "too-short",
        "too-long",
        "markup",
        "spaces",
        "extra-segment",
    ],
)
def test_hostile_account_ids_are_not_found(demo: FlaskClient, path: str) -> None:
    response = demo.get(path)
    assert response.status_code == 404
    assert "<script>" not in response.get_data(as_text=True)


def holdings_of(app: Flask, username: str) -> list[dict[str, Any]]:
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    return list_holdings(get_engine(app), user.id)


def dollars(amount: Decimal | int) -> str:
    """Spell an amount the way the pages must: "$1,842.17", "-$20.00"."""
    return f"-${-amount:,.2f}" if amount < 0 else f"${amount:,.2f}"


def text(page: Tag, selector: str) -> str:
    node = page.select_one(selector)
    assert node is not None, selector
    return " ".join(node.get_text().split())


def test_the_portfolio_lists_holdings_with_a_total(app: Flask, demo: FlaskClient) -> None:
    holdings = holdings_of(app, "demo")
    response = demo.get("/portfolio")
    page = soup(response)
    rows = page.select(".holdings tbody tr")
    assert [row.select_one("td").get_text().split()[0] for row in rows] == [
        str(h["ticker"]) for h in holdings
    ]
    total = sum(Decimal(str(h["market_value"])) for h in holdings)
    assert text(page, ".portfolio-total .amount") == dollars(total)
    assert_no_provider(response)


# Balances follow Plaid: a credit or loan account's balance is what is owed.
DEBT_TYPES = ("credit", "loan")


def test_the_accounts_page_groups_assets_and_debts_with_totals_and_net_worth(
    app: Flask, demo: FlaskClient
) -> None:
    accounts = accounts_of(app, "demo")
    assets = [a for a in accounts if a["account_type"] not in DEBT_TYPES]
    debts = [a for a in accounts if a["account_type"] in DEBT_TYPES]
    assert assets and debts and {a["currency"] for a in accounts} == {"USD"}
    have = sum(Decimal(str(a["current_balance"])) for a in assets)
    owe = sum(abs(Decimal(str(a["current_balance"]))) for a in debts)
    page = soup(demo.get("/accounts"))

    for group, members in (("#assets", assets), ("#debts", debts)):
        names = [n.get_text() for n in page.select(f"{group} .account-name")]
        assert sorted(names) == sorted(str(a["account_name"]) for a in members)
    assert text(page, "#assets .group-total") == dollars(have)
    assert text(page, "#debts .group-total") == dollars(owe)
    assert text(page, ".summary-assets dd") == dollars(have)
    assert text(page, ".summary-debts dd") == dollars(owe)
    assert text(page, ".net-worth dt") == "Net worth"
    assert text(page, ".net-worth dd") == dollars(have - owe)
    note = text(page, ".net-worth-note")
    assert "assets minus debts" in note
    assert f"{len(assets)} asset accounts" in note and f"{len(debts)} credit and loan" in note


def test_a_debt_reads_as_owed(app: Flask, demo: FlaskClient) -> None:
    card = next(a for a in accounts_of(app, "demo") if a["account_name"] == "Sapphire Preferred")
    owed = dollars(Decimal(str(card["current_balance"])))
    page = soup(demo.get(account_path(str(card["source_account_id"]))))
    assert (text(page, ".current-balance dt"), text(page, ".current-balance dd")) == (
        "Balance owed",
        owed,
    )
    listing = soup(demo.get("/accounts"))
    balances = [text(li, ".account-balance") for li in listing.select("#debts li")]
    assert f"{owed} owed" in balances


# An amount on a page: "$1,842.17", "-$20.00", "+$0.09"; a bare or "USD"-suffixed one fails.
AMOUNT = re.compile(r"[-+]?\$?(?<![\d.,])\d{1,3}(?:,\d{3})*\.\d{2}(?![\d%])")
DOLLARS = re.compile(r"[-+]?\$\d{1,3}(?:,\d{3})*\.\d{2}")


def page_paths(app: Flask) -> list[str]:
    accounts = {str(a["account_name"]): a for a in accounts_of(app, "demo")}
    return [
        "/accounts",
        "/portfolio",
        "/markets/AAPL",
        "/markets/VTI",
        *(
            account_path(str(accounts[name]["source_account_id"]))
            for name in ("Sapphire Preferred", "Individual", "Home")
        ),
    ]


def test_money_reads_one_way_on_every_page(app: Flask, demo: FlaskClient) -> None:
    for path in page_paths(app):
        main = soup(demo.get(path)).select_one("main")
        assert main is not None, path
        words = " ".join(main.get_text().split())
        amounts = AMOUNT.findall(words)
        assert amounts, path
        assert [a for a in amounts if not DOLLARS.fullmatch(a)] == [], path
        assert "USD" not in words, path


def test_every_seeded_amount_is_shown_as_dollars(app: Flask, demo: FlaskClient) -> None:
    listing = " ".join(soup(demo.get("/accounts")).get_text().split())
    for account in accounts_of(app, "demo"):
        balance = abs(Decimal(str(account["current_balance"])))
        assert dollars(balance) in listing, account["account_name"]
    portfolio = " ".join(soup(demo.get("/portfolio")).get_text().split())
    for holding in holdings_of(app, "demo"):
        assert dollars(Decimal(str(holding["market_value"]))) in portfolio


def test_the_portfolio_charts_one_bar_per_holding_with_shares_adding_up_to_100(
    app: Flask, demo: FlaskClient
) -> None:
    holdings = holdings_of(app, "demo")
    values = {str(h["ticker"]): Decimal(str(h["market_value"])) for h in holdings}
    total = sum(values.values())
    page = soup(demo.get("/portfolio"))
    charts = page.select("svg.allocation-chart")
    assert len(charts) == 1
    chart = charts[0]
    bars = chart.select(".allocation-bar")
    assert sorted(text(bar, ".bar-label") for bar in bars) == sorted(values)
    assert len(chart.select("rect.bar")) == len(holdings)
    shares = {text(bar, ".bar-label"): Decimal(text(bar, ".bar-share").rstrip("%")) for bar in bars}
    assert sum(shares.values()) == 100
    for ticker, share in shares.items():
        assert abs(share - values[ticker] * 100 / total) <= Decimal("0.1"), ticker
    widths = {text(bar, ".bar-label"): float(str(bar.select_one("rect")["width"])) for bar in bars}
    largest = max(values, key=lambda t: values[t])
    assert max(widths, key=lambda t: widths[t]) == largest
    # The picture is for the eye; the table says the same to a screen reader.
    assert chart.get("aria-hidden") == "true" and not chart.get("style")
    table = page.select_one("table.allocation-table")
    assert table is not None and table.select_one("caption") is not None
    assert table.find_parent(class_="visually-hidden") is not None
    rows = table.select("tbody tr")
    assert len(rows) == len(holdings)
    assert sorted(Decimal(text(r, ".share").rstrip("%")) for r in rows) == sorted(shares.values())
    assert not page.select("[style]")  # the CSP allows no inline styles


def snapshot_day(ticker: str) -> tuple[str, str]:
    """Return the snapshot quote's day as the page must say it, and its ISO stamp."""
    moment = datetime.fromtimestamp(int(str(SnapshotMarket().quote(ticker)["t"])), UTC)
    return f"{moment.day} {moment:%b %Y}", moment.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize("ticker", ["AAPL", "VTI"])
def test_a_snapshot_quote_says_its_date_and_that_it_is_not_live(
    demo: FlaskClient, ticker: str
) -> None:
    day, stamp = snapshot_day(ticker)
    page = soup(demo.get(f"/markets/{ticker}"))
    warning = text(page, ".quote-warning")
    assert warning.startswith("Not a live price.")
    assert "snapshot" in warning and day in warning
    assert text(page, ".quote-age") == f"Quote as of {day}."
    assert page.select_one(".quote-age time")["datetime"] == stamp


def test_the_bundled_snapshot_is_dated_27_june_2025(demo: FlaskClient) -> None:
    assert "as of 27 Jun 2025" in text(soup(demo.get("/markets/AAPL")), ".quote-age")


class FrozenLive(FinnhubLive):
    """A live source that answers one stored quote (no network)."""

    def __init__(self, stamp: int) -> None:
        super().__init__("test-key", base_url="http://127.0.0.1:9")
        self.stamp = stamp

    def quote(self, symbol: str) -> dict[str, object]:
        return {
            "c": 1234.5,
            "d": -2.0,
            "dp": -0.16,
            "h": 1240,
            "l": 1230,
            "o": 1236,
            "pc": 1236.5,
            "t": self.stamp,
        }

    def profile(self, symbol: str) -> dict[str, object]:
        return {"name": "Example Corp", "currency": "EUR"}


def test_an_old_quote_from_the_live_source_is_not_called_live(
    app: Flask, demo: FlaskClient
) -> None:
    stamp = int(datetime(2024, 3, 8, 21, 0, tzinfo=UTC).timestamp())
    override_services(app, market=FrozenLive(stamp))
    page = soup(demo.get("/markets/EXMP"))
    warning = text(page, ".quote-warning")
    assert warning.startswith("Not a live price.") and "8 Mar 2024 at 21:00 UTC" in warning
    # Another currency keeps its code: one format, the dollar's sign only for dollars.
    assert text(page, ".quote-price").startswith("1,234.50 EUR -2.00 EUR (-0.16%)")


@pytest.mark.parametrize("ticker", ["AAPL", "aapl", "VTI"], ids=["upper", "lower", "etf"])
def test_a_market_page_shows_the_bundled_quote(demo: FlaskClient, ticker: str) -> None:
    response = demo.get(f"/markets/{ticker}")
    assert response.status_code == 200
    page = soup(response)
    assert page.select_one(".ticker").get_text().startswith(ticker.upper())
    assert page.select_one(".quote-price") is not None
    assert not page.select("img")  # the snapshot's logo URL is a third party's


@pytest.mark.parametrize(
    "ticker",
    ["ZZZZ", "../etc", "A" * 30, "<script>", "%00", "AA PL"],
    ids=["unknown", "traversal", "too-long", "markup", "nul", "space"],
)
def test_unknown_or_invalid_tickers_are_not_found(demo: FlaskClient, ticker: str) -> None:
    response = demo.get(f"/markets/{ticker}")
    assert response.status_code == 404
    assert "<script>" not in response.get_data(as_text=True)


def test_other_currencies_and_missing_balances_are_said_not_mixed(
    demo: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows: list[dict[str, Any]] = [
        {
            "account_name": "Giro",
            "account_type": "depository",
            "current_balance": 1200.5,
            "currency": "EUR",
        },
        {
            "account_name": "Karte",
            "account_type": "credit",
            "current_balance": 200,
            "currency": "EUR",
        },
        {
            "account_name": "Checking",
            "account_type": "depository",
            "current_balance": 10,
            "currency": "USD",
        },
        {
            "account_name": "Old loan",
            "account_type": "loan",
            "current_balance": None,
            "currency": "USD",
        },
    ]
    monkeypatch.setattr("webapp.web.accounts.list_accounts", lambda engine, user_id: rows)
    page = soup(demo.get("/accounts"))
    assert text(page, ".net-worth dd") == "1,000.50 EUR · $10.00"
    assert text(page, "#debts .group-total") == "200.00 EUR"
    note = text(page, ".net-worth-note")
    assert "Not counted, with no balance on record: Old loan." in note
    assert "nothing is converted" in note
    assert "No balance on record" in text(page, "#debts")


def test_the_chart_leaves_out_what_has_no_value_and_charts_each_currency(
    demo: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows: list[dict[str, Any]] = [
        {"ticker": "SAP", "security_type": "equity", "market_value": 300, "currency": "EUR"},
        {"ticker": "ASML", "security_type": "equity", "market_value": 100, "currency": "EUR"},
        {"ticker": "AAPL", "security_type": "equity", "market_value": 50, "currency": "USD"},
        {"ticker": "GONE", "security_type": "equity", "market_value": 0, "currency": "USD"},
    ]
    monkeypatch.setattr("webapp.web.accounts.list_holdings", lambda engine, user_id: rows)
    page = soup(demo.get("/portfolio"))
    charts = page.select("svg.allocation-chart")
    assert [[text(b, ".bar-share") for b in c.select(".allocation-bar")] for c in charts] == [
        ["75.0%", "25.0%"],
        ["100.0%"],
    ]
    assert text(page, ".portfolio-total") == "400.00 EUR · $50.00 in 4 holdings"
    assert text(page, ".allocation-left-out") == (
        "Not in the chart, with no positive market value: GONE."
    )


@pytest.mark.parametrize(
    ("account_type", "subtype", "words"),
    [
        ("depository", "checking", "Checking account"),
        ("depository", "savings", "Savings account"),
        ("credit", "credit card", "Credit card"),
        ("investment", "brokerage", "Brokerage account"),
        ("loan", None, "Loan"),
        (None, None, None),
    ],
    ids=["checking", "savings", "card", "brokerage", "loan", "unknown"],
)
def test_an_account_type_reads_as_people_say_it(
    account_type: str | None, subtype: str | None, words: str | None
) -> None:
    assert kind_words(account_type, subtype) == words
