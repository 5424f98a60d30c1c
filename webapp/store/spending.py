"""The user's spending, summed through `transaction_details` for the pages' charts.

What counts as spending is one rule, `SPENDING`, used by the pages and by the offline
engine's answers alike: no transfers between one's own accounts, no card payments (the
card's purchases already count), no pay; a refund counts, negatively.
"""

from __future__ import annotations

from datetime import date

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from .engine import user_scope

SPENDING = (
    "COALESCE(category, '') NOT IN ('TRANSFER_IN', 'TRANSFER_OUT', 'INCOME')"
    " AND COALESCE(subcategory, '') <> 'LOAN_PAYMENTS_CREDIT_CARD_PAYMENT'"
)
_ACCOUNT = " AND source_account_id = :account_id"


def _sums(
    engine: Engine, user_id: int, key: str, since: date, until: date, account_id: str | None
) -> list[tuple[str, str, float]]:
    query = sa.text(
        f"SELECT {key} AS k, currency, SUM(amount) AS total FROM transaction_details"
        f" WHERE date >= :since AND date < :until AND {SPENDING}"
        f"{_ACCOUNT if account_id else ''} GROUP BY {key}, currency ORDER BY {key}"
    )
    params: dict[str, object] = {"since": since.isoformat(), "until": until.isoformat()}
    if account_id:
        params["account_id"] = account_id
    with engine.begin() as connection, user_scope(connection, user_id):
        rows = connection.execute(query, params).all()
    return [(str(k or "OTHER"), str(currency), float(total or 0)) for k, currency, total in rows]


def by_category(
    engine: Engine, user_id: int, since: date, until: date, account_id: str | None = None
) -> list[tuple[str, str, float]]:
    """Return (category, currency, total) of the days from `since` up to `until`."""
    return _sums(engine, user_id, "category", since, until, account_id)


def by_month(
    engine: Engine, user_id: int, since: date, until: date, account_id: str | None = None
) -> list[tuple[str, str, float]]:
    """Return (YYYY-MM, currency, total) of each month from `since` up to `until`."""
    return _sums(engine, user_id, "substr(date, 1, 7)", since, until, account_id)
