"""One user's answers as views: folded from stored packets, or live, through the same code."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from flask import url_for
from sqlalchemy.engine import Engine

from ..chat.event_log import events_after
from ..chat.notes import StoredEvent
from ..chat.records import MessageRow
from ..packets.destinations import AccountLabeler
from ..packets.documents import SearchDoc
from ..packets.select import icon_key
from ..packets.state import PacketStream
from ..store.accounts import list_accounts
from .answer_body import AnswerView, answer_view
from .library import library_path
from .openers import Library
from .sheet import SourcesView, account_labeler, sources_view
from .status import status_text

GENERIC_ERROR = "Something went wrong while answering. Please try again."
UNDRAWABLE = "This answer can't be shown. The rest of the chat is as it was."
MAX_ERROR_CHARS = 300
# Tax, card and mortgage citations open in the app's library reader.
LIBRARY = Library(path_for=library_path)


def icon_for(doc: SearchDoc) -> str:
    """Return the row's icon: its kind's own, a web page's favicon (the app's route), or the
    generic one."""
    key = icon_key(doc)
    if key.startswith("web:"):
        return url_for("favicon.icon", host=key.removeprefix("web:"))
    return url_for("static", filename=f"icons/{key}.svg")


def packet_error(packet: object) -> str | None:
    """Return the message of an `error` packet (a generic one when it has none), else None."""
    obj = packet.get("obj") if isinstance(packet, dict) else None
    if not isinstance(obj, dict) or obj.get("type") != "error":
        return None
    message = obj.get("error")
    if isinstance(message, str) and message.strip():
        return message.strip()[:MAX_ERROR_CHARS]
    return GENERIC_ERROR


@dataclass(frozen=True, slots=True)
class AnswerViews:
    answer: AnswerView
    sources: SourcesView


class AnswerRenderer:
    """Render one user's answers; their account names are read once, when first named."""

    def __init__(self, engine: Engine, user_id: int) -> None:
        self._engine, self._user_id = engine, user_id
        self._labeler: AccountLabeler | None = None

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def user_id(self) -> int:
        return self._user_id

    def labeler(self) -> AccountLabeler:
        """Name the user's accounts; they are read when an answer first names one, so an
        answer that cites no account costs no read of them."""

        def label(account_id: str) -> str | None:
            if self._labeler is None:
                self._labeler = account_labeler(list_accounts(self._engine, self._user_id))
            return self._labeler(account_id)

        return label

    def views(
        self,
        message_id: str,
        stream: PacketStream,
        *,
        streaming: bool,
        error: str | None = None,
        interrupted: bool = False,
        start: int = 0,
    ) -> AnswerViews:
        """Return the answer (its text from `start`) and its sources as of the packets so far."""
        state = stream.state
        labeler = self.labeler()
        answer = answer_view(
            state,
            message_id,
            labeler,
            streaming=streaming,
            error=error,
            interrupted=interrupted,
            start=start,
            library=LIBRARY,
        )
        if answer.waiting:
            answer = replace(answer, status=status_text(stream.packets))
        return AnswerViews(answer, sources_view(state, message_id, labeler, icon_for, LIBRARY))

    def stored(self, message: MessageRow) -> AnswerViews:
        """Return a stored answer, folded from its packets (running ones are still streaming)."""
        packets = _stored_packets(self._engine, message.id)
        return self.folded(message.id, message.status, message.error, packets)

    def folded(
        self, message_id: str, status: str, row_error: str | None, packets: Iterable[Any]
    ) -> AnswerViews:
        """Return an answer folded from its packets, as its row's status and error say."""
        stream, error = fold(packets)
        running = status == "running"
        if not running and status == "error" and error is None:
            error = row_error[:MAX_ERROR_CHARS] if row_error else GENERIC_ERROR
        return self.views(message_id, stream, streaming=running, error=error)

    def placeholder(self, message_id: str) -> AnswerViews:
        """Return a plain stand-in for a stored answer that can't be drawn."""
        return self.views(message_id, PacketStream(0), streaming=False, error=UNDRAWABLE)


def _stored_packets(engine: Engine, message_id: str) -> list[Any]:
    return answer_packets(events_after(engine, message_id, 0))


def answer_packets(events: Iterable[StoredEvent]) -> list[Any]:
    """Return the packets of an answer's stored events, in order, less what a reset withdrew."""
    packets: list[tuple[int, Any]] = []
    for event in events:
        if event.event == "packet":
            try:
                packets.append((event.seq, json.loads(event.data)))
            except ValueError:
                packets.append((event.seq, None))  # counted as malformed by the processor
        elif event.event == "reset":  # what a reset withdrew is not part of the answer
            after = reset_after(event.data)
            packets = [(seq, p) for seq, p in packets if seq <= after]
    return [p for _, p in packets]


def reset_after(data: str) -> int:
    """Return the `after` of a `reset` event: events with a higher seq are withdrawn."""
    try:
        after = json.loads(data).get("after")
    except (ValueError, AttributeError):
        return 0
    return after if isinstance(after, int) and not isinstance(after, bool) else 0


def fold(packets: Iterable[Any]) -> tuple[PacketStream, str | None]:
    """Fold packets into one stream; return it and the last error message among them."""
    stream = PacketStream(0)
    error = None
    for packet in packets:
        stream.append(packet)
        error = packet_error(packet) or error
    return stream, error
