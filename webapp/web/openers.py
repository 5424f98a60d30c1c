"""Where a cited source opens: a link, a chooser of accounts, the file notice, or nothing.

docs/specs.md rule J3, drawn by the server. The app's own pages (an account, the portfolio,
a quote, the library reader) are spelled by `links.page_href`, so drawing a link to one
needs a Flask app context; a web page's link is its checked URL. A library document opens
in the app's reader when a `Library` finds it; its public URL, if any, stays one click away
beside its row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..packets.destinations import (
    AccountLabeler,
    AccountPage,
    AccountsPage,
    AppPage,
    FilePage,
    FileTarget,
    LibraryPage,
    LibraryPathFinder,
    MarketPage,
    NoTarget,
    PortfolioPage,
    SourceTarget,
    WebPage,
    document_target,
)
from ..packets.documents import SearchDoc
from ..packets.links import browser_url, domain_of, with_text_fragment
from .links import page_href

FILE_NOTICE = "Preview isn't available yet"
OpenKind = Literal["browser", "page", "chooser", "file", "none"]


@dataclass(frozen=True, slots=True)
class Library:
    """Library citations open in the app's reader: `path_for` finds the document a corpus
    cites under a URL."""

    path_for: LibraryPathFinder


def _href(target: WebPage | AppPage | None) -> str | None:
    match target:
        case None:
            return None
        case WebPage(url=url, cite=cite):
            return with_text_fragment(url, cite)
    return page_href(target)


@dataclass(frozen=True, slots=True)
class ChooserLink:
    """One account a chooser offers: its label and its page."""

    label: str
    page: AccountPage

    @property
    def href(self) -> str:
        """Return the account page's URL (spelled as it is drawn, in a request)."""
        return page_href(self.page)


@dataclass(frozen=True, slots=True)
class Opener:
    """How a source opens: a link, a chooser popover, the file notice, or nothing.

    A link's `target` is spelled only as it is drawn (`href`): a citation drawn without a
    link (pending, or a chooser's button) needs no app to spell one. `original` is a library
    document's public URL, offered beside the reader's link.
    """

    kind: OpenKind
    target: WebPage | AppPage | None = None
    options: tuple[ChooserLink, ...] = ()
    dom_id: str = ""
    original: str | None = None

    @property
    def href(self) -> str | None:
        """Return the URL a link opens: a web page's own, an app page's from `page_href`."""
        return _href(self.target)

    @property
    def original_host(self) -> str | None:
        """Return the host of `original`, as a row names it."""
        return domain_of(self.original)


def opener_for(
    doc: SearchDoc | None,
    labeler: AccountLabeler | None,
    dom_id: str,
    library: Library | None = None,
) -> Opener:
    """Return how `doc` opens, from `document_target`.

    A library document opens in the reader when `library` is given; without one, at its URL.
    """
    if doc is None:
        return Opener("none")
    finder = library.path_for if library is not None else None
    target = document_target(doc, account_label=labeler, library_path=finder)
    if isinstance(target, LibraryPage) and library is None:
        opens = WebPage(target.url, target.cite) if target.url else NoTarget()
        return target_opener(opens, dom_id)
    return target_opener(target, dom_id)


def target_opener(target: SourceTarget, dom_id: str) -> Opener:
    """Return how `target` opens: the app's pages at `page_href`, a web page at its URL while
    that is an http(s) link (never `javascript:` or `data:`), a chooser, the file notice."""
    match target:
        case LibraryPage(url=url):
            return Opener("page", target, original=browser_url(url))
        case AccountPage() | MarketPage() | PortfolioPage() | FilePage():
            return Opener("page", target)
        case WebPage(url=url, cite=cite):
            link = browser_url(url)
            return Opener("browser", WebPage(link, cite)) if link else Opener("none")
        case AccountsPage(choices=choices):
            links = tuple(ChooserLink(c.label, AccountPage(c.account_id)) for c in choices)
            return Opener("chooser", options=links, dom_id=dom_id)
        case FileTarget():
            return Opener("file")
    return Opener("none")


_OPENS: dict[type, str] = {
    LibraryPage: "Opens it in the library",
    AccountPage: "Opens the account",
    MarketPage: "Opens the quote",
    PortfolioPage: "Opens your portfolio",
}


def opens_words(opener: Opener, *, pending: bool = False) -> str:
    """Return what opening a source does, in plain words (the citation preview's last line)."""
    if pending:
        return "Opens once the answer is finished"
    match opener.kind:
        case "browser":
            return f"Opens {domain_of(opener.href) or 'the page'} in a new tab"
        case "page":
            return _OPENS.get(type(opener.target), "Opens its page")
        case "chooser":
            return f"Choose one of {len(opener.options)} accounts to open"
        case "file":
            return FILE_NOTICE
    return "Nothing to open: the figure comes from this text"
