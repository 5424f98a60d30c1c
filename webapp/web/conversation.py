"""The conversation as the chat page draws it: its questions and answers, stored or new.

A stored answer is drawn from its snapshot (`webapp/web/snapshots.py`), with its versions
(`webapp/web/version_nav.py`) and the buttons it offers; the blueprints in `chat.py` and
`versions.py` draw these items through `templates/_user_message.html` and
`templates/_assistant_message.html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from flask import url_for

from ..chat.records import MessageRow
from ..store.app_db import get_engine
from .answers import AnswerRenderer, AnswerViews
from .auth import current_user
from .snapshots import draw_answers
from .version_nav import VersionNav, version_navs


def answer_actions(session_id: str, message_id: str, latest: bool = False) -> dict[str, str]:
    """Return where an answer's Stop and (the latest answer's) Regenerate buttons post."""
    actions = {"stop": url_for("chat.cancel", session_id=session_id, message_id=message_id)}
    if latest:
        where = url_for("versions.regenerate", session_id=session_id, message_id=message_id)
        actions["regenerate"] = where
    return actions


@dataclass(frozen=True, slots=True)
class QuestionItem:
    """A question as the conversation draws it (`_user_message.html`)."""

    text: str
    id: str = ""
    role: ClassVar[str] = "user"


@dataclass(frozen=True, slots=True)
class AnswerItem:
    """An answer as the conversation draws it (`_assistant_message.html`): stored or new."""

    id: str
    views: AnswerViews
    stream_url: str
    actions: dict[str, str]
    versions: VersionNav | None = None
    role: ClassVar[str] = "assistant"

    @property
    def streaming(self) -> bool:
        return self.views.answer.streaming


def answer_item(
    session_id: str,
    message_id: str,
    views: AnswerViews,
    versions: VersionNav | None = None,
    *,
    latest: bool = False,
) -> AnswerItem:
    """Return an answer as the conversation draws it; only the latest offers Regenerate."""
    stream_url = url_for("chat.events", session_id=session_id, message_id=message_id)
    actions = answer_actions(session_id, message_id, latest)
    return AnswerItem(message_id, views, stream_url, actions, versions)


def conversation(
    session_id: str, messages: Sequence[MessageRow], *, latest_page: bool = True
) -> list[QuestionItem | AnswerItem]:
    """Return a page of a chat's messages as the conversation draws them."""
    # Finished answers come from their snapshots (one query); see webapp/web/snapshots.py.
    user_id = current_user().id
    drawn = draw_answers(AnswerRenderer(get_engine(), user_id), messages)
    navs = version_navs(get_engine(), user_id, session_id, messages)
    # Only the chat's latest answer offers Regenerate: the last of its latest page.
    latest = messages[-1].id if messages and latest_page else None
    shown: list[QuestionItem | AnswerItem] = []
    for message in messages:
        if message.role == "user":
            shown.append(QuestionItem(message.content, message.id))
            continue
        nav = navs.get(message.id)
        is_latest = message.id == latest
        item = answer_item(session_id, message.id, drawn[message.id], nav, latest=is_latest)
        shown.append(item)
    return shown
