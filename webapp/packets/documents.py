"""The documents a message cites: `SearchDoc` with the seed's full field set, and citations.

docs/specs.md, rule P2 (SearchDoc, StreamingCitation, CitationMap); rule J2 adds `target`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeAlias

from webapp.citations.parse import parse_citation_target
from webapp.citations.targets import CitationTarget, target_to_json

MetadataValue: TypeAlias = str | tuple[str, ...]
CitationMap: TypeAlias = dict[int, str]

_EMPTY_METADATA: Mapping[str, MetadataValue] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class SearchDoc:
    """One source an answer can cite; every field but `document_id` has the wire default."""

    document_id: str
    semantic_identifier: str = ""
    link: str | None = None
    blurb: str = ""
    source_type: str = ""
    score: float | None = None
    updated_at: str | None = None
    match_highlights: tuple[str, ...] = ()
    metadata: Mapping[str, MetadataValue] = field(default_factory=lambda: _EMPTY_METADATA)
    is_internet: bool = False
    chunk_ind: int = 0
    boost: int = 0
    hidden: bool = False
    primary_owners: tuple[str, ...] | None = None
    secondary_owners: tuple[str, ...] | None = None
    is_relevant: bool | None = None
    relevance_explanation: str | None = None
    file_id: str | None = None
    # A target may hold an account id, which is never logged: keep it out of reprs.
    target: CitationTarget | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class StreamingCitation:
    """A citation number and the document it names, as first cited."""

    citation_num: int
    document_id: str


def _str(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object, default: int = 0) -> int:
    # bool is an int subclass in Python but never a number on the wire.
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _opt_number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _bool(value: object, default: bool = False) -> bool:
    return value if isinstance(value, bool) else default


def _opt_bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list | tuple):
        return None
    return tuple(item for item in value if isinstance(item, str))


def _metadata(value: object) -> Mapping[str, MetadataValue]:
    if not isinstance(value, Mapping):
        return _EMPTY_METADATA
    clean: dict[str, MetadataValue] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            continue
        if isinstance(item, str):
            clean[key] = item
        elif (items := _strings(item)) is not None:
            clean[key] = items
    return MappingProxyType(clean)


def document_id_of(value: object) -> str | None:
    """Return the non-empty string `document_id` of a JSON document, or None."""
    if not isinstance(value, Mapping):
        return None
    document_id = value.get("document_id")
    return document_id if isinstance(document_id, str) and document_id else None


def search_doc_from_json(value: object) -> SearchDoc | None:
    """Read a document leniently: defaults for missing or mistyped optional fields.

    None when `value` is not an object or has no non-empty string `document_id`.
    """
    document_id = document_id_of(value)
    if document_id is None or not isinstance(value, Mapping):
        return None
    get = value.get
    # Each field as its helper reads it, with the common cases (absent, or of the right type)
    # inline: a small answer's fold is mostly reading its documents.
    title, link, blurb, kind = (
        get("semantic_identifier"),
        get("link"),
        get("blurb"),
        get("source_type"),
    )
    updated, explanation, file_id = get("updated_at"), get("relevance_explanation"), get("file_id")
    highlights, target = get("match_highlights"), get("target")
    return SearchDoc(
        document_id=document_id,
        semantic_identifier=title if title.__class__ is str else _str(title),
        link=link if link is None or link.__class__ is str else _opt_str(link),
        blurb=blurb if blurb.__class__ is str else _str(blurb),
        source_type=kind if kind.__class__ is str else _str(kind),
        score=_opt_number(get("score")),
        updated_at=updated if updated is None or updated.__class__ is str else _opt_str(updated),
        match_highlights=() if highlights is None else _strings(highlights) or (),
        metadata=_metadata(get("metadata")),
        is_internet=_bool(get("is_internet")),
        chunk_ind=_int(get("chunk_ind")),
        boost=_int(get("boost")),
        hidden=_bool(get("hidden")),
        primary_owners=_strings(get("primary_owners")),
        secondary_owners=_strings(get("secondary_owners")),
        is_relevant=_opt_bool(get("is_relevant")),
        relevance_explanation=(
            explanation
            if explanation is None or explanation.__class__ is str
            else _opt_str(explanation)
        ),
        file_id=file_id if file_id is None or file_id.__class__ is str else _opt_str(file_id),
        target=None if target is None else parse_citation_target(target),
    )


def _owners_json(owners: tuple[str, ...] | None) -> list[str] | None:
    return None if owners is None else list(owners)


def search_doc_to_json(doc: SearchDoc) -> dict[str, Any]:
    """Return the wire JSON of `doc`: every field present, `target` as rule T1 has it."""
    return {
        "document_id": doc.document_id,
        "semantic_identifier": doc.semantic_identifier,
        "link": doc.link,
        "blurb": doc.blurb,
        "source_type": doc.source_type,
        "score": doc.score,
        "updated_at": doc.updated_at,
        "match_highlights": list(doc.match_highlights),
        "metadata": {
            key: item if isinstance(item, str) else list(item) for key, item in doc.metadata.items()
        },
        "is_internet": doc.is_internet,
        "chunk_ind": doc.chunk_ind,
        "boost": doc.boost,
        "hidden": doc.hidden,
        "primary_owners": _owners_json(doc.primary_owners),
        "secondary_owners": _owners_json(doc.secondary_owners),
        "is_relevant": doc.is_relevant,
        "relevance_explanation": doc.relevance_explanation,
        "file_id": doc.file_id,
        "target": None if doc.target is None else target_to_json(doc.target),
    }
