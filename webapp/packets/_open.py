"""Where a source opens when its row or inline number is tapped.

Seed 001 `documentTarget` (link -> browser, file_id without a link -> file, else none),
extended by DESIGN.md "Where a source opens" for each citation target kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple, TypeAlias

from webapp.citations import (
    AccountsTarget,
    AccountTarget,
    CardDocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
    account_path,
    encode_uri_component,
    humanize_citation_url,
)

from ._documents import SearchDoc
from ._links import browser_url, display_title

PORTFOLIO_PATH = "/portfolio"
MARKETS_PREFIX = "/markets/"
# Vendor names stay out of user-facing text (seed 000, "Privacy").
_PROVIDER_WORD = re.compile(r"plaid|snaptrade|manual", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class BrowserTarget:
    """Open `url` in a new browser tab."""

    kind: ClassVar[Literal["browser"]] = "browser"
    url: str


@dataclass(frozen=True, slots=True)
class FileTarget:
    """A user file: the UI says its preview is not available yet."""

    kind: ClassVar[Literal["file"]] = "file"
    file_id: str


@dataclass(frozen=True, slots=True)
class PageTarget:
    """Open one of the app's own pages."""

    kind: ClassVar[Literal["page"]] = "page"
    path: str


class ChooserOption(NamedTuple):
    label: str
    path: str


@dataclass(frozen=True, slots=True)
class ChooserTarget:
    """Let the user pick one of several of the app's pages (a citation of many accounts)."""

    kind: ClassVar[Literal["chooser"]] = "chooser"
    options: tuple[ChooserOption, ...]


@dataclass(frozen=True, slots=True)
class NoTarget:
    """Nothing happens, and nothing looks clickable."""

    kind: ClassVar[Literal["none"]] = "none"


SourceTarget: TypeAlias = BrowserTarget | FileTarget | PageTarget | ChooserTarget | NoTarget
AccountLabeler: TypeAlias = Callable[[str], str | None]


def _safe_label(label: str | None) -> str | None:
    shown = display_title(label) if label is not None else ""
    if not shown or _PROVIDER_WORD.search(shown):
        return None
    return shown


def _chooser(
    doc: SearchDoc, target: AccountsTarget, labeler: AccountLabeler | None
) -> ChooserTarget:
    title = _safe_label(doc.semantic_identifier) or "Account"
    total = len(target.accounts)
    options = []
    for number, ref in enumerate(target.accounts, start=1):
        named = _safe_label(labeler(ref.account_id)) if labeler else None
        label = named or f"{title} ({number} of {total})"
        options.append(ChooserOption(label, account_path(ref.account_id)))
    return ChooserTarget(tuple(options))


def _document_url(doc: SearchDoc, url: str | None) -> str | None:
    # The doc's link is the readable page the server chose; the target's own URL may be a
    # machine download, so it is humanized before use.
    return browser_url(doc.link) or (browser_url(humanize_citation_url(url)) if url else None)


def _market_page(ticker: str) -> PageTarget | None:
    try:
        return PageTarget(MARKETS_PREFIX + encode_uri_component(ticker))
    except UnicodeEncodeError:
        return None  # A lone surrogate from the wire names no ticker.


def _from_target(doc: SearchDoc, labeler: AccountLabeler | None) -> SourceTarget | None:
    match doc.target:
        case WebTarget(url=url):
            found = browser_url(doc.link) or browser_url(url)
            return BrowserTarget(found) if found else None
        case TaxReferenceTarget(url=url) | CardDocumentTarget(url=url) | MortgageReferenceTarget(
            url=url
        ) if url:
            found = _document_url(doc, url)
            return BrowserTarget(found) if found else None
        case AccountTarget(account_id=account_id):
            return PageTarget(account_path(account_id))
        case AccountsTarget() as accounts:
            return _chooser(doc, accounts, labeler)
        case MarketDataTarget(ticker=ticker) if ticker.strip():
            return _market_page(ticker.strip().upper())
        case PortfolioTarget():
            return PageTarget(PORTFOLIO_PATH)
    return None


def document_target(doc: SearchDoc, *, account_label: AccountLabeler | None = None) -> SourceTarget:
    """Return where `doc` opens: its target's place, else its link, its file, or nothing.

    `account_label` may name an account id for a chooser row (from the user's own data);
    a label that mentions a provider is never used.
    """
    found = _from_target(doc, account_label)
    if found is not None:
        return found
    link = browser_url(doc.link)
    if link:
        return BrowserTarget(link)
    if doc.file_id:
        return FileTarget(doc.file_id)
    return NoTarget()
