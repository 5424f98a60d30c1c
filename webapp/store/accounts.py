"""The signed-in user's accounts and holdings, read through the same views the model queries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from webapp.citations.account_ids import match_account

from .engine import user_scope
from .values import JsonValue, json_safe

# The native id column each source's account id also goes by (docs/specs.md, rule T9).
NATIVE_ID_COLUMN: dict[str, str] = {
    "plaid": "account_id",
    "snaptrade": "snaptrade_account_id",
    "manual": "manual_account_uuid",
}

_SOURCE_ORDER = (
    "CASE source WHEN 'plaid' THEN 0 WHEN 'snaptrade' THEN 1 WHEN 'manual' THEN 2 ELSE 3 END"
)
_ACCOUNTS = sa.text(
    f"SELECT * FROM account_details ORDER BY {_SOURCE_ORDER},"
    " COALESCE(institution_name, ''), account_name, COALESCE(source_account_id, '')"
)
_HOLDINGS = sa.text(
    f"SELECT * FROM holding_details ORDER BY {_SOURCE_ORDER},"
    " COALESCE(institution_name, ''), account_name, COALESCE(source_account_id, ''), ticker"
)


def _rows(engine: Engine, user_id: int, query: sa.TextClause) -> list[dict[str, JsonValue]]:
    with engine.begin() as connection, user_scope(connection, user_id):
        rows = [dict(row) for row in connection.execute(query).mappings()]
    return [_with_native_id(row) for row in rows]


def _with_native_id(row: Mapping[str, Any]) -> dict[str, JsonValue]:
    plain = {key: json_safe(value) for key, value in row.items()}
    column = NATIVE_ID_COLUMN.get(str(plain.get("source")))
    if column is not None:
        plain[column] = plain.get("source_account_id")
    return plain


def list_accounts(engine: Engine, user_id: int) -> list[dict[str, JsonValue]]:
    """Return the user's accounts: `account_details` columns plus each native id column."""
    return _rows(engine, user_id, _ACCOUNTS)


def list_holdings(engine: Engine, user_id: int) -> list[dict[str, JsonValue]]:
    """Return the user's holdings: `holding_details` columns plus each native id column."""
    return _rows(engine, user_id, _HOLDINGS)


def find_account(engine: Engine, user_id: int, account_id: str) -> dict[str, JsonValue] | None:
    """Return the user's account cited as `account_id` (any of its ids), or None."""
    accounts = list_accounts(engine, user_id)
    found = match_account(accounts, account_id)
    # match_account hands back one of `accounts` itself; find it again to keep its type.
    return next((account for account in accounts if account is found), None)
