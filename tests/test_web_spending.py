"""Spending as pictures: server-drawn SVG charts by category for a month and by month for the
last six, each with a table for screen readers, on the spending page and an account's page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from bs4 import BeautifulSoup
from flask import Flask
from flask.testing import FlaskClient

from tests.support.paths import account_path
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.tools.sql.service import run_sql
from webapp.web.spending_charts import month_start


def _user(app: Flask, name: str = "demo") -> int:
    user = authenticate(get_engine(app), name, "demo")
    assert user is not None
    return user.id


@pytest.fixture
def demo(app: Flask, client: FlaskClient) -> FlaskClient:
    with client.session_transaction() as session:
        session["user_id"] = _user(app)
    return client


def _spent(app: Flask, since: str, until: str, account: str | None = None) -> float:
    extra = f" AND source_account_id = '{account}'" if account else ""
    result = run_sql(
        get_engine(app),
        _user(app),
        "SELECT SUM(amount) AS total FROM transaction_details"
        f" WHERE date >= '{since}' AND date < '{until}'"
        " AND category NOT IN ('TRANSFER_IN', 'TRANSFER_OUT', 'INCOME')"
        " AND subcategory <> 'LOAN_PAYMENTS_CREDIT_CARD_PAYMENT'" + extra,
    )
    assert result.error is None, result.error
    return float(str(result.rows[0]["total"] or 0))


def _money(text: str) -> float:
    return float(text.replace("$", "").replace(",", ""))


def test_the_spending_page_draws_both_charts_with_tables(app: Flask, demo: FlaskClient) -> None:
    page = BeautifulSoup(demo.get("/spending").get_data(as_text=True), "html.parser")
    assert page.select_one('nav.topnav a[href="/spending"]').get_text() == "Spending"
    charts = page.select("section.spending-chart")
    assert len(charts) == 2
    for chart in charts:
        svg = chart.select_one("svg")
        assert svg is not None and svg["aria-hidden"] == "true"
        assert chart.select_one("table caption") is not None
        assert len(chart.select("svg rect")) == len(chart.select("table tbody tr"))
    by_month = charts[1].select("table tbody tr")
    assert len(by_month) == 6
    today = datetime.now(UTC).date()
    last, this = month_start(today, 1), month_start(today)
    total = _money(charts[0].select_one("table tfoot td").get_text())
    assert total == pytest.approx(_spent(app, last.isoformat(), this.isoformat()), abs=0.01)
    # The month's row in the six-month chart says the same figure.
    row = next(tr for tr in by_month if tr.th.get_text().startswith(last.strftime("%B")))
    assert _money(row.td.get_text()) == pytest.approx(total, abs=0.01)


@pytest.mark.parametrize("month", ["1999-01", "2026-13", "<script>", "x" * 500, ""])
def test_an_odd_month_shows_last_month(demo: FlaskClient, month: str) -> None:
    response = demo.get("/spending", query_string={"month": month})
    assert response.status_code == 200
    last = month_start(datetime.now(UTC).date(), 1)
    assert f"{last.strftime('%B')} {last.year}" in response.get_data(as_text=True)
    assert "<script>" not in response.get_data(as_text=True)


def test_an_accounts_page_charts_that_accounts_spending(app: Flask, demo: FlaskClient) -> None:
    accounts = list_accounts(get_engine(app), _user(app))
    amex = next(a for a in accounts if a["institution_name"] == "American Express")
    account_id = str(amex["source_account_id"])
    page = BeautifulSoup(demo.get(account_path(account_id)).get_data(as_text=True), "html.parser")
    charts = page.select("section.spending-chart")
    assert len(charts) == 2
    today = datetime.now(UTC).date()
    last, this = month_start(today, 1), month_start(today)
    total = _money(charts[0].select_one("table tfoot td").get_text())
    assert total == pytest.approx(
        _spent(app, last.isoformat(), this.isoformat(), account_id), abs=0.01
    )
    home = next(a for a in accounts if a["account_name"] == "Home")
    manual = demo.get(account_path(str(home["source_account_id"])))
    assert "spending-chart" not in manual.get_data(as_text=True)
