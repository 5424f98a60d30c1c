"""What a wake-up carries: the message it is about, and the events themselves when they fit.

A note is the message id alone (the reader then reads what is new from the database), or the
id, a space and the events as JSON (`[[seq, event, data], ...]`), so that the reader needs no
query at all. The events table stays the truth: a reader that finds a gap in the event ids it
was handed, or a note without events, reads from there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StoredEvent:
    seq: int
    event: str
    data: str


# PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more (the `NOTIFY` reference page).
PG_NOTE_BYTES = 7_900
# Redis takes far more; this bounds what one publish makes every subscriber decode.
REDIS_NOTE_BYTES = 256 * 1024


def encode_note(message_id: str, events: Sequence[StoredEvent] | None, limit: int) -> str:
    """Return the note for `message_id`: with its events when they fit in `limit` bytes."""
    if events:
        body = json.dumps([[e.seq, e.event, e.data] for e in events], separators=(",", ":"))
        # ASCII only (json escapes the rest), so characters are bytes.
        if len(message_id) + 1 + len(body) <= limit:
            return f"{message_id} {body}"
    return message_id


def decode_note(note: str) -> tuple[str, list[StoredEvent] | None]:
    """Return a note's message id and its events (None when it carries none, or is garbled)."""
    message_id, _, body = note.partition(" ")
    if not body:
        return message_id, None
    try:
        loaded = json.loads(body)
        events = [StoredEvent(int(seq), str(event), str(data)) for seq, event, data in loaded]
    except (ValueError, TypeError):
        return message_id, None
    return message_id, events


def following(held: dict[int, StoredEvent], after: int) -> list[StoredEvent]:
    """Take from `held` (events by id) those that follow `after` without a gap, in order.

    What is left in `held` lies past a gap: a reader keeps it until the events between are
    read from the database (a lost note, or events handed out live before it listened).
    Events at or before `after` (a second copy, from another channel) are dropped.
    """
    for seq in [seq for seq in held if seq <= after]:
        del held[seq]
    run: list[StoredEvent] = []
    while (event := held.pop(after + 1, None)) is not None:
        run.append(event)
        after += 1
    return run
