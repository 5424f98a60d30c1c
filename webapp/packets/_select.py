"""Split a message's documents into the sheet's sections (seed 001, `selectSources`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._documents import SearchDoc
from ._links import domain_of
from ._state import ProcessedMessageState

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


def _icon_docs(docs: Iterable[SearchDoc]) -> tuple[SearchDoc, ...]:
    # Like Onyx web, one icon per host: three icons of one site say less than one does.
    # Every source without a host shares the generic icon, so it is shown once.
    picked: dict[str | None, SearchDoc] = {}
    for doc in docs:
        picked.setdefault(domain_of(doc.link), doc)
        if len(picked) == MAX_ICONS:
            break
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
    icons = _icon_docs(cited or more or files)
    return SelectedSources(
        cited=cited,
        more=more,
        files=files,
        icon_docs=icons,
        has_sources=bool(state.citations) or bool(state.document_map),
    )
