"""The typed target of a chat citation, and its exact wire JSON (docs/specs.md, rule T1)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeAlias

CitationAccountProvider: TypeAlias = Literal["plaid", "manual", "snaptrade"]
PROVIDERS: frozenset[str] = frozenset({"plaid", "manual", "snaptrade"})
# The providers that are vendors: their names stay out of what a person reads, wherever they
# stand. "manual" is no vendor, and an ordinary word in a person's own account names.
_VENDOR_NAME = re.compile("plaid|snaptrade|snap trade", re.IGNORECASE)
_NOT_A_LETTER = re.compile(r"[\W_]+")


def names_provider(text: str) -> bool:
    """Tell whether `text` names a provider: such text is for routing, never shown
    (docs/specs.md, rule T20).

    A vendor's name ("Plaid", "SnapTrade") counts anywhere in it; "manual" only as the whole
    label, spacing and punctuation aside, so that "My manual savings", a person's own name
    for their account, is theirs to read.
    """
    if _VENDOR_NAME.search(text) is not None:
        return True
    return _NOT_A_LETTER.sub("", text).lower() in PROVIDERS


# A user file's public id (docs/architecture.md, "Transactions and statement files"): as an
# account id, 16-128 characters of `[A-Za-z0-9_-]`, so it travels as one path segment unescaped.
_FILE_ID = re.compile(r"[A-Za-z0-9_-]{16,128}", re.ASCII)


def is_file_id(value: object) -> bool:
    """Tell whether `value` is shaped like a user file's id."""
    return isinstance(value, str) and _FILE_ID.fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class CitationAccountRef:
    """One of the user's accounts: its id and, for routing only, the provider behind it."""

    account_id: str
    provider: CitationAccountProvider | None = None


@dataclass(frozen=True, slots=True)
class WebTarget:
    kind: ClassVar[Literal["web"]] = "web"
    url: str


@dataclass(frozen=True, slots=True)
class TaxReferenceTarget:
    kind: ClassVar[Literal["tax_reference"]] = "tax_reference"
    url: str | None = None


@dataclass(frozen=True, slots=True)
class CardDocumentTarget:
    kind: ClassVar[Literal["card_document"]] = "card_document"
    url: str | None = None


@dataclass(frozen=True, slots=True)
class MortgageReferenceTarget:
    kind: ClassVar[Literal["mortgage_reference"]] = "mortgage_reference"
    url: str | None = None


@dataclass(frozen=True, slots=True)
class MarketDataTarget:
    kind: ClassVar[Literal["market_data"]] = "market_data"
    ticker: str


@dataclass(frozen=True, slots=True)
class AnalysisTarget:
    kind: ClassVar[Literal["analysis"]] = "analysis"


@dataclass(frozen=True, slots=True)
class AccountTarget:
    kind: ClassVar[Literal["account"]] = "account"
    account_id: str
    provider: CitationAccountProvider | None = None

    @property
    def ref(self) -> CitationAccountRef:
        return CitationAccountRef(self.account_id, self.provider)


@dataclass(frozen=True, slots=True)
class AccountsTarget:
    kind: ClassVar[Literal["accounts"]] = "accounts"
    accounts: tuple[CitationAccountRef, ...]


@dataclass(frozen=True, slots=True)
class PortfolioTarget:
    kind: ClassVar[Literal["portfolio"]] = "portfolio"


@dataclass(frozen=True, slots=True)
class UserFileTarget:
    """One of the user's uploaded files (its rows name no account)."""

    kind: ClassVar[Literal["file"]] = "file"
    file_id: str


DocumentTarget: TypeAlias = TaxReferenceTarget | CardDocumentTarget | MortgageReferenceTarget

CitationTarget: TypeAlias = (
    WebTarget
    | TaxReferenceTarget
    | CardDocumentTarget
    | MortgageReferenceTarget
    | MarketDataTarget
    | AnalysisTarget
    | AccountTarget
    | AccountsTarget
    | PortfolioTarget
    | UserFileTarget
)


def _ref_json(ref: CitationAccountRef) -> dict[str, Any]:
    return {"accountId": ref.account_id, "provider": ref.provider}


def target_to_json(target: CitationTarget) -> dict[str, Any]:
    """Return the seed's JSON for `target`: camelCase `accountId`, `provider` null when unknown."""
    match target:
        case WebTarget(url=url):
            return {"kind": "web", "url": url}
        case TaxReferenceTarget() | CardDocumentTarget() | MortgageReferenceTarget():
            return {"kind": target.kind, "url": target.url}
        case MarketDataTarget(ticker=ticker):
            return {"kind": "market_data", "ticker": ticker}
        case AccountTarget():
            return {"kind": "account", **_ref_json(target.ref)}
        case AccountsTarget(accounts=accounts):
            return {"kind": "accounts", "accounts": [_ref_json(ref) for ref in accounts]}
        case AnalysisTarget() | PortfolioTarget():
            return {"kind": target.kind}
        case UserFileTarget(file_id=file_id):
            return {"kind": "file", "fileId": file_id}
    raise TypeError(f"not a citation target: {type(target).__name__}")


def account_refs(target: CitationTarget | None) -> tuple[CitationAccountRef, ...]:
    """Return the accounts a target covers: one for `account`, the list for `accounts`."""
    if isinstance(target, AccountTarget):
        return (target.ref,)
    if isinstance(target, AccountsTarget):
        return target.accounts
    return ()


def target_for_accounts(refs: tuple[CitationAccountRef, ...]) -> AccountTarget | AccountsTarget:
    """Return `account` for one account and `accounts` for several (deduplicated, in order)."""
    merged: dict[str, CitationAccountRef] = {}
    for ref in refs:
        known = merged.get(ref.account_id)
        # The same id seen once with and once without its provider is one account.
        if known is None or (known.provider is None and ref.provider is not None):
            merged[ref.account_id] = ref
    unique = tuple(merged.values())
    if not unique:
        raise ValueError("an account target needs at least one account")
    if len(unique) == 1:
        return AccountTarget(unique[0].account_id, unique[0].provider)
    return AccountsTarget(unique)
