"""The history of chats: the sidebar's pages, the Chats page, and Search chats.

The sidebar lists a page of chats (SESSIONS_PAGE) with `More chats`: a link to the chat page
showing the older page (`?chats_before=<cursor>`), which htmx loads in place instead from
`GET /chats/more`. `GET /chats` is the history as a page of its own (what the phone's `Chats`
button opens without JavaScript) and the search's results page (`?q=`); `GET /chats/search`
is the same results as a fragment, for the live results in the sidebar.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, render_template, request
from markupsafe import Markup, escape

from ..chat.pages import BadCursor, sidebar_page
from ..chat.search import MAX_QUERY_CHARS, clean_query, search_sessions
from ..store.app_db import get_engine
from .auth import current_user, login_required
from .markdown import markdown_text

bp = Blueprint("chats", __name__)
SNIPPET_CHARS = 140
_BEFORE_MATCH = 50  # characters of context shown before the words found


@bp.app_context_processor
def _search_globals() -> dict[str, Any]:
    return {"max_query_chars": MAX_QUERY_CHARS}


def _cursor(name: str) -> str | None:
    raw = request.args.get(name)
    return raw if isinstance(raw, str) and raw else None


def sidebar(open_id: str | None, before: str | None = None) -> dict[str, Any]:
    """Return the sidebar's template arguments: a page of chats, the newest or from `before`.

    A cursor that is not one of the list's (an old or edited link) shows the newest chats.
    """
    engine, user_id = get_engine(), current_user().id
    try:
        page = sidebar_page(engine, user_id, open_id, before)
    except BadCursor:
        page, before = sidebar_page(engine, user_id, open_id), None
    return {"sessions": page.rows, "chats_before": page.before, "chats_from": before}


def snippet(text: str | None, words: str) -> Markup | None:
    """Return a message's words around the first place `words` occur, that place marked."""
    if text is None:
        return None
    plain = " ".join(markdown_text(text).split()) or " ".join(text.split())
    found = re.search(re.escape(words), plain, re.IGNORECASE)
    if found is None:  # matched in the markup only (a link's address): its first words
        cut = plain[:SNIPPET_CHARS]
        return escape(cut + ("…" if len(plain) > SNIPPET_CHARS else ""))
    start = max(0, found.start() - _BEFORE_MATCH)
    end = max(found.end(), min(len(plain), start + SNIPPET_CHARS))
    return Markup("{}{}<mark>{}</mark>{}{}").format(
        "…" if start else "",
        plain[start : found.start()],
        plain[found.start() : found.end()],
        plain[found.end() : end],
        "…" if end < len(plain) else "",
    )


def _results(query: str, open_id: str, before: str | None) -> dict[str, Any]:
    try:
        hits = search_sessions(get_engine(), current_user().id, query, before)
    except BadCursor:
        hits, before = search_sessions(get_engine(), current_user().id, query), None
    shown = [(hit, snippet(hit.text, query)) for hit in hits.rows]
    return {"q": query, "hits": shown, "more": hits.before, "open_id": open_id, "cont": before}


def _open_id() -> str:
    raw = request.args.get("open")
    return raw if isinstance(raw, str) and raw.isalnum() and len(raw) <= 32 else ""


@bp.get("/chats")
@login_required
def index() -> str:
    """The history as a page: every chat a page at a time, or the chats a search found."""
    query = clean_query(request.args.get("q"))
    args: dict[str, Any] = {"chat": {"id": ""}, "q": query}
    if query:
        args |= _results(query, "", _cursor("before")) | {"cont": None}  # the whole list
    else:
        args |= sidebar(None, _cursor("before"))
    return render_template("chats.html", **args)


@bp.get("/chats/more")
@login_required
def more() -> str:
    """The sidebar's next page of chats, for htmx to put in place of `More chats`."""
    open_id = _open_id()
    args = sidebar(open_id or None, _cursor("before"))
    # The first day of this page continues the last of the one before: no second heading.
    return render_template(
        "_session_days.html", chat={"id": open_id}, continued=request.args.get("day"), **args
    )


@bp.get("/chats/search")
@login_required
def search() -> str:
    """Search chats as a fragment: the results (or their next page), for the live results."""
    query = clean_query(request.args.get("q"))
    if not query:
        return render_template("_chat_results.html", q="", fragment=True)
    args = _results(query, _open_id(), _cursor("before"))
    return render_template("_chat_results.html", fragment=True, **args)
