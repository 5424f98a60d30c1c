"""The chat page: sessions, asking (htmx or a plain form), and the answer's HTML stream.

Every form works as a plain form (it redirects back) and, with htmx, in place: ask, Stop an
answer, rename and delete a chat (Regenerate, versions and Edit: `webapp/web/versions.py`).
"""

from __future__ import annotations

import uuid
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
from flask.blueprints import BlueprintSetupState
from flask_wtf.csrf import generate_csrf
from werkzeug.wrappers import Response as BaseResponse

from ..chat.conversations import create_session, find_message, get_session
from ..chat.leases import SessionBusy, TooManyTurns
from ..chat.pages import CONVERSATION_PAGE, BadCursor, Page, latest_session, message_page
from ..chat.records import TITLE_CHARS, MessageRow, SessionRow
from ..chat.sessions import (
    KEY_CHARS,
    Asked,
    KeyConflict,
    ask_once,
    clean_key,
    clean_title,
    remove_session,
    rename_session,
)
from ..chat.versions import asked_question
from ..packets.state import PacketStream
from ..services import chat_service
from ..store.app_db import get_engine
from .answers import AnswerRenderer, AnswerViews
from .api import MAX_QUESTION_CHARS, TOO_MANY_TURNS, new_chat, own_message, own_session
from .auth import current_user, login_required
from .back import back_to_answer
from .chats import sidebar
from .conversation import AnswerItem, QuestionItem, answer_actions, answer_item, conversation
from .history import by_day
from .htmx import htmx_details
from .openers import FILE_NOTICE
from .responses import is_text
from .snapshots import draw_answers
from .stream import Phase, answer_stream, counted_sse_response
from .version_nav import answer_place

bp = Blueprint("chat", __name__)
# The pages an answer opens draw `Back to the answer` with it (templates/_back_to_answer.html).
bp.add_app_template_global(back_to_answer)
bp.add_app_template_filter(by_day, "by_day")


@bp.record_once
def _file_notice(state: BlueprintSetupState) -> None:
    # A file's source row (templates/_macros.html) says what its inline citation says.
    state.app.jinja_env.globals["file_notice"] = FILE_NOTICE


BUSY = "This chat is still answering. Wait for the answer to finish."
NO_CHAT = "There is no such chat."
NO_ANSWER = "There is no such answer."


def new_key() -> str:
    """Return a fresh idempotency key for one rendered form."""
    return uuid.uuid4().hex


@bp.app_context_processor  # the versions blueprint draws these forms too
def _chat_globals() -> dict[str, Any]:
    return {"idempotency_key": new_key, "title_chars": TITLE_CHARS}


def _page(session_id: str) -> Page[MessageRow]:
    """Return the page of the chat a request asks for: the latest, or older than `?before=`."""
    before, user_id = request.args.get("before"), current_user().id
    try:
        return message_page(get_engine(), user_id, session_id, CONVERSATION_PAGE, before)
    except BadCursor:
        abort(400, "That link to earlier messages is not one of this chat's.")


@bp.get("/")
@login_required
def index() -> BaseResponse:
    """Open the latest chat, or a new one."""
    latest = latest_session(get_engine(), current_user().id)
    if latest is not None:
        return redirect(url_for("chat.show", session_id=latest.id))
    created = create_session(get_engine(), current_user().id)
    return redirect(url_for("chat.show", session_id=created.id))


@bp.post("/chat")
@login_required
def new() -> BaseResponse:
    """Start a new chat (or reuse the latest one while it is still empty)."""
    user = current_user()
    latest = latest_session(get_engine(), user.id)
    if latest is not None and not message_page(get_engine(), user.id, latest.id, 1, None).rows:
        return redirect(url_for("chat.show", session_id=latest.id))
    return redirect(url_for("chat.show", session_id=new_chat().id))


@bp.get("/answers/<message_id>/sources")
@login_required
def sources(message_id: str) -> str:
    """An answer's sources as a page of their own: the `Sources · N` bar without JavaScript."""
    user = current_user()
    message = find_message(get_engine(), user.id, message_id)
    if message is None or message.role != "assistant":
        abort(404, NO_ANSWER)
    views = draw_answers(AnswerRenderer(get_engine(), user.id), [message])[message_id]
    if not views.sources.visible:
        abort(404, "This answer has no sources to show yet.")
    back = _message_url(message.session_id, message_id)
    return render_template("sources.html", sources=views.sources, back=back)


