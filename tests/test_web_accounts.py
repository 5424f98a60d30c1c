"""Where account, portfolio and market-data citations open: the user's own pages only."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from webapp.citations import account_path
from webapp.store import authenticate, get_engine, list_accounts, list_holdings

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


@pytest.mark.parametrize("name", ["Sapphire Preferred", "Individual", "Home"],
                         ids=["plaid-card", "brokerage", "manual"])
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
    ["/accounts/..%2F..%2Fetc%2Fpasswd", "/accounts/../../etc/passwd", "/accounts/%00",
     "/accounts/12345678901234567890", "/accounts/short", "/accounts/" + "a" * 200,
     "/accounts/<script>alert(1)</script>", "/accounts/a%20b%20c%20d%20e%20f%20g%20h",
     "/accounts/AtVPgKt5aF8ZFKGcCMHn2zgT/extra"],
    ids=["encoded-traversal", "traversal", "nul", "all-digits", "too-short", "too-long",
         "markup", "spaces", "extra-segment"],
)
def test_hostile_account_ids_are_not_found(demo: FlaskClient, path: str) -> None:
    response = demo.get(path)
    assert response.status_code == 404
    assert "<script>" not in response.get_data(as_text=True)


def test_the_portfolio_lists_holdings_with_a_total(app: Flask, demo: FlaskClient) -> None:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    holdings = list_holdings(get_engine(app), user.id)
    response = demo.get("/portfolio")
    page = soup(response)
    tickers = [row.select_one("td").get_text().split()[0] for row in page.select("tbody tr")]
    assert tickers == [str(h["ticker"]) for h in holdings]
    total = sum(float(str(h["market_value"])) for h in holdings)
    assert f"{total:,.2f} USD" in page.select_one(".portfolio-total").get_text()
    assert_no_provider(response)


@pytest.mark.parametrize("ticker", ["AAPL", "aapl", "VTI"], ids=["upper", "lower", "etf"])
def test_a_market_page_shows_the_bundled_quote(demo: FlaskClient, ticker: str) -> None:
    response = demo.get(f"/markets/{ticker}")
    assert response.status_code == 200
    page = soup(response)
    assert page.select_one(".ticker").get_text().startswith(ticker.upper())
    assert page.select_one(".quote-price") is not None
    assert not page.select("img")  # the snapshot's logo URL is a third party's


@pytest.mark.parametrize("ticker", ["ZZZZ", "../etc", "A" * 30, "<script>", "%00", "AA PL"],
                         ids=["unknown", "traversal", "too-long", "markup", "nul", "space"])
def test_unknown_or_invalid_tickers_are_not_found(demo: FlaskClient, ticker: str) -> None:
    response = demo.get(f"/markets/{ticker}")
    assert response.status_code == 404
    assert "<script>" not in response.get_data(as_text=True)
