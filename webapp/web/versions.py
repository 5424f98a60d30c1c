"""Regenerate an answer, show one of its versions, and edit a question: the chat page's forms.

Each is a plain form with its CSRF token that redirects back to the chat, and with htmx swaps
the answer or question in place. The JSON API has the same three (`webapp/web/api.py`).
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, redirect, render_template, url_for
from werkzeug.wrappers import Response as BaseResponse

from ..chat.conversations import find_message
from ..chat.leases import SessionBusy, TooManyTurns
from ..chat.records import SessionRow
from ..chat.sessions import find_key, remember_key
from ..chat.versions import (
    NotInChat,
    NotLatest,
    VersionBusy,
    question_to_edit,
    show_version,
)
from ..packets.state import PacketStream
from ..services import chat_service
from ..store.app_db import get_engine
from .answers import AnswerRenderer
from .api import MAX_QUESTION_CHARS, TOO_MANY_TURNS, own_message, own_session
from .auth import current_user, login_required
from .chat import (
    BUSY,
    NO_ANSWER,
    NO_CHAT,
    _form_key,
    _message_url,
    _question,
    _refused,
    chat_page,
)
from .conversation import QuestionItem, answer_item
from .htmx import htmx_details
from .version_nav import answer_place

bp = Blueprint("versions", __name__)

NOT_LATEST = "Only the latest answer can be regenerated. Edit its question to ask again from there."
LEFT_OUT = "That is no longer part of this chat: a question before it was edited."
VERSION_BUSY = "That answer is still being written. Wait for it to finish."
NO_QUESTION = "There is no such question."

Refusable = BaseResponse | str | tuple[str, int]


def _answer_html(chat: SessionRow, message_id: str) -> str:
    """Draw one answer, as the chat page would (its versions, and Regenerate if it is latest)."""
    user = current_user()
    renderer = AnswerRenderer(get_engine(), user.id)
    message = find_message(get_engine(), user.id, message_id)
    if message is None:
        abort(404, NO_ANSWER)
    views = renderer.stored(message)
    latest, nav = answer_place(get_engine(), user.id, chat.id, message_id)
    item = answer_item(chat.id, message_id, views, nav, latest=latest)
    return render_template("_assistant_message.html", message=item, chat=chat)


@bp.post("/chat/<session_id>/messages/<message_id>/regenerate")
@login_required
def regenerate(session_id: str, message_id: str) -> Refusable:
    """Write a new version of the latest answer in its place (Regenerate, or Retry)."""
    chat = own_session(session_id, NO_CHAT)
    own_message(session_id, message_id, NO_ANSWER, answer=True)
    user, back = current_user(), redirect(_message_url(session_id, message_id))
    key = _form_key()
    found = find_key(get_engine(), user.id, key) if key else None
    if found is not None and found[0] == session_id:  # the same form again: show what it did
        where = _message_url(session_id, found[1])
        if htmx_details():
            return Response(status=204, headers={"HX-Redirect": where, "HX-Refresh": "true"})
        return redirect(where)
    try:
        version = chat_service().regenerate(user.id, session_id, message_id)
    except LookupError:
        abort(404, NO_ANSWER)
    except NotLatest:
        return _refused(NOT_LATEST, 409, back)
    except NotInChat:
        return _refused(LEFT_OUT, 409, back)
    except SessionBusy:
        return _refused(BUSY, 409, back)
    except TooManyTurns:
        return _refused(TOO_MANY_TURNS, 429, back)
    if key:
        remember_key(get_engine(), user.id, key, session_id, version)
    if not htmx_details():
        return redirect(_message_url(session_id, version))
    views = AnswerRenderer(get_engine(), user.id).views(version, PacketStream(0), streaming=True)
    item = answer_item(session_id, version, views, latest=True)
    return render_template("_assistant_message.html", message=item, chat=chat)


@bp.post("/chat/<session_id>/messages/<message_id>/show")
@login_required
def show(session_id: str, message_id: str) -> Refusable:
    """Show this version of an answer in its place (Previous version, Next version)."""
    chat = own_session(session_id, NO_CHAT)
    back = redirect(_message_url(session_id, message_id))
    try:
        show_version(get_engine(), current_user().id, session_id, message_id)
    except LookupError:
        abort(404, NO_ANSWER)
    except NotInChat:
        return _refused(LEFT_OUT, 409, back)
    except VersionBusy:
        return _refused(VERSION_BUSY, 409, back)
    if not htmx_details():
        return back
    return _answer_html(chat, message_id)


def _editable(session_id: str, message_id: str) -> QuestionItem:
    try:
        question = question_to_edit(get_engine(), current_user().id, session_id, message_id)
    except LookupError:
        abort(404, NO_QUESTION)
    except NotInChat:
        abort(409, LEFT_OUT)
    return QuestionItem(question.content, question.id)


@bp.get("/chat/<session_id>/messages/<message_id>/edit")
@login_required
def edit_form(session_id: str, message_id: str) -> str:
    """Show a question as its Edit form: in place with htmx, else on the chat's page."""
    chat = own_session(session_id, NO_CHAT)
    question = _editable(session_id, message_id)
    if not htmx_details():
        return chat_page(session_id, editing=message_id)
    return render_template(
        "_user_message.html",
        message=question,
        chat=chat,
        editing=message_id,
        max_chars=MAX_QUESTION_CHARS,
    )


@bp.post("/chat/<session_id>/messages/<message_id>/edit")
@login_required
def edit(session_id: str, message_id: str) -> Refusable:
    """Ask the edited question in its place; the answers after it leave the chat."""
    chat = own_session(session_id, NO_CHAT)
    _editable(session_id, message_id)
    user = current_user()
    again = redirect(url_for("versions.edit_form", session_id=session_id, message_id=message_id))
    text = _question()
    if text is None:
        return _refused(f"Write a message of 1 to {MAX_QUESTION_CHARS} characters.", 400, again)
    try:
        edited = chat_service().edit(user.id, session_id, message_id, text)
    except LookupError:
        abort(404, NO_QUESTION)
    except NotInChat:
        return _refused(LEFT_OUT, 409, redirect(url_for("chat.show", session_id=session_id)))
    except SessionBusy:
        return _refused(BUSY, 409, again)
    except TooManyTurns:
        return _refused(TOO_MANY_TURNS, 429, again)
    if not htmx_details():
        return redirect(_message_url(session_id, edited.answer_id))
    views = AnswerRenderer(get_engine(), user.id).views(
        edited.answer_id, PacketStream(0), streaming=True
    )
    # The edited question's article is swapped for the new exchange; what followed it goes.
    return render_template(
        "_edited.html",
        question=QuestionItem(text, edited.question_id),
        message=answer_item(session_id, edited.answer_id, views, latest=True),
        left_out=[i for i in edited.left_out if i != message_id],
        chat=chat,
    )