@bp.get("/chat/<session_id>")
@login_required
def show(session_id: str) -> str:
    """Show a chat's sidebar, latest messages (`?before=`: older; htmx: alone) and question box."""
    return chat_page(session_id)


def chat_page(session_id: str, editing: str | None = None) -> str:
    """Draw one chat's page (or, for htmx, an older page alone); the question `editing` as
    its Edit form."""
    chat, page = own_session(session_id, NO_CHAT), _page(session_id)
    older = "before" in request.args
    messages = conversation(session_id, page.rows, latest_page=not older)
    if older and htmx_details():
        return render_template("_earlier.html", chat=chat, messages=messages, earlier=page.before)
    return render_template(
        "chat.html",
        chat=chat,
        messages=messages,
        earlier=page.before,
        older=older,
        **sidebar(session_id, request.args.get("chats_before") or None),
        running=any(isinstance(m, AnswerItem) and m.streaming for m in messages),
        max_chars=MAX_QUESTION_CHARS,
        editing=editing,
    )


def _question() -> str | None:
    text = request.form.get("message", "")
    text = text.strip() if isinstance(text, str) else ""
    return text if text and len(text) <= MAX_QUESTION_CHARS and is_text(text) else None


def _form_key() -> str | None:
    raw = request.form.get("idempotency_key") or ""
    try:
        return clean_key(raw[: KEY_CHARS + 1]) if raw else None
    except ValueError:
        return None  # not one of ours: ask without it


def _message_url(session_id: str, message_id: str) -> str:
    return url_for("chat.show", session_id=session_id, _anchor=f"message-{message_id}")


def _refused(problem: str, status: int, back: BaseResponse) -> BaseResponse | tuple[str, int]:
    """Say what went wrong: a notice for htmx, a flashed one after the redirect otherwise."""
    if htmx_details():
        return render_template("_notice.html", message=problem), status
    flash(problem)
    return back


def _send(chat: SessionRow, question: str) -> BaseResponse | str | tuple[str, int]:
    """Ask once per form key: htmx gets the exchange, a plain form is redirected back."""
    session_id, user, service = chat.id, current_user(), chat_service()
    back = redirect(url_for("chat.show", session_id=session_id))
    try:
        try:
            asked = ask_once(service, user.id, session_id, question, _form_key())
        except KeyConflict:
            # A page kept from before (the back button) sent a new question with its old
            # key: the person means the new question.
            asked = Asked(service.ask(user.id, session_id, question), False)
    except SessionBusy:
        return _refused(BUSY, 409, back)
    except TooManyTurns:
        return _refused(TOO_MANY_TURNS, 429, back)
    if asked.repeated:
        # The same form again (a double submit, a resubmitted page): show what it asked.
        where = _message_url(session_id, asked.message_id)
        if htmx_details():
            return Response(status=204, headers={"HX-Redirect": where, "HX-Refresh": "true"})
        return redirect(where)
    if not htmx_details():
        return back
    message_id = asked.message_id
    renderer = AnswerRenderer(get_engine(), user.id)
    views = renderer.views(message_id, PacketStream(0), streaming=True)
    question_id = asked_question(get_engine(), user.id, session_id, message_id) or ""
    # The sidebar is sent along (out of band): the chat's title is now its first question.
    return render_template(
        "_exchange.html",
        question=QuestionItem(question, question_id),
        message=answer_item(session_id, message_id, views, latest=True),
        chat=chat,
        **sidebar(chat.id),
    )


@bp.post("/chat/<session_id>/messages")
@login_required
def ask(session_id: str) -> BaseResponse | str | tuple[str, int]:
    """Ask: htmx gets the question and a streaming placeholder; a plain form is redirected."""
    chat = own_session(session_id, NO_CHAT)
    question = _question()
    if question is None:
        problem = f"Write a message of 1 to {MAX_QUESTION_CHARS} characters."
        return _refused(problem, 400, redirect(url_for("chat.show", session_id=session_id)))
    return _send(chat, question)


