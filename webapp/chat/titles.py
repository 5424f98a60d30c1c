"""Titles that tell chats apart: a question asked again names its chat with a number.

The sidebar lists chats by title, so six chats named "What is my net worth" cannot be told
apart. A chat's title comes from its first question (`store.short_title`); when another of
the user's chats already has that title, the new one gets the next free number, as a file
manager names a copy: "What is my net worth (2)", then "(3)". Renamed chats keep whatever
name the person gave them, repeated or not.
"""

from __future__ import annotations

import re

import sqlalchemy as sa

from .tables import chat_sessions

LIKE_ESCAPE = "\\"
_NUMBERED = re.compile(r" \((\d{1,6})\)$")


def like_literal(text: str) -> str:
    """Return `text` for a LIKE pattern with its wildcards (`%`, `_`) and the escape literal."""
    return (
        text.replace(LIKE_ESCAPE, LIKE_ESCAPE * 2)
        .replace("%", LIKE_ESCAPE + "%")
        .replace("_", LIKE_ESCAPE + "_")
    )


def next_title(title: str, taken: list[str]) -> str:
    """Return `title`, or `title (n)` with n one past the highest number among `taken`."""
    numbers = [1 if name == title else 0 for name in taken]
    for name in taken:
        if name.startswith(title) and (found := _NUMBERED.fullmatch(name[len(title) :])):
            numbers.append(int(found.group(1)))
    highest = max(numbers, default=0)
    return title if highest == 0 else f"{title} ({highest + 1})"


# Read as every first question is asked: built once, its values bound as it runs.
_TAKEN = sa.select(chat_sessions.c.title).where(
    chat_sessions.c.user_id == sa.bindparam("user_id"),
    chat_sessions.c.id != sa.bindparam("session_id"),
    sa.or_(
        chat_sessions.c.title == sa.bindparam("title"),
        chat_sessions.c.title.like(sa.bindparam("numbered"), escape=LIKE_ESCAPE),
    ),
)


def distinct_title(conn: sa.Connection, user_id: int, session_id: str, title: str) -> str:
    """Return `title` made distinct from the user's other chats' titles (in `conn`'s view)."""
    numbered = like_literal(title) + " (%)"
    values = {"user_id": user_id, "session_id": session_id, "title": title, "numbered": numbered}
    return next_title(title, [str(name) for name in conn.execute(_TAKEN, values).scalars()])
