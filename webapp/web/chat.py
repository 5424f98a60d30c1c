"""The chat page: sessions, asking (htmx or a plain form), and the answer's HTML stream."""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    flash,
    redirect,
    render_template,
    request,
    stream_with_context,
    url_for,
)
from werkzeug.wrappers import Response as BaseResponse

from ..chat import (
    SessionBusy,
    create_session,
    get_message,
    get_session,
    list_sessions,
    session_messages,
)
from ..packets import PacketStream
from ..store import get_engine
from ._answers import AnswerRenderer, AnswerViews
from ._auth import current_user
from ._extension import chat_service
from ._htmx import htmx_details
from ._sse import sse_response
from ._stream import Phase, answer_stream
from .api import MAX_QUESTION_CHARS
from .auth import login_required

bp = Blueprint("chat", __name__)

BUSY = "This chat is still answering. Wait for the answer to finish."


def _own_session(session_id: str) -> dict[str, Any]:
    found = get_session(get_engine(), current_user().id, session_id)
    if found is None:
        abort(404, "There is no such chat.")
    return found


def _assistant(renderer: AnswerRenderer, message: dict[str, Any],
               session_id: str) -> dict[str, Any]:
    views = renderer.stored(message)
    stream_url = url_for("chat.events", session_id=session_id, message_id=message["id"])
    return {"role": "assistant", "id": message["id"], "views": views, "stream_url": stream_url,
            "streaming": views.answer.streaming}


def _conversation(session_id: str) -> list[dict[str, Any]]:
    user = current_user()
    renderer = AnswerRenderer(get_engine(), user.id)
    shown: list[dict[str, Any]] = []
    for message in session_messages(get_engine(), user.id, session_id):
        if message["role"] == "user":
            shown.append({"role": "user", "id": message["id"], "text": message["content"]})
        else:
            shown.append(_assistant(renderer, message, session_id))
    return shown


@bp.get("/")
@login_required
def index() -> BaseResponse:
    """Open the latest chat, or a new one."""
    sessions = list_sessions(get_engine(), current_user().id)
    if sessions:
        return redirect(url_for("chat.show", session_id=sessions[0]["id"]))
    created = create_session(get_engine(), current_user().id)
    return redirect(url_for("chat.show", session_id=created["id"]))


@bp.post("/chat")
@login_required
def new() -> BaseResponse:
    """Start a new chat (or reuse the latest one while it is still empty)."""
    user = current_user()
    sessions = list_sessions(get_engine(), user.id)
    if sessions and not session_messages(get_engine(), user.id, sessions[0]["id"]):
        return redirect(url_for("chat.show", session_id=sessions[0]["id"]))
    created = create_session(get_engine(), user.id)
    return redirect(url_for("chat.show", session_id=created["id"]))


@bp.get("/chat/<session_id>")
@login_required
def show(session_id: str) -> str:
    """Show one chat: the sidebar of chats, the conversation and the question box."""
    chat = _own_session(session_id)
    messages = _conversation(session_id)
    return render_template(
        "chat.html", chat=chat, messages=messages,
        sessions=list_sessions(get_engine(), current_user().id),
        running=any(m.get("streaming") for m in messages), max_chars=MAX_QUESTION_CHARS,
    )


def _question() -> str | None:
    text = request.form.get("message", "")
    text = text.strip() if isinstance(text, str) else ""
    return text if text and len(text) <= MAX_QUESTION_CHARS else None


@bp.post("/chat/<session_id>/messages")
@login_required
def ask(session_id: str) -> BaseResponse | str | tuple[str, int]:
    """Ask: htmx gets the question and a streaming placeholder; a plain form is redirected."""
    chat = _own_session(session_id)
    user, htmx = current_user(), htmx_details()
    question = _question()
    back = redirect(url_for("chat.show", session_id=session_id))
    if question is None:
        problem = f"Write a message of 1 to {MAX_QUESTION_CHARS} characters."
        if htmx:
            return render_template("_notice.html", message=problem), 400
        flash(problem)
        return back
    try:
        message_id = chat_service().ask(user.id, session_id, question)
    except SessionBusy:
        if htmx:
            return render_template("_notice.html", message=BUSY), 409
        flash(BUSY)
        return back
    if not htmx:
        return back
    renderer = AnswerRenderer(get_engine(), user.id)
    views = renderer.views(message_id, PacketStream(0), streaming=True)
    assistant = {"role": "assistant", "id": message_id, "views": views, "streaming": True,
                 "stream_url": url_for("chat.events", session_id=session_id,
                                       message_id=message_id)}
    # The sidebar is sent along (out of band): the chat's title is now its first question.
    return render_template("_exchange.html", question={"role": "user", "text": question},
                           message=assistant, chat=chat,
                           sessions=list_sessions(get_engine(), user.id))


def _fragments(views: AnswerViews) -> tuple[str, str]:
    return (render_template("_answer.html", answer=views.answer).strip(),
            render_template("_sources.html", sources=views.sources).strip())


@bp.get("/chat/<session_id>/messages/<message_id>/events")
@login_required
def events(session_id: str, message_id: str) -> Response:
    """Stream the answer as HTML: `answer` and `patch` events, then `sources`, then `done`."""
    user = current_user()
    if get_message(get_engine(), user.id, session_id, message_id) is None:
        abort(404, "There is no such message.")
    renderer = AnswerRenderer(get_engine(), user.id)
    renderer.labeler()  # read the account names now, not inside the stream

    def render(stream: PacketStream, phase: Phase, error: str | None,
               start: int) -> AnswerViews:
        return renderer.views(message_id, stream, streaming=phase == "streaming", error=error,
                              interrupted=phase == "interrupted", start=start)

    source = chat_service().events(user.id, session_id, message_id, 0)
    body = stream_with_context(answer_stream(source, render, _fragments))
    return sse_response(body)
