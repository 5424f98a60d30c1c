"""Read packets leniently off the wire, write their exact wire JSON, and build new ones.

docs/specs.md, rule P19: a missing optional field takes its default; only a missing or
mistyped required field makes a packet malformed. Nothing here raises on bad input.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .documents import SearchDoc, document_id_of, search_doc_from_json, search_doc_to_json
from .models import (
    CitationInfo,
    ErrorPacket,
    Malformed,
    MessageDelta,
    MessageEnd,
    MessageStart,
    OpenUrlDocuments,
    Packet,
    PacketObj,
    Placement,
    SearchToolDocumentsDelta,
    SearchToolStart,
    SectionEnd,
    Stop,
    UnknownPacket,
)


class _Bad(Exception):
    """A required field is missing or mistyped; caught inside this module only."""


def _index(value: object, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _placement(packet: Mapping[str, Any]) -> Placement:
    raw = packet.get("placement")
    if isinstance(raw, Mapping):
        return Placement(
            turn_index=_index(raw.get("turn_index"), 0) or 0,
            tab_index=_index(raw.get("tab_index"), 0) or 0,
            sub_turn_index=_index(raw.get("sub_turn_index"), None),
            model_index=_index(raw.get("model_index"), 0) or 0,
        )
    # Older Onyx packets carried only an index: {"ind": n, "obj": ...}.
    return Placement(turn_index=_index(packet.get("ind"), 0) or 0)


def _documents(value: object, field: str) -> tuple[tuple[SearchDoc, ...], int]:
    if not isinstance(value, list):
        raise _Bad(f"{field} must be a list")
    docs = [search_doc_from_json(item) for item in value]
    kept = tuple(doc for doc in docs if doc is not None)
    return kept, len(docs) - len(kept)


def _search_documents(obj: Mapping[str, Any]) -> PacketObj:
    docs, bad = _documents(obj.get("documents"), "documents")
    return SearchToolDocumentsDelta(docs, bad)


def _open_url_documents(obj: Mapping[str, Any]) -> PacketObj:
    docs, bad = _documents(obj.get("documents"), "documents")
    return OpenUrlDocuments(docs, bad)


def _message_start(obj: Mapping[str, Any]) -> PacketObj:
    raw = obj.get("final_documents")
    if raw is None:
        return MessageStart()
    docs, bad = _documents(raw, "final_documents")
    return MessageStart(docs, bad)


def _message_delta(obj: Mapping[str, Any]) -> PacketObj:
    content = obj.get("content")
    return MessageDelta(content if isinstance(content, str) else "")


def _citation_info(obj: Mapping[str, Any]) -> PacketObj:
    number = obj.get("citation_number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise _Bad("citation_number must be an integer")
    document_id = document_id_of(obj)
    if document_id is None:
        raise _Bad("document_id must be a non-empty string")
    return CitationInfo(number, document_id)


def _stop(obj: Mapping[str, Any]) -> PacketObj:
    reason = obj.get("stop_reason")
    return Stop(reason if isinstance(reason, str) else None)


_READERS: dict[str, Callable[[Mapping[str, Any]], PacketObj]] = {
    "search_tool_start": lambda _: SearchToolStart(),
    "search_tool_documents_delta": _search_documents,
    "open_url_documents": _open_url_documents,
    "section_end": lambda _: SectionEnd(),
    "message_start": _message_start,
    "message_delta": _message_delta,
    "citation_info": _citation_info,
    "stop": _stop,
    "error": lambda _: ErrorPacket(),
    "message_end": lambda _: MessageEnd(),
}


def parse_packet(value: object) -> Packet | Malformed:
    """Read one packet from a JSON value (or JSON text); never raises."""
    if isinstance(value, Packet):
        return value
    if isinstance(value, str | bytes | bytearray):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return Malformed("not JSON", value)
    if not isinstance(value, Mapping):
        return Malformed("a packet must be an object", value)
    # A bare object without the wrapper is read as the object itself.
    obj = value.get("obj", value if "type" in value else None)
    if not isinstance(obj, Mapping):
        return Malformed("a packet needs an `obj` object", value)
    kind = obj.get("type")
    if not isinstance(kind, str):
        return Malformed("a packet's `obj.type` must be a string", value)
    reader = _READERS.get(kind)
    try:
        parsed = reader(obj) if reader else UnknownPacket(kind, dict(obj))
    except _Bad as error:
        return Malformed(f"{kind}: {error}", value)
    return Packet(parsed, _placement(value))


def _obj_json(obj: PacketObj) -> dict[str, Any]:
    match obj:
        case SearchToolDocumentsDelta(documents=docs) | OpenUrlDocuments(documents=docs):
            return {"type": obj.type, "documents": [search_doc_to_json(d) for d in docs]}
        case MessageStart(final_documents=docs):
            final = None if docs is None else [search_doc_to_json(d) for d in docs]
            return {"type": obj.type, "final_documents": final}
        case MessageDelta(content=content):
            return {"type": obj.type, "content": content}
        case CitationInfo(citation_number=number, document_id=document_id):
            return {"type": obj.type, "citation_number": number, "document_id": document_id}
        case Stop(stop_reason=reason):
            return {"type": obj.type, "stop_reason": reason}
        case UnknownPacket(type=kind, data=data):
            return {**data, "type": kind}
    return {"type": obj.type}


def packet_to_json(packet: Packet) -> dict[str, Any]:
    """Return the exact wire JSON of `packet`: `{"placement": {...}, "obj": {...}}`."""
    placement = packet.placement
    return {
        "placement": {
            "turn_index": placement.turn_index,
            "tab_index": placement.tab_index,
            "sub_turn_index": placement.sub_turn_index,
            "model_index": placement.model_index,
        },
        "obj": _obj_json(packet.obj),
    }


def make_packet(
    obj: PacketObj,
    *,
    turn_index: int = 0,
    tab_index: int = 0,
    sub_turn_index: int | None = None,
    model_index: int = 0,
) -> Packet:
    """Wrap `obj` in a packet at the given placement."""
    return Packet(obj, Placement(turn_index, tab_index, sub_turn_index, model_index))


def citation_packet(number: int, document_id: str, *, turn_index: int = 0) -> Packet:
    """Build a `citation_info` packet for citation `number` of `document_id`."""
    return make_packet(CitationInfo(number, document_id), turn_index=turn_index)


def documents_packet(docs: Iterable[SearchDoc], *, turn_index: int = 0) -> Packet:
    """Build a `search_tool_documents_delta` packet listing `docs`."""
    return make_packet(SearchToolDocumentsDelta(tuple(docs)), turn_index=turn_index)
