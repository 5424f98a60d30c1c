"""How a SQL row names its account, and how an account id becomes a page path.

Seed 000, "Account ids": only the id columns below are ever read from a row; `clerk_id`,
item ids and access tokens never enter a target.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import cast
from urllib.parse import quote

from ._targets import PROVIDERS, CitationAccountProvider, CitationAccountRef

_ID = re.compile(r"[A-Za-z0-9_-]{16,128}", re.ASCII)

# The columns after `source_account_id`, in the seed's order, with the provider each implies.
_NATIVE_ID_COLUMNS: tuple[tuple[str, CitationAccountProvider | None], ...] = (
    ("snaptrade_account_id", "snaptrade"),
    ("manual_account_uuid", "manual"),
    ("account_uuid", "manual"),
    ("account_id", None),  # Plaid's and SnapTrade's tables both use this name.
)
ID_COLUMNS: tuple[str, ...] = ("source_account_id", *(c for c, _ in _NATIVE_ID_COLUMNS))

# encodeURIComponent leaves exactly these unescaped, besides ASCII letters and digits.
_URI_COMPONENT_SAFE = "-_.!~*'()"


def is_account_id(value: object) -> bool:
    """Tell whether `value` is a string of 16-128 `[A-Za-z0-9_-]` that is not all digits."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None and not value.isdigit()


def account_ref_from_row(row: Mapping[str, object]) -> CitationAccountRef | None:
    """Return the account a SQL row names, trying the id columns in the seed's order."""
    provider: CitationAccountProvider | None = None
    source = row.get("source")
    if source is not None:
        if not isinstance(source, str) or source.strip().lower() not in PROVIDERS:
            return None  # A crypto wallet or any other source names no account.
        provider = cast(CitationAccountProvider, source.strip().lower())
    value = row.get("source_account_id")
    if is_account_id(value):
        return CitationAccountRef(cast(str, value), provider)
    for column, implied in _NATIVE_ID_COLUMNS:
        value = row.get(column)
        if is_account_id(value):
            return CitationAccountRef(cast(str, value), implied)
    return None


def account_id_candidates(account: Mapping[str, object]) -> tuple[str, ...]:
    """Return every id an account may be cited under: its unified id, then its native ones."""
    seen: dict[str, None] = {}
    for column in ID_COLUMNS:
        value = account.get(column)
        if is_account_id(value):
            seen[cast(str, value)] = None
    return tuple(seen)


def match_account(
    accounts: Iterable[Mapping[str, object]], account_id: str
) -> Mapping[str, object] | None:
    """Return the account cited as `account_id`, or None when none of them has that id."""
    if not is_account_id(account_id):
        return None
    for account in accounts:
        if account_id in account_id_candidates(account):
            return account
    return None


def encode_uri_component(value: str) -> str:
    """Percent-encode `value` exactly as JavaScript's `encodeURIComponent` does."""
    return quote(value, safe=_URI_COMPONENT_SAFE, encoding="utf-8", errors="strict")


def account_path(account_id: str) -> str:
    """Return the account page's path: `/accounts/` + `encodeURIComponent(account_id)`."""
    return "/accounts/" + encode_uri_component(account_id)
