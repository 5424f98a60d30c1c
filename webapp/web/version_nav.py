"""What an answer with versions shows: `Previous version`, `2 / 2`, `Next version`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flask import url_for
from sqlalchemy.engine import Engine

from ..chat.conversations import find_message
from ..chat.records import MessageRow
from ..chat.versions import latest_id, versions_of


@dataclass(frozen=True, slots=True)
class VersionNav:
    """An answer's place among its versions, and where its two buttons post (None: none)."""

    number: int
    count: int
    previous: str | None
    next: str | None


def version_navs(
    engine: Engine, user_id: int, session_id: str, messages: Sequence[MessageRow]
) -> dict[str, VersionNav]:
    """Return the nav of each answer among `messages` that has more than one version."""

    def show(message_id: str | None) -> str | None:
        if message_id is None:
            return None
        return url_for("versions.show", session_id=session_id, message_id=message_id)

    return {
        answer_id: VersionNav(found.number, found.count, show(found.previous), show(found.next))
        for answer_id, found in versions_of(engine, user_id, messages).items()
        if found.count > 1
    }


def answer_place(
    engine: Engine, user_id: int, session_id: str, message_id: str
) -> tuple[bool, VersionNav | None]:
    """Return whether the answer is the chat's latest (it offers Regenerate), and its nav."""
    latest = latest_id(engine, user_id, session_id) == message_id
    found = find_message(engine, user_id, message_id)
    navs = version_navs(engine, user_id, session_id, [found] if found else [])
    return latest, navs.get(message_id)
