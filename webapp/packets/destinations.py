"""Where a source opens when its row or inline number is tapped.

docs/specs.md, P12: `documentTarget` (link -> browser, file_id without a link -> file, else none),
extended by rule J3 (where a source opens) for each citation target kind. A document of
the bundled library (a tax, card or mortgage corpus) opens in the app's own reader, with its
cited passage and, where it has one, its public URL: a document with no URL is never a dead
end.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple, TypeAlias

from webapp.citations.account_ids import account_path, encode_uri_component
from webapp.citations.sources import READER_CORPORA
from webapp.citations.targets import (
    AccountsTarget,
    AccountTarget,
    CardDocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
)
from webapp.citations.urls import humanize_citation_url

from .documents import SearchDoc
from .links import browser_url, display_title

PORTFOLIO_PATH = "/portfolio"
MARKETS_PREFIX = "/markets/"
# A cited passage travels in the reader's URL: the first words find it, and a link stays
# far below a server's request-line limit (gunicorn: 4094 bytes).
MAX_CITE_CHARS = 300
# Each library target kind's corpus, as its sources name it: `silvia://<corpus>/<path>`.
_LIBRARY_PREFIXES = {kind: prefix for prefix, kind in READER_CORPORA.values()}
_EMPHASIS = re.compile(r"</?hi>", re.IGNORECASE)
# Vendor names stay out of user-facing text (docs/specs.md, rule T20).
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
class LibraryTarget:
    """Open a bundled document in the app's own reader, `cite` (its cited words) marked.

    `url` is the document's public original, where it has one.
    """

    kind: ClassVar[Literal["library"]] = "library"
    corpus: str
    path: str
    cite: str | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class NoTarget:
    """Nothing happens, and nothing looks clickable."""

    kind: ClassVar[Literal["none"]] = "none"


SourceTarget: TypeAlias = (
    BrowserTarget | FileTarget | PageTarget | ChooserTarget | LibraryTarget | NoTarget
)
AccountLabeler: TypeAlias = Callable[[str], str | None]
# The path, inside `corpus`, of the document cited under `url`; None when there is none.
LibraryPathFinder: TypeAlias = Callable[[str, str], str | None]


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


def cite_words(text: str) -> str | None:
    """Return a cited passage as the reader's `cite`: its words, at most MAX_CITE_CHARS."""
    words = " ".join(_EMPHASIS.sub("", text).split())
    if len(words) > MAX_CITE_CHARS:
        cut = words[: MAX_CITE_CHARS + 1]
        words = cut.rsplit(" ", 1)[0] if " " in cut else cut[:MAX_CITE_CHARS]
    return words or None


def _library_path(path: str) -> bool:
    # The reader checks every path it is given; the core hands out none that go anywhere else.
    segments = path.split("/")
    return all(
        part and not part.startswith(".") and part.isprintable() and "\\" not in part
        for part in segments
    )


_LibraryKind: TypeAlias = TaxReferenceTarget | CardDocumentTarget | MortgageReferenceTarget


def _library(
    doc: SearchDoc, target: _LibraryKind, finder: LibraryPathFinder | None
) -> LibraryTarget | None:
    prefix = _LIBRARY_PREFIXES.get(type(target))
    if prefix is None:
        return None
    corpus = prefix.removeprefix("silvia://").rstrip("/")
    url = _document_url(doc, target.url)
    path: str | None = None
    if doc.document_id.startswith(prefix):
        path = doc.document_id[len(prefix) :]
    elif finder is not None:
        for cited_as in dict.fromkeys((doc.document_id, doc.link, target.url, url)):
            path = finder(corpus, cited_as) if cited_as else None
            if path:
                break
    if not path or not _library_path(path):
        return None
    cite = next((words for text in doc.match_highlights if (words := cite_words(text))), None)
    return LibraryTarget(corpus, path, cite, url)


def _market_page(ticker: str) -> PageTarget | None:
    try:
        return PageTarget(MARKETS_PREFIX + encode_uri_component(ticker))
    except UnicodeEncodeError:
        return None  # A lone surrogate from the wire names no ticker.


def _from_target(
    doc: SearchDoc, labeler: AccountLabeler | None, finder: LibraryPathFinder | None
) -> SourceTarget | None:
    if isinstance(doc.target, _LibraryKind):
        shelved = _library(doc, doc.target, finder)
        if shelved is not None:
            return shelved
    match doc.target:
        case WebTarget(url=url):
            found = browser_url(doc.link) or browser_url(url)
            return BrowserTarget(found) if found else None
        case (
            TaxReferenceTarget(url=url)
            | CardDocumentTarget(url=url)
            | MortgageReferenceTarget(url=url)
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


def document_target(
    doc: SearchDoc,
    *,
    account_label: AccountLabeler | None = None,
    library_path: LibraryPathFinder | None = None,
) -> SourceTarget:
    """Return where `doc` opens: its target's place, else its link, its file, or nothing.

    `account_label` may name an account id for a chooser row (from the user's own data);
    a label that mentions a provider is never used. A library document cited under its
    `silvia://` path opens in the reader; one cited under its URL does too when
    `library_path` finds it in its corpus (else its URL opens in the browser).
    """
    found = _from_target(doc, account_label, library_path)
    if found is not None:
        return found
    link = browser_url(doc.link)
    if link:
        return BrowserTarget(link)
    if doc.file_id:
        return FileTarget(doc.file_id)
    return NoTarget()
