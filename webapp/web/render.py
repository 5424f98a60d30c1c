"""Packets to what the templates draw: the answer body, inline citations and the sources sheet.

docs/specs.md#the-sources-bar-and-sheet and rule J3 (where a source opens), rendered by the
server. Every string from a tool or the model is escaped; only `<hi>` emphasis in a
highlight becomes markup, and citation links are built here with `Markup.format`. The app's
own pages (an account, the portfolio, a quote, the library reader) are spelled by
`links.page_href`, so drawing a link to one needs a Flask app context; a web page's link is
its checked URL. A library document opens in the app's reader when a `Library` finds it;
its public URL, if any, stays one click away beside its row.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from markupsafe import Markup

from ..citations.account_ids import match_account
from ..citations.targets import AccountsTarget, AccountTarget, UserFileTarget, names_provider
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
from ..packets.links import browser_url, display_title, domain_of, with_text_fragment
from ..packets.markers import CitationSegment, answer_segments
from ..packets.models import USER_CANCELLED
from ..packets.select import select_sources
from ..packets.state import ProcessedMessageState
from .links import page_href
from .markdown import placeholder, render_markdown, strip_placeholders
from .snippet import freshness, snippet

FILE_NOTICE = "Preview isn't available yet"
IconFor = Callable[[SearchDoc], str]
OpenKind = Literal["browser", "page", "chooser", "file", "none"]

_CR = re.compile(r"\r\n?")
_MARKER = re.compile(r"\[\[(\d{1,9})\]\]")
MAX_MARKER_NUMBER = 10**9 - 1  # a marker's number has at most nine digits
_SOURCE_TYPES = {
    "account": "Your account", "portfolio": "Your portfolio", "market_data": "Market data",
    "analysis": "Analysis", "web": "Web", "tax_reference": "Tax reference",
    "card_document": "Card document", "mortgage_reference": "Mortgage reference",
    "document": "Document",
}  # fmt: skip


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


@dataclass(frozen=True, slots=True)
class SourceRow:
    title: str
    meta: str
    snippet: Markup
    icon: str
    opener: Opener


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    rows: tuple[SourceRow, ...]


@dataclass(frozen=True, slots=True)
class SourcesView:
    """The "Sources · N" bar and its sheet; drawn only when `visible`."""

    message_id: str
    visible: bool
    count: int = 0
    icons: tuple[str, ...] = ()
    sections: tuple[Section, ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerText:
    """Answer markdown with a placeholder per inline citation, and each citation's HTML."""

    markdown: str
    citations: tuple[Markup, ...] = ()
    # How each citation number known so far is drawn now. A block sent while the answer
    # streams is never sent again, so the stream checks that its numbers still look the same.
    numbers: Mapping[int, Markup] = field(default_factory=dict)

    def html(self, start: int = 0, end: int | None = None) -> Markup:
        """Render `markdown[start:end]`, cut at line starts, with its citations."""
        return render_markdown(self.markdown[start:end], self.citations)


@dataclass(frozen=True, slots=True)
class AnswerView:
    message_id: str
    text: AnswerText
    choosers: tuple[Opener, ...]
    streaming: bool
    error: str | None = None
    stopped: bool = False
    # The stream broke off before the answer was finished: what came is shown, and a reload
    # picks the answer up again.
    interrupted: bool = False
    # While streaming: where the open blocks (the last ones, still growing) start in
    # `text.markdown`. The settled blocks before it are drawn once; the stream redraws the rest.
    open_at: int = 0
    # While nothing is written yet: the step being worked on, in plain words (web/status.py).
    status: str = "Thinking…"

    @property
    def body(self) -> Markup:
        """Return the whole answer's HTML."""
        return self.text.html()

    @property
    def settled_html(self) -> Markup:
        """Return the settled blocks' HTML (nothing unless streaming)."""
        return self.text.html(0, self.open_at) if self.streaming and self.open_at else Markup()

    @property
    def open_html(self) -> Markup:
        """Return the open blocks' HTML (nothing unless streaming)."""
        return self.text.html(self.open_at) if self.streaming else Markup()

    @property
    def waiting(self) -> bool:
        """Tell whether nothing has been written yet while the answer is still coming."""
        return self.streaming and not self.text.markdown.strip() and self.error is None


def account_labeler(accounts: Iterable[Mapping[str, object]]) -> AccountLabeler:
    """Name a cited account id by the user's own account: "Credit card · Citi"."""
    rows = list(accounts)

    def label(account_id: str) -> str | None:
        found = match_account(rows, account_id)
        if found is None:
            return None
        name, where = found.get("account_name"), found.get("institution_name")
        if not isinstance(name, str) or not name.strip():
            return None
        return f"{name} · {where}" if isinstance(where, str) and where.strip() else name

    return label


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


