"""The processed state of one assistant message, folded from its packets incrementally.

docs/specs.md, rules P3-P5 (the processed state): a cursor so each call handles only new packets, a
reset when the list shrinks, and the per-type dispatch. `PacketStream` closes the hole
the seed leaves open: a new list of equal or greater length must reset too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .documents import CitationMap, SearchDoc, StreamingCitation
from .models import (
    CitationInfo,
    ErrorPacket,
    Malformed,
    MessageDelta,
    MessageEnd,
    MessageStart,
    OpenUrlDocuments,
    Packet,
    SearchToolDocumentsDelta,
    Stop,
)
from .wire import parse_packet


@dataclass(slots=True)
class ProcessedMessageState:
    """What one message's packets add up to; mutated in place as packets arrive."""

    node_id: int
    next_packet_index: int = 0
    citation_map: CitationMap = field(default_factory=dict)
    citations: list[StreamingCitation] = field(default_factory=list)
    seen_citation_doc_ids: set[str] = field(default_factory=set)
    document_map: dict[str, SearchDoc] = field(default_factory=dict)
    is_complete: bool = False
    stop_reason: str | None = None
    # Set by the first `stop`, so a later one cannot change the reason.
    stopped: bool = False
    has_error: bool = False
    malformed_count: int = 0
    deltas: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Return the message text: every `message_delta` joined in order."""
        return "".join(self.deltas)


def create_initial_state(node_id: int) -> ProcessedMessageState:
    """Return the empty state of message `node_id`."""
    return ProcessedMessageState(node_id=node_id)


def _add_documents(state: ProcessedMessageState, docs: Iterable[SearchDoc]) -> None:
    for doc in docs:
        # Upsert: a later copy of a document replaces the earlier one in place.
        state.document_map[doc.document_id] = doc


def _dispatch(state: ProcessedMessageState, item: object) -> None:
    # Most packets are text: read a decoded one in place, as `parse_packet` would (its
    # placement never makes a packet malformed, and changes nothing here).
    if type(item) is dict:
        obj = item.get("obj")
        if type(obj) is dict and obj.get("type") == "message_delta":
            content = obj.get("content")
            if content.__class__ is str:
                if content:
                    state.deltas.append(content)
                return
            if not isinstance(content, str):
                return  # read as "": nothing to add
    parsed = parse_packet(item)
    if isinstance(parsed, Malformed):
        state.malformed_count += 1
        return
    obj = parsed.obj
    if isinstance(obj, CitationInfo):
        state.citation_map[obj.citation_number] = obj.document_id
        if obj.document_id not in state.seen_citation_doc_ids:
            state.seen_citation_doc_ids.add(obj.document_id)
            state.citations.append(StreamingCitation(obj.citation_number, obj.document_id))
    elif isinstance(obj, SearchToolDocumentsDelta | OpenUrlDocuments):
        state.malformed_count += obj.malformed_documents
        _add_documents(state, obj.documents)
    elif isinstance(obj, MessageStart):
        state.malformed_count += obj.malformed_documents
        _add_documents(state, obj.final_documents or ())
    elif isinstance(obj, MessageDelta):
        if obj.content:
            state.deltas.append(obj.content)
    elif isinstance(obj, MessageEnd):
        state.is_complete = True
    elif isinstance(obj, Stop):
        state.is_complete = True
        if not state.stopped:
            state.stopped = True
            state.stop_reason = obj.stop_reason
    elif isinstance(obj, ErrorPacket):
        state.has_error = True
    # Anything else (tool starts, section ends, unknown types) changes nothing here.


def process_packets(
    state: ProcessedMessageState, packets: Sequence[Packet | object]
) -> ProcessedMessageState:
    """Fold the packets past the cursor into `state` and return it.

    A list shorter than the cursor was replaced: start again from a fresh state.
    Items may be parsed packets or raw JSON values; malformed ones are counted.
    """
    if state.next_packet_index > len(packets):
        state = create_initial_state(state.node_id)
    for index in range(state.next_packet_index, len(packets)):
        _dispatch(state, packets[index])
    state.next_packet_index = len(packets)
    return state


class PacketStream:
    """Own one message's packets and state; feed it only new packets, or a new list."""

    __slots__ = ("_node_id", "_packets", "_state")

    def __init__(self, node_id: int, packets: Iterable[Packet | object] = ()) -> None:
        self._node_id = node_id
        self._packets: list[Packet | object] = []
        self._state = create_initial_state(node_id)
        self.extend(packets)

    @property
    def node_id(self) -> int:
        return self._node_id

    @property
    def state(self) -> ProcessedMessageState:
        return self._state

    @property
    def packets(self) -> tuple[Packet | object, ...]:
        return tuple(self._packets)

    def append(self, packet: Packet | object) -> ProcessedMessageState:
        """Add one new packet (parsed or raw JSON) and fold it in."""
        self._packets.append(packet)
        return self._sync()

    def extend(self, packets: Iterable[Packet | object]) -> ProcessedMessageState:
        """Add new packets in order and fold them in."""
        self._packets.extend(packets)
        return self._sync()

    def replace(self, packets: Iterable[Packet | object]) -> ProcessedMessageState:
        """Start over from `packets`, a new list (a regenerate or a history reload)."""
        self._packets = list(packets)
        # Whatever the new length, the old state describes other packets: never reuse it.
        self._state = create_initial_state(self._node_id)
        return self._sync()

    def _sync(self) -> ProcessedMessageState:
        self._state = process_packets(self._state, self._packets)
        return self._state