@bp.post("/chat/<session_id>/messages/<message_id>/cancel")
@login_required
def cancel(session_id: str, message_id: str) -> BaseResponse:
    """Stop an answer being written; it keeps what it wrote, and the stream shows it stopped."""
    own_message(session_id, message_id, NO_ANSWER, answer=True)
    # An answer that has just finished needs no stopping: either way the page shows its end.
    chat_service().cancel(current_user().id, session_id, message_id)
    if htmx_details():
        return Response(status=204)
    return redirect(_message_url(session_id, message_id))


def _open_chat() -> str | None:
    """Return the chat the page that posted shows (a form's `open` field), if it is theirs."""
    open_id = request.form.get("open") or ""
    if open_id and get_session(get_engine(), current_user().id, open_id) is not None:
        return open_id
    return None


def _sidebar(open_id: str | None, page_title: str | None = None) -> str:
    return render_template(
        "_sessions.html",
        chat={"id": open_id or ""},
        page_title=page_title,
        **sidebar(open_id),
    )


@bp.post("/chat/<session_id>/rename")
@login_required
def rename(session_id: str) -> BaseResponse | str | tuple[str, int]:
    """Rename a chat: htmx gets the sidebar again; a plain form is redirected back."""
    own_session(session_id, NO_CHAT)
    open_id = _open_chat()
    back = redirect(url_for("chat.show", session_id=open_id or session_id))
    try:
        title = clean_title(request.form.get("title"))
    except ValueError as exc:
        return _refused(str(exc), 400, back)
    rename_session(get_engine(), current_user().id, session_id, title)
    if not htmx_details():
        return back
    # Renaming the open chat renames the page too (htmx takes a top-level <title>).
    return _sidebar(open_id, title if open_id == session_id else None)


@bp.post("/chat/<session_id>/delete")
@login_required
def delete(session_id: str) -> BaseResponse | str:
    """Delete a chat (its running answer stops first); the open one gives way to another."""
    deleted = own_session(session_id, NO_CHAT)
    user = current_user()
    open_id = _open_chat()
    remove_session(chat_service(), user.id, session_id)
    if open_id is not None and open_id != session_id:
        if htmx_details():
            return _sidebar(open_id)
        return redirect(url_for("chat.show", session_id=open_id))
    target = latest_session(get_engine(), user.id) or create_session(get_engine(), user.id)
    where = url_for("chat.show", session_id=target.id)
    if open_id == session_id:  # the page goes elsewhere: say where
        flash(f"Deleted “{deleted.title}”. You are now in “{target.title}”.")
    if htmx_details():
        return Response(status=204, headers={"HX-Redirect": where})
    return redirect(where)


@bp.get("/chat/<session_id>/messages/<message_id>/events")
@login_required
def events(session_id: str, message_id: str) -> Response:
    """Stream the answer as HTML: `answer` and `patch` events, then `sources`, then `done`."""
    own_message(session_id, message_id, "There is no such message.")
    user = current_user()
    renderer = AnswerRenderer(get_engine(), user.id)
    renderer.labeler()  # read the account names now, not inside the stream
    # Only the chat's latest answer offers Regenerate; versions show once it has finished.
    latest, nav = answer_place(get_engine(), user.id, session_id, message_id)
    actions = answer_actions(session_id, message_id, latest)
    generate_csrf()  # the buttons' token, made now: the session must not change in the stream

    def render(stream: PacketStream, phase: Phase, error: str | None, start: int) -> AnswerViews:
        return renderer.views(
            message_id,
            stream,
            streaming=phase == "streaming",
            error=error,
            interrupted=phase == "interrupted",
            start=start,
        )

    def fragments(views: AnswerViews) -> tuple[str, str]:
        return (
            render_template(
                "_answer.html", answer=views.answer, actions=actions, versions=nav
            ).strip(),
            render_template("_sources.html", sources=views.sources).strip(),
        )

    service = chat_service()
    source = service.events(user.id, session_id, message_id, 0)
    body = stream_with_context(answer_stream(source, render, fragments))
    return counted_sse_response(service, user.id, body)