def _where(doc: SearchDoc) -> str:
    domain = domain_of(doc.link)
    if domain:
        return domain
    if doc.file_id:
        return "File"
    if isinstance(doc.target, AccountsTarget):  # one title pooling several accounts
        return f"{len(doc.target.accounts)} accounts"
    kind = doc.source_type.strip()
    label = _SOURCE_TYPES.get(kind) or kind.replace("_", " ").capitalize()
    return "Source" if not label or names_provider(label) else label


def title_of(doc: SearchDoc) -> str:
    """Return the row's title: the document's name (bidi controls taken out), else its domain."""
    return display_title(doc.semantic_identifier) or domain_of(doc.link) or "Untitled source"


def _meta(doc: SearchDoc) -> str:
    return " · ".join(part for part in (_where(doc), freshness(doc.updated_at, doc.blurb)) if part)


def _cited_text(doc: SearchDoc) -> str:
    return next((h for h in doc.match_highlights if h.strip()), doc.blurb)


def source_row(
    doc: SearchDoc,
    labeler: AccountLabeler | None,
    icon_for: IconFor,
    dom_id: str,
    library: Library | None = None,
) -> SourceRow:
    """Return one row of the sheet: icon, title, where · updated, and a snippet."""
    return SourceRow(
        title_of(doc),
        _meta(doc),
        snippet(_cited_text(doc)),
        icon_for(doc),
        opener_for(doc, labeler, dom_id, library),
    )


def sources_view(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    icon_for: IconFor,
    library: Library | None = None,
) -> SourcesView:
    """Return the bar and sheet: shown only when the message is complete and has sources."""
    selected = select_sources(state)
    if not (state.is_complete and selected.has_sources and selected.count):
        return SourcesView(message_id, visible=False)
    sections, index = [], 0
    for heading, docs in (
        ("Cited Sources", selected.cited),
        ("More", selected.more),
        ("User Files", selected.files),
    ):
        rows = []
        for doc in docs:
            rows.append(source_row(doc, labeler, icon_for, f"src-{message_id}-{index}", library))
            index += 1
        if rows:
            sections.append(Section(heading, tuple(rows)))
    icons = tuple(icon_for(doc) for doc in selected.icon_docs)
    return SourcesView(message_id, True, selected.count, icons, tuple(sections))


