"""Where a source opens when its row or inline number is tapped.

docs/specs.md, P12: `documentTarget` (link -> browser, file_id without a link -> file, else none),
extended by rule J3 (where a source opens) for each citation target kind. A document of
the bundled library (a tax, card or mortgage corpus) opens in the app's own reader, with its
cited passage and, where it has one, its public URL: a document with no URL is never a dead
end.

The app's own pages are named by what they show (`AppPage`: an account, the portfolio, a
quote, a library document), never by a path: only the web layer (`webapp/web/links.py`)
spells their URLs, with the routes it owns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Literal, NamedTuple, TypeAlias

from webapp.citations.sources import READER_CORPORA
from webapp.citations.targets import (
    AccountsTarget,
    AccountTarget,
    CardDocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    UserFileTarget,
    WebTarget,
    is_file_id,
    names_provider,
)
from webapp.citations.urls import humanize_citation_url

from .documents import SearchDoc
from .links import browser_url, display_title

# A cited passage travels in the reader's URL: the first words find it, and a link stays
# far below a server's request-line limit (gunicorn: 4094 bytes).
MAX_CITE_CHARS = 300
# Each library target kind's corpus, as its sources name it: `silvia://<corpus>/<path>`.
_LIBRARY_PREFIXES = {kind: prefix for prefix, kind in READER_CORPORA.values()}
_EMPHASIS = re.compile(r"</?hi>", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class WebPage:
    """Open `url`, a checked absolute http(s) URL, in a new browser tab, at `cite` (the cited
    words) where there are some."""

    kind: ClassVar[Literal["web"]] = "web"
    url: str
    cite: str | None = None


@dataclass(frozen=True, slots=True)
class AccountPage:
    """The page of one of the user's accounts."""

    kind: ClassVar[Literal["account"]] = "account"
    account_id: str


class AccountChoice(NamedTuple):
    label: str
    account_id: str


@dataclass(frozen=True, slots=True)
class AccountsPage:
    """Let the user pick one of several accounts' pages (a citation of many accounts)."""

    kind: ClassVar[Literal["accounts"]] = "accounts"
    choices: tuple[AccountChoice, ...]


@dataclass(frozen=True, slots=True)
class PortfolioPage:
    """The page of the user's holdings across accounts."""

    kind: ClassVar[Literal["portfolio"]] = "portfolio"


@dataclass(frozen=True, slots=True)
class MarketPage:
    """The quote page of `ticker` (upper case, as the page reads it)."""

    kind: ClassVar[Literal["market"]] = "market"
    ticker: str


@dataclass(frozen=True, slots=True)
class FilePage:
    """The preview of one of the user's uploaded files, the cited rows (`rows`, their
    transaction ids) marked."""

    kind: ClassVar[Literal["file_preview"]] = "file_preview"
    file_id: str
    rows: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LibraryPage:
    """A bundled document in the app's own reader, `cite` (its cited words) marked.

    `url` is the document's public original, where it has one.
    """

    kind: ClassVar[Literal["library"]] = "library"
    corpus: str
    path: str
    cite: str | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class FileTarget:
    """A user file: the UI says its preview is not available yet."""

    kind: ClassVar[Literal["file"]] = "file"
    file_id: str


@dataclass(frozen=True, slots=True)
class NoTarget:
    """Nothing happens, and nothing looks clickable."""

    kind: ClassVar[Literal["none"]] = "none"


# One of the app's own pages: the web layer alone spells its URL.
AppPage: TypeAlias = AccountPage | PortfolioPage | MarketPage | LibraryPage | FilePage
SourceTarget: TypeAlias = WebPage | AppPage | AccountsPage | FileTarget | NoTarget
AccountLabeler: TypeAlias = Callable[[str], str | None]
# The path, inside `corpus`, of the document cited under `url`; None when there is none.
LibraryPathFinder: TypeAlias = Callable[[str, str], str | None]


def _safe_label(label: str | None) -> str | None:
    shown = display_title(label) if label is not None else ""
    if not shown or names_provider(shown):
        return None
    return shown


def _spellable(text: str) -> bool:
    # A lone surrogate (possible in decoded JSON) has no UTF-8 spelling: no URL can name it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _chooser(
    doc: SearchDoc, target: AccountsTarget, labeler: AccountLabeler | None
) -> AccountsPage | None:
    title = _safe_label(doc.semantic_identifier) or "Account"
    total = len(target.accounts)
    choices = []
    for number, ref in enumerate(target.accounts, start=1):
        if not _spellable(ref.account_id):
            return None
        named = _safe_label(labeler(ref.account_id)) if labeler else None
        label = named or f"{title} ({number} of {total})"
        choices.append(AccountChoice(label, ref.account_id))
    return AccountsPage(tuple(choices))


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


def _cited(doc: SearchDoc) -> str | None:
    return next((words for text in doc.match_highlights if (words := cite_words(text))), None)


# A cited row's text names its transaction (webapp/citations/citable.py writes `column: value`).
_ROW_ID = re.compile(r"^transaction_id: ([A-Za-z0-9_-]{1,64})$", re.MULTILINE | re.ASCII)
MAX_CITED_ROWS = 50


def cited_rows(doc: SearchDoc) -> tuple[str, ...]:
    """Return the transaction ids of the rows `doc`'s cited texts show, first-cited first."""
    found: dict[str, None] = {}
    for text in doc.match_highlights:
        for match in _ROW_ID.finditer(text):
            found[match.group(1)] = None
    return tuple(found)[:MAX_CITED_ROWS]


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
) -> LibraryPage | None:
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
    return LibraryPage(corpus, path, _cited(doc), url)


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
            return WebPage(found, _cited(doc)) if found else None
        case (
            TaxReferenceTarget(url=url)
            | CardDocumentTarget(url=url)
            | MortgageReferenceTarget(url=url)
        ) if url:
            found = _document_url(doc, url)
            return WebPage(found, _cited(doc)) if found else None
        case AccountTarget(account_id=account_id) if _spellable(account_id):
            return AccountPage(account_id)
        case AccountsTarget() as accounts:
            return _chooser(doc, accounts, labeler)
        case MarketDataTarget(ticker=ticker) if ticker.strip() and _spellable(ticker):
            return MarketPage(ticker.strip().upper())
        case PortfolioTarget():
            return PortfolioPage()
        case UserFileTarget(file_id=file_id) if is_file_id(file_id):
            return FilePage(file_id, cited_rows(doc))
    return None


def document_target(
    doc: SearchDoc,
    *,
    account_label: AccountLabeler | None = None,
    library_path: LibraryPathFinder | None = None,
) -> SourceTarget:
    """Return where `doc` opens: its target's place, else its link, its file, or nothing.

    `account_label` may name an account id for a chooser row (from the user's own data);
    a label that names a vendor, or is just "manual", is never used (a person's own name
    with the word "manual" in it is). A library document cited under its `silvia://` path
    opens in the reader; one cited under its URL does too when `library_path` finds it in
    its corpus (else its URL opens in the browser).
    """
    found = _from_target(doc, account_label, library_path)
    if found is not None:
        return found
    link = browser_url(doc.link)
    if link:
        return WebPage(link, _cited(doc))
    if doc.file_id:
        return FileTarget(doc.file_id)
    return NoTarget()
