"""Where account, portfolio and market-data citations open: the user's own data, by page.

An account id and a ticker are each one path segment (`<component:...>`, `webapp/web/links.py`):
the links to them are built by `page_href`, never by hand.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, abort, render_template

from ..citations.account_ids import is_account_id
from ..money import format_money, format_percent
from ..packets.destinations import AccountPage, MarketPage
from ..services import services
from ..store.accounts import find_account, list_accounts, list_holdings
from ..store.app_db import get_engine
from ..store.values import JsonValue
from ..tools.python.market import FinnhubLive, MarketData, MarketDataError
from .allocation import allocations
from .auth import current_user, login_required
from .balances import balance_sheet, side_of
from .links import add_converter, page_href
from .quote_age import quote_age
from .snippet import relative_time
from .spending_charts import month_start, spending_charts

bp = Blueprint("accounts", __name__)
# Before the routes below: their rules name the converter.
bp.record_once(add_converter)
# One money format for every page (`_money.html`'s macro calls it): "$1,842.17", "5.00 EUR".
bp.add_app_template_global(format_money, "format_money")
bp.add_app_template_global(format_percent, "format_percent")

_TICKER = re.compile(r"[A-Z0-9][A-Z0-9.\-]{0,19}", re.ASCII)
# Securities with a quote page; a crypto position has no market data here.
_QUOTED_TYPES = frozenset({"equity", "etf", "mutual_fund"})
# Only what a person reads: never the provider (`source`) or a secret column.
_ACCOUNT_FIELDS = (
    "account_name",
    "institution_name",
    "account_type",
    "account_subtype",
    "current_balance",
    "available_balance",
    "credit_limit",
    "currency",
    "official_name",
)


# Plaid's account types, as people name them.
_TYPE_WORDS = {
    "depository": "Bank account",
    "credit": "Credit card",
    "investment": "Investment account",
    "loan": "Loan",
}


def kind_words(account_type: object, subtype: object) -> str | None:
    """Return what kind of account it is, as people say it: "Checking account", "Credit card"."""
    kind = account_type.strip().lower() if isinstance(account_type, str) else ""
    sub = subtype.strip().lower() if isinstance(subtype, str) else ""
    if sub and sub not in _TYPE_WORDS.get(kind, "").lower():
        words = sub.capitalize()
        needs_noun = kind in ("depository", "investment") and "account" not in sub
        return f"{words} account" if needs_noun else words
    return _TYPE_WORDS.get(kind) or (kind.capitalize() or None)


def _account_view(account: Mapping[str, JsonValue]) -> dict[str, Any]:
    view: dict[str, Any] = {name: account.get(name) for name in _ACCOUNT_FIELDS}
    account_id = account.get("source_account_id")
    is_id = isinstance(account_id, str) and is_account_id(account_id)
    view["side"] = side_of(account.get("account_type"))
    view["kind"] = kind_words(account.get("account_type"), account.get("account_subtype"))
    synced_at = account.get("synced_at")
    ago = relative_time(synced_at) if isinstance(synced_at, str) else None
    # A manual account is typed in by hand: it has no sync to date it.
    view["synced"] = f"Synced {ago}" if ago else "Entered by hand"
    view["href"] = (
        page_href(AccountPage(account_id)) if is_id and isinstance(account_id, str) else None
    )
    return view


def _holding_view(holding: Mapping[str, JsonValue]) -> dict[str, Any]:
    fields = (
        "account_name",
        "institution_name",
        "ticker",
        "security_name",
        "security_type",
        "quantity",
        "market_value",
        "currency",
    )
    view: dict[str, Any] = {name: holding.get(name) for name in fields}
    ticker = holding.get("ticker")
    quoted = holding.get("security_type") in _QUOTED_TYPES
    view["quote_href"] = (
        page_href(MarketPage(ticker))
        if quoted and isinstance(ticker, str) and _TICKER.fullmatch(ticker)
        else None
    )
    return view


@bp.get("/accounts")
@login_required
def index() -> str:
    """List the user's accounts."""
    accounts = [_account_view(a) for a in list_accounts(get_engine(), current_user().id)]
    return render_template("accounts.html", accounts=accounts, sheet=balance_sheet(accounts))


@bp.get("/accounts/<component:account_id>")
@login_required
def show(account_id: str) -> str:
    """Show one account, found by any of its ids; unknown and other users' ids alike 404."""
    user = current_user()
    account = find_account(get_engine(), user.id, account_id) if is_account_id(account_id) else None
    if account is None:
        abort(404, "There is no such account.")
    own_id = account.get("source_account_id")
    holdings = [
        h
        for h in list_holdings(get_engine(), user.id)
        if own_id is not None and h.get("source_account_id") == own_id
    ]
    # Spending charts for an account that has transactions: a synced bank or card account.
    charts = []
    if account.get("source") == "plaid" and isinstance(own_id, str):
        today = datetime.now(UTC).date()
        month = month_start(today, 1)
        charts = spending_charts(get_engine(), user.id, month, today, account_id=own_id)
    return render_template(
        "account.html",
        account=_account_view(account),
        holdings=[_holding_view(h) for h in holdings],
        charts=charts,
    )


@bp.get("/portfolio")
@login_required
def portfolio() -> str:
    """Show the user's holdings across accounts, with a chart of how the value is spread."""
    holdings = [_holding_view(h) for h in list_holdings(get_engine(), current_user().id)]
    charts, left_out = allocations(holdings)
    return render_template("portfolio.html", holdings=holdings, charts=charts, left_out=left_out)


def _market() -> MarketData:
    return services().market


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@bp.get("/markets/<component:ticker>")
@login_required
def market(ticker: str) -> tuple[str, int] | str:
    """Show a ticker's quote from the market data (the bundled snapshot by default)."""
    symbol = ticker.strip().upper()
    if not _TICKER.fullmatch(symbol):
        abort(404, "There is no such ticker.")
    data = _market()
    try:
        quote, profile = data.quote(symbol), data.profile(symbol)
    except MarketDataError:
        page = render_template(
            "error.html",
            title="Market data unavailable",
            message="Market data could not be reached. Try again later.",
        )
        return page, 502
    price = _number(quote.get("c"))
    if not profile and not price:
        abort(404, "There is no market data for this ticker.")
    fields = {key: _number(quote.get(key)) for key in ("c", "d", "dp", "h", "l", "o", "pc")}
    name = profile.get("name") if isinstance(profile.get("name"), str) else None
    info = {
        key: profile.get(key)
        for key in ("exchange", "currency", "country", "ipo")
        if isinstance(profile.get(key), str)
    }
    # Only the live feed can be live; the bundled snapshot (or anything else) never is.
    age = quote_age(
        quote.get("t"), live_source=isinstance(data, FinnhubLive), now=datetime.now(UTC)
    )
    return render_template(
        "market.html", symbol=symbol, name=name, quote=fields, info=info, age=age
    )
