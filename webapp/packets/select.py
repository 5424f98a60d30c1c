"""Split a message's documents into the sheet's sections (docs/specs.md, rule P9)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .documents import SearchDoc
from .links import domain_of
from .state import ProcessedMessageState

MAX_ICONS = 3


@dataclass(frozen=True, slots=True)
class SelectedSources:
    """The sheet's sections, the bar's icons, and whether there is anything to show."""

    cited: tuple[SearchDoc, ...]
    more: tuple[SearchDoc, ...]
    files: tuple[SearchDoc, ...]
    icon_docs: tuple[SearchDoc, ...]
    has_sources: bool

    @property
    def count(self) -> int:
        """Return the number of rows the sheet lists: the bar's N."""
        return len(self.cited) + len(self.more) + len(self.files)


# The kinds of source that have an icon of their own (static/icons/<kind>.svg).
_KIND_ICONS = {
    "account": "account",
    "accounts": "accounts",
    "portfolio": "portfolio",
    "market_data": "market",
    "tax_reference": "tax",
    "card_document": "card",
    "mortgage_reference": "mortgage",
}


def icon_key(doc: SearchDoc) -> str:
    """Return what a source's icon shows: its kind, a web page's host, a file, or generic."""
    if doc.file_id:
        return "file"
    kind = doc.target.kind if doc.target is not None else doc.source_type.strip()
    if kind in _KIND_ICONS:
        return _KIND_ICONS[kind]
    host = domain_of(doc.link)
    return f"web:{host}" if host else "generic"


def _icon_docs(*groups: Iterable[SearchDoc]) -> tuple[SearchDoc, ...]:
    # One icon per kind (and per host for web pages): three icons of one kind say less than
    # one does. Drawn from the cited sources, then More, then files, up to MAX_ICONS.
    picked: dict[str, SearchDoc] = {}
    for docs in groups:
        for doc in docs:
            picked.setdefault(icon_key(doc), doc)
            if len(picked) == MAX_ICONS:
                return tuple(picked.values())
    return tuple(picked.values())


def select_sources(state: ProcessedMessageState) -> SelectedSources:
    """Return Cited (citation order), More and User Files, the icons and `has_sources`."""
    cited_all: dict[str, SearchDoc] = {}
    for citation in state.citations:
        doc = state.document_map.get(citation.document_id)
        if doc is not None:
            cited_all.setdefault(doc.document_id, doc)
    rest = [doc for key, doc in state.document_map.items() if key not in cited_all]
    cited = tuple(doc for doc in cited_all.values() if not doc.file_id)
    more = tuple(doc for doc in rest if not doc.file_id)
    files = tuple(doc for doc in [*cited_all.values(), *rest] if doc.file_id)
    icons = _icon_docs(cited, more, files)
    return SelectedSources(
        cited=cited,
        more=more,
        files=files,
        icon_docs=icons,
        has_sources=bool(state.citations) or bool(state.document_map),
    )