_CITE = {
    "browser": Markup(
        '<a class="cite" href="{href}" target="_blank" rel="noopener noreferrer"'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</a>'
    ),
    "page": Markup(
        '<a class="cite" href="{href}" aria-label="Source {n}: {title}"'
        ' aria-describedby="{tip}">{n}</a>'
    ),
    "chooser": Markup(
        '<button type="button" class="cite" popovertarget="{dom_id}"'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
    "file": Markup(
        '<button type="button" class="cite" data-notice="{notice}"'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
    # Opens nothing, but still says where its figure comes from: a button that shows the preview.
    "none": Markup(
        '<button type="button" class="cite cite-static" data-preview'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
    # Drawn, but opening nothing until the answer is done (see `_settles_late`).
    "pending": Markup(
        '<button type="button" class="cite cite-pending" data-preview'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
}
_TIP = Markup(
    '<span class="cite-wrap">{cite}<span class="cite-tip" role="tooltip" id="{tip}">'
    '<span class="cite-tip-title">{title}</span>{where}{text}'
    '<span class="cite-tip-opens">{opens}</span></span></span>'
)
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


@dataclass(frozen=True, slots=True)
class Preview:
    """What a citation's preview says: where its source is from and the cited text."""

    where: str = ""
    text: Markup = field(default_factory=Markup)


def preview_of(doc: SearchDoc | None) -> Preview:
    """Return the preview of `doc`: the sheet row's meta line and snippet."""
    if doc is None:
        return Preview()
    return Preview(_meta(doc), snippet(_cited_text(doc)))


def citation_html(
    number: int,
    title: str,
    opener: Opener,
    *,
    pending: bool = False,
    tip: str = "",
    preview: Preview | None = None,
) -> Markup:
    """Return an inline citation: a link or button showing its number, opening its source,
    with its preview (`role="tooltip"`, shown on hover, focus and a tap).

    A `pending` citation (its source not settled while the answer streams) is drawn but does
    not open; one that opens nothing anyway is drawn as such. `tip` is the preview's id.
    """
    kind = "pending" if pending and opener.kind != "none" else opener.kind
    href = opener.href if kind in ("browser", "page") else None
    tip = tip or f"tip-{number}"
    cite = _CITE[kind].format(
        href=href or "", title=title, n=number, dom_id=opener.dom_id, notice=FILE_NOTICE, tip=tip
    )
    seen = preview or Preview()
    return _TIP.format(
        cite=cite,
        tip=tip,
        title=title,
        where=Markup('<span class="cite-tip-where">{}</span>').format(seen.where)
        if seen.where
        else "",
        text=Markup('<span class="cite-tip-text">{}</span>').format(seen.text) if seen.text else "",
        opens=opens_words(opener, pending=kind == "pending"),
    )


def _settles_late(doc: SearchDoc | None) -> bool:
    """Tell whether where `doc` opens may change before its turn ends.

    docs/specs.md, rule J5: a later tool round can add accounts under an
    account label (pooled: one account's page becomes a chooser) or leave it untyped
    (poisoned: nothing). Every other source opens the same place whatever a later round
    writes: a URL its page, a ticker its quote, the portfolio its page. So an account
    citation opens only once the answer is done, drawn with the turn's settled target; and
    a chooser's popover would close on the next re-render anyway.
    """
    return doc is not None and isinstance(
        doc.target, AccountTarget | AccountsTarget | UserFileTarget
    )


def _drawn(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    pending: bool,
    library: Library | None = None,
    before: Mapping[int, int] | None = None,
) -> tuple[str, tuple[Markup, ...], tuple[Opener, ...]]:
    """Return the state's text as markdown with placeholders, its citations, and choosers.

    `before` counts each number's citations in the text before this part: a preview's id
    names its number and which of that number's citations it is, so each is drawn alike
    whenever it is drawn, and none twice on a page.
    """
    parts: list[str] = []
    cites: list[Markup] = []
    choosers: dict[str, Opener] = {}
    seen: Counter[int] = Counter(before or {})
    for segment in answer_segments(state):
        if not isinstance(segment, CitationSegment):
            parts.append(strip_placeholders(segment.text))
            continue
        opener = opener_for(segment.doc, labeler, f"cite-{message_id}-{segment.number}", library)
        if opener.kind == "chooser" and not pending:
            choosers.setdefault(opener.dom_id, opener)
        title = title_of(segment.doc) if segment.doc else f"Source {segment.number}"
        parts.append(placeholder(len(cites)))
        tip = f"tip-{message_id}-{segment.number}-{seen[segment.number]}"
        seen[segment.number] += 1
        cites.append(
            citation_html(
                segment.number,
                title,
                opener,
                pending=pending and _settles_late(segment.doc),
                tip=tip,
                preview=preview_of(segment.doc),
            )
        )
    # One kind of line break, as markdown-it reads them: the stream counts lines.
    return _CR.sub("\n", "".join(parts)), tuple(cites), tuple(choosers.values())


def _numbers(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    pending: bool,
    library: Library | None = None,
) -> dict[int, Markup]:
    # Each known number drawn as a marker alone would be: the same code as in the text.
    numbers = sorted(n for n in state.citation_map if 0 <= n <= MAX_MARKER_NUMBER)
    probe = replace(state, deltas=[" ".join(f"[[{n}]]()" for n in numbers)], is_complete=True)
    _, chips, _ = _drawn(probe, message_id, labeler, pending, library)
    return dict(zip(numbers, chips, strict=True))


def answer_text(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    *,
    streaming: bool,
    start: int = 0,
    library: Library | None = None,
) -> tuple[AnswerText, tuple[Opener, ...]]:
    """Return the answer's text from `start` with its citations, and the choosers they open.

    `start` is 0, or where `settled_lines` ended the settled blocks of the text: the text is
    read from there alone, with the whole answer's citations and documents.
    """
    read = replace(state, deltas=[state.text[start:]]) if start else state
    before = Counter(int(n) for n in _MARKER.findall(state.text[:start])) if start else None
    markdown, cites, choosers = _drawn(read, message_id, labeler, streaming, library, before)
    numbers = _numbers(state, message_id, labeler, streaming, library)
    return AnswerText(markdown, cites, numbers), choosers


def answer_view(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    *,
    streaming: bool,
    error: str | None = None,
    interrupted: bool = False,
    start: int = 0,
    library: Library | None = None,
) -> AnswerView:
    """Return the answer (from `start`, see `answer_text`) with its inline citations.

    While `streaming`, account citations (one account's page, or a chooser) wait: a later
    tool round may still change where they open (`_settles_late`), and no popover could stay
    open through the stream's next redraw; an `interrupted` answer is never streaming.
    """
    streaming = streaming and not interrupted
    text, choosers = answer_text(
        state, message_id, labeler, streaming=streaming, start=start, library=library
    )
    stopped = state.stop_reason == USER_CANCELLED
    return AnswerView(message_id, text, choosers, streaming, error, stopped, interrupted)
