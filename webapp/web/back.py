"""`Back to the answer`: the link on a page an answer opened (an account, the portfolio, a
quote, the library reader), back to the chat it was opened from.

The page learns where it was opened from the request's `Referer` (the app sends it between
its own pages: `Referrer-Policy: same-origin`): a chat page, or an answer's sources page.
Only the signed-in user's own chats and answers make a link; static/app.js then aims it at
the very answer that was clicked, which the chat page scrolls into view.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from flask import request, url_for

from ..chat.conversations import find_message, get_session
from ..store.app_db import get_engine
from .auth import current_user

_CHAT = re.compile(r"/chat/([0-9A-Za-z_-]{1,64})")
_SOURCES = re.compile(r"/answers/([0-9A-Za-z_-]{1,64})/sources")


def answer_link(referrer: str | None, host_url: str, user_id: int) -> str | None:
    """Return the URL of the answer `referrer` names (a chat, or an answer's sources page)."""
    if not referrer:
        return None
    here, there = urlsplit(host_url), urlsplit(referrer)
    if (there.scheme, there.netloc) != (here.scheme, here.netloc):
        return None
    engine = get_engine()
    if found := _CHAT.fullmatch(there.path):
        chat = get_session(engine, user_id, found.group(1))
        return url_for("chat.show", session_id=chat.id) if chat else None
    if found := _SOURCES.fullmatch(there.path):
        message = find_message(engine, user_id, found.group(1))
        if message is None or message.role != "assistant":
            return None
        return url_for("chat.show", session_id=message.session_id, _anchor=f"message-{message.id}")
    return None


def back_to_answer() -> str | None:
    """Return where `Back to the answer` goes on this page, or None when no answer opened it."""
    user = current_user()
    return answer_link(request.referrer, request.host_url, user.id)
