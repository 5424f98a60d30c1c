"""Packet models: Onyx's current wire shape as docs/specs.md#packets-the-server-emits fixes it.

One packet is `{"placement": {...}, "obj": {"type": ...}}`; each `obj` type is a frozen
dataclass whose `type` is a class-level Literal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from .documents import SearchDoc

# The reasons the server sends; a stop with no reason is a normal completion.
StopReason: TypeAlias = Literal["finished", "user_cancelled"]
USER_CANCELLED: StopReason = "user_cancelled"


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a packet belongs in the answer: the turn, tab, sub-turn and model."""

    turn_index: int = 0
    tab_index: int = 0
    sub_turn_index: int | None = None
    model_index: int = 0


@dataclass(frozen=True, slots=True)
class SearchToolStart:
    type: ClassVar[Literal["search_tool_start"]] = "search_tool_start"


@dataclass(frozen=True, slots=True)
class SearchToolDocumentsDelta:
    type: ClassVar[Literal["search_tool_documents_delta"]] = "search_tool_documents_delta"
    documents: tuple[SearchDoc, ...] = ()
    # Entries of the wire list that were not documents; not part of the wire shape.
    malformed_documents: int = 0


@dataclass(frozen=True, slots=True)
class OpenUrlDocuments:
    type: ClassVar[Literal["open_url_documents"]] = "open_url_documents"
    documents: tuple[SearchDoc, ...] = ()
    malformed_documents: int = 0


@dataclass(frozen=True, slots=True)
class SectionEnd:
    type: ClassVar[Literal["section_end"]] = "section_end"


@dataclass(frozen=True, slots=True)
class MessageStart:
    type: ClassVar[Literal["message_start"]] = "message_start"
    final_documents: tuple[SearchDoc, ...] | None = None
    malformed_documents: int = 0


@dataclass(frozen=True, slots=True)
class MessageDelta:
    type: ClassVar[Literal["message_delta"]] = "message_delta"
    content: str = ""


@dataclass(frozen=True, slots=True)
class CitationInfo:
    type: ClassVar[Literal["citation_info"]] = "citation_info"
    citation_number: int
    document_id: str


@dataclass(frozen=True, slots=True)
class Stop:
    type: ClassVar[Literal["stop"]] = "stop"
    # A string the server may add later is kept rather than lost.
    stop_reason: StopReason | str | None = None


@dataclass(frozen=True, slots=True)
class ErrorPacket:
    type: ClassVar[Literal["error"]] = "error"


@dataclass(frozen=True, slots=True)
class MessageEnd:
    """The client-side end of a message; the server never sends it."""

    type: ClassVar[Literal["message_end"]] = "message_end"


@dataclass(frozen=True, slots=True)
class UnknownPacket:
    """A type this client does not know: kept for the record, ignored by the processor."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict, repr=False)


PacketObj: TypeAlias = (
    SearchToolStart
    | SearchToolDocumentsDelta
    | OpenUrlDocuments
    | SectionEnd
    | MessageStart
    | MessageDelta
    | CitationInfo
    | Stop
    | ErrorPacket
    | MessageEnd
    | UnknownPacket
)


@dataclass(frozen=True, slots=True)
class Packet:
    """One wire packet: its placement and its typed object."""

    obj: PacketObj
    placement: Placement = field(default_factory=Placement)


@dataclass(frozen=True, slots=True)
class Malformed:
    """A value that could not be read as a packet; `reason` is safe to log, `value` is not."""

    reason: str
    # The raw value may hold a citation target or an account id: keep it out of reprs.
    value: object = field(default=None, repr=False, compare=False)
