"""The tolerant reader every client path uses for a target (docs/specs.md, rule T16)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from .account_ids import is_account_id
from .targets import (
    PROVIDERS,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationAccountProvider,
    CitationAccountRef,
    CitationTarget,
    DocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    UserFileTarget,
    WebTarget,
    is_file_id,
)

_DOCUMENT_KINDS: dict[str, type[DocumentTarget]] = {
    "tax_reference": TaxReferenceTarget,
    "card_document": CardDocumentTarget,
    "mortgage_reference": MortgageReferenceTarget,
}


def _nonempty(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _parse_ref(value: object) -> CitationAccountRef | None:
    if not isinstance(value, Mapping):
        return None
    account_id = value.get("accountId")
    if not is_account_id(account_id):
        return None
    provider = value.get("provider")
    # An unknown provider is dropped, not the account: the id alone still opens its page.
    # The type check comes first: a list or dict provider is unhashable, so `in` would raise.
    known = (
        cast(CitationAccountProvider, provider)
        if isinstance(provider, str) and provider in PROVIDERS
        else None
    )
    return CitationAccountRef(cast(str, account_id), known)


def parse_citation_target(value: object) -> CitationTarget | None:
    """Read a target from any JSON value; None for an unknown kind or a malformed value."""
    if not isinstance(value, Mapping):
        return None
    kind = value.get("kind")
    if kind == "web":
        url = _nonempty(value.get("url"))
        return WebTarget(url) if url else None
    if isinstance(kind, str) and kind in _DOCUMENT_KINDS:
        url = value.get("url")
        if url is not None and _nonempty(url) is None:
            return None
        return _DOCUMENT_KINDS[kind](cast("str | None", url))
    if kind == "market_data":
        ticker = _nonempty(value.get("ticker"))
        return MarketDataTarget(ticker) if ticker else None
    if kind == "analysis":
        return AnalysisTarget()
    if kind == "portfolio":
        return PortfolioTarget()
    if kind == "file":
        file_id = value.get("fileId")
        return UserFileTarget(cast(str, file_id)) if is_file_id(file_id) else None
    if kind == "account":
        ref = _parse_ref(value)
        return AccountTarget(ref.account_id, ref.provider) if ref else None
    if kind == "accounts":
        items = value.get("accounts")
        if not isinstance(items, list) or not items:
            return None
        refs = [_parse_ref(item) for item in items]
        # A partial list would claim to cover fewer accounts than the citation does.
        if any(ref is None for ref in refs):
            return None
        return AccountsTarget(tuple(cast(list[CitationAccountRef], refs)))
    return None


def target_from_json(value: object) -> CitationTarget:
    """Read a target strictly: the inverse of `target_to_json`; ValueError for anything else."""
    target = parse_citation_target(value)
    if target is None:
        raise ValueError("not a citation target")
    return target
