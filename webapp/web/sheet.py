"""The "Sources · N" bar and its sheet: rows of icon, title, where · updated, and a snippet.

docs/specs.md#the-sources-bar-and-sheet, drawn by the server. Every string from a tool or
the model is escaped; only `<hi>` emphasis in a highlight becomes markup (`snippet`). A
citation's preview says what its sheet row says (`preview_of`); each row opens as its
inline number does (`openers.opener_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from markupsafe import Markup

from ..citations.account_ids import match_account
from ..citations.targets import AccountsTarget, names_provider
from ..packets.destinations import AccountLabeler
from ..packets.documents import SearchDoc
from ..packets.links import display_title, domain_of
from ..packets.select import select_sources
from ..packets.state import ProcessedMessageState
from .openers import Library, Opener, opener_for
from .snippet import freshness, snippet

IconFor = Callable[[SearchDoc], str]

_SOURCE_TYPES = {
    "account": "Your account", "portfolio": "Your portfolio", "market_data": "Market data",
    "analysis": "Analysis", "web": "Web", "tax_reference": "Tax reference",
    "card_document": "Card document", "mortgage_reference": "Mortgage reference",
    "document": "Document",
}  # fmt: skip


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
