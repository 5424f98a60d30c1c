"""How a SQL row names its account, and how an account id becomes a page path.

docs/specs.md, rule T18: only the id columns below are ever read from a row; `clerk_id`,
item ids and access tokens never enter a target.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, TypeAlias, cast
from urllib.parse import quote

from .targets import PROVIDERS, CitationAccountProvider, CitationAccountRef

_ID = re.compile(r"[A-Za-z0-9_-]{16,128}", re.ASCII)

# A row's `source` cell read as a provider: `""` when the row names no account at all.
SourceProvider: TypeAlias = CitationAccountProvider | Literal[""]
# An account as a row names it: `CitationAccountRef`'s fields, without making the object.
AccountPair: TypeAlias = tuple[str, CitationAccountProvider | None]

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


def _source_provider(source: object) -> SourceProvider:
    """Return the provider a row's `source` cell names, or `""` when it names no account."""
    if not isinstance(source, str):
        return ""
    provider = source.strip().lower()
    return cast(CitationAccountProvider, provider) if provider in PROVIDERS else ""


def _read_account(
    row: Mapping[str, object],
    is_id: Callable[[object], bool],
    provider_of: Callable[[object], SourceProvider],
) -> AccountPair | None:
    # The seed's column order; `AccountReader` passes cached checks, and reads its first
    # column inline.
    provider: CitationAccountProvider | None = None
    source = row.get("source")
    if source is not None:
        named = provider_of(source)
        if not named:
            return None  # A crypto wallet or any other source names no account.
        provider = named
    value = row.get("source_account_id")
    if is_id(value):
        return cast(str, value), provider
    for column, implied in _NATIVE_ID_COLUMNS:
        value = row.get(column)
        if is_id(value):
            return cast(str, value), implied
    return None


def account_ref_from_row(row: Mapping[str, object]) -> CitationAccountRef | None:
    """Return the account a SQL row names, trying the id columns in the seed's order."""
    pair = _read_account(row, is_account_id, _source_provider)
    return None if pair is None else CitationAccountRef(*pair)


class AccountReader:
    """Read the accounts of many SQL rows, checking each distinct id and source only once.

    `read(row)` is `account_ref_from_row(row)` as a plain `(account_id, provider)` pair: the
    rows of one result repeat a handful of ids, so the caches live as long as the reader.
    """

    __slots__ = ("_ids", "_providers")

    def __init__(self) -> None:
        self._ids: dict[str, bool] = {}
        self._providers: dict[str, SourceProvider] = {}

    def is_id(self, value: object) -> bool:
        """Tell whether `value` is an account id, as `is_account_id` does."""
        if value.__class__ is not str:
            return is_account_id(value)  # Never cached: not every value can be a dict key.
        known = self._ids.get(value)
        if known is None:
            known = self._ids[value] = is_account_id(value)
        return known

    def provider(self, source: object) -> SourceProvider:
        """Return the provider a `source` cell names, or `""` when it names no account."""
        if source.__class__ is not str:
            return _source_provider(source)
        known = self._providers.get(source)
        if known is None:
            known = self._providers[source] = _source_provider(source)
        return known

    def read(self, row: Mapping[str, object]) -> AccountPair | None:
        """Return the `(account_id, provider)` a SQL row names, or None when it names none."""
        said = row.get("source_account_id")
        if type(said) is str:
            # Inline, most rows: a unified id, beside a `source` cell or none.
            known = self._ids.get(said)
            if known is None:
                known = self._ids[said] = is_account_id(said)
            source = row.get("source")
            if known and source is None:
                return said, None
            provider = self._providers.get(source) if type(source) is str else None
            if known and provider is not None:
                return (said, provider) if provider else None
        return _read_account(row, self.is_id, self.provider)


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
