"""The turn's output channels: Onyx-shaped packets and the SSE events of docs/specs.md, rule T15."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..citations.citable import Citable
from ..citations.registry import CitationRegistry
from ..packets.documents import SearchDoc
from ..packets.models import (
    CitationInfo,
    ErrorPacket,
    MessageDelta,
    MessageStart,
    OpenUrlDocuments,
    PacketObj,
    SearchToolDocumentsDelta,
    SearchToolStart,
    SectionEnd,
    Stop,
)
from ..packets.wire import make_packet, packet_to_json
from ..tool_registry import searches_internet

BLURB_CHARS = 300


class SinkClosed(Exception):
    """The sink no longer takes this turn's events (another runner owns the turn)."""


class TurnSink(Protocol):
    """Where a turn writes: every event in order, and its checkpoints."""

    def emit(self, event: str, data: dict[str, Any]) -> None:
        """Record one event: `packet`, `citation`, `citations_summary` or `message`.

        Raises SinkClosed when the turn must stop writing.
        """
        ...

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Keep the turn's state after a tool round, replacing the previous checkpoint."""
        ...


def search_doc(
    citable: Citable, registry: CitationRegistry, highlights: tuple[str, ...] = ()
) -> SearchDoc:
    """Return the SearchDoc for a block: its source is its id; the target is the turn's."""
    blurb = " ".join(citable.texts)[:BLURB_CHARS] if citable.texts else ""
    return SearchDoc(
        document_id=citable.source,
        semantic_identifier=citable.title,
        link=citable.link,
        blurb=blurb,
        source_type=citable.source_type,
        updated_at=citable.updated_at,
        match_highlights=highlights,
        is_internet=citable.is_internet,
        file_id=citable.file_id,
        target=registry.target(citable.source),
    )


class Emitter:
    """Write packets at their placement, and the seed's events, to a sink."""

    def __init__(self, sink: TurnSink) -> None:
        self.sink = sink
        self.message_turn: int | None = None

    def packet(self, obj: PacketObj, turn_index: int, tab_index: int = 0, **extra: Any) -> None:
        wire = packet_to_json(make_packet(obj, turn_index=turn_index, tab_index=tab_index))
        wire["obj"].update(extra)
        self.sink.emit("packet", wire)

    def tool_section(
        self, turn_index: int, tab_index: int, tool: str, docs: list[SearchDoc]
    ) -> None:
        self.packet(
            SearchToolStart(),
            turn_index,
            tab_index,
            tool_name=tool,
            is_internet_search=searches_internet(tool),
        )
        self.packet(SearchToolDocumentsDelta(tuple(docs)), turn_index, tab_index)
        self.packet(SectionEnd(), turn_index, tab_index)

    def _turn(self, turn_index: int) -> int:
        """Place message packets with the message once it has started (turn 0 included)."""
        return self.message_turn if self.message_turn is not None else turn_index

    def text(self, content: str, turn_index: int, docs: Callable[[], list[SearchDoc]]) -> None:
        """Stream answer text; the first text starts the message with the documents so far."""
        if not content:
            return
        if self.message_turn is None:
            self.message_turn = turn_index
            self.packet(MessageStart(tuple(docs())), turn_index)
        self.packet(MessageDelta(content), self.message_turn)

    def citation_info(self, number: int, source: str) -> None:
        self.packet(CitationInfo(number, source), self._turn(0))

    def documents_update(self, docs: list[SearchDoc], turn_index: int) -> None:
        """Send the documents whose highlights or targets the answer settled."""
        if docs:
            self.packet(OpenUrlDocuments(tuple(docs)), self._turn(turn_index))

    def stop(self, turn_index: int, reason: str | None = None) -> None:
        self.packet(Stop(reason), self._turn(turn_index))

    def error(self, message: str, turn_index: int) -> None:
        # Onyx's error packet is bare; the message rides along for clients that show it.
        self.packet(ErrorPacket(), self._turn(turn_index), error=message)
