"""The JSON API (docs/specs.md#routes): sessions, questions, and each answer's event stream."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Blueprint, Response, abort, current_app, jsonify, request, url_for
from werkzeug.exceptions import TooManyRequests

from ..chat.conversations import get_message, get_session
from ..chat.leases import SessionBusy, TooManyTurns
from ..chat.pages import (
    MESSAGES_PAGE,
    SESSIONS_PAGE,
    BadCursor,
    BadLimit,
    message_page,
    parse_limit,
    session_page,
)
from ..chat.reading import WorkerStopping
from ..chat.records import MessageRow, SessionRow
from ..chat.sessions import (
    ChatCaps,
    KeyConflict,
    TooManyChats,
    ask_once,
    clean_key,
    clean_title,
    create_chat,
    remove_session,
    rename_session,
)
from ..chat.versions import NotInChat, NotLatest, VersionBusy, show_version, versions_of
from ..services import chat_service
from ..sse import format_comment, format_event
from ..store.app_db import get_engine
from .auth import api_user_required, current_user
from .inputs import BodyError, parse_json
from .responses import is_text
from .stream import counted_sse_response

bp = Blueprint("api", __name__, url_prefix="/api/chat")

MAX_QUESTION_CHARS = 8000
TOO_MANY_TURNS = (
    "You already have as many answers being written as one person may; wait for one to finish."
)
TURN_RETRY_SECONDS = 5


def _json_body() -> dict[str, Any]:
    # Reading the body first makes an oversize one a 413 (a chunked one: `inputs`).
    data = request.get_data(cache=True)
    if not data:
        return {}
    try:
        body = parse_json(data)
    except BodyError as exc:
        abort(400, str(exc))
    if not isinstance(body, dict):
        abort(400, "The body must be a JSON object.")
    return body


NO_SESSION = "No such chat session."


def own_session(session_id: str, missing: str = NO_SESSION) -> SessionRow:
    """Return the signed-in user's chat, or end the request: 404 saying `missing`.

    Another user's chat is missing too: the API and the chat page both ask here.
    """
    found = get_session(get_engine(), current_user().id, session_id)
    if found is None:
        abort(404, missing)
    return found


def own_message(session_id: str, message_id: str, missing: str, *, answer: bool = False) -> None:
    """End the request (404 saying `missing`) unless the message is in the signed-in user's
    chat; with `answer`, unless it is an answer there.

    What this worker saw lately needs no query (`chat/known.py`).
    """
    engine, user_id, service = get_engine(), current_user().id, chat_service()
    role = service.known.role(user_id, session_id, message_id)
    if role is None:
        # Shared with the same look already in flight (the streams of one answer opened at once).
        found: MessageRow | None = service.reader.flights.read(
            ("message", user_id, session_id, message_id),
            lambda: get_message(engine, user_id, session_id, message_id),
        )
        if found is not None:
            role = found.role
            service.known.remember(user_id, session_id, message_id, role)
    if role is None or (answer and role != "assistant"):
        abort(404, missing)


def chat_caps() -> ChatCaps:
    """Return the per-user chat caps from the app's settings."""
    config = current_app.config
    return ChatCaps(int(config["MAX_CHATS_PER_USER"]), int(config["MAX_NEW_CHATS_PER_MINUTE"]))


def new_chat(title: str = "New chat") -> SessionRow:
    """Make a chat for the signed-in user, or end the request: 429 with Retry-After."""
    try:
        return create_chat(get_engine(), current_user().id, title, chat_caps())
    except TooManyChats as exc:
        raise TooManyRequests(str(exc), retry_after=exc.retry_after) from None


@bp.post("/sessions")
@api_user_required
def create() -> tuple[Response, int]:
    """Create a chat session."""
    try:
        title = clean_title(_json_body().get("title", "New chat"))
    except ValueError as exc:
        abort(400, str(exc))
    return jsonify(new_chat(title).as_json()), 201


def _page_args(default: int) -> tuple[int, str | None]:
    try:
        limit = parse_limit(request.args.get("limit"), default)
    except BadLimit as exc:
        abort(400, str(exc))
    return limit, request.args.get("before") or None


@bp.get("/sessions")
@api_user_required
def index() -> Response:
    """List the user's sessions, a page at a time (`limit`, `before`), newest first."""
    limit, before = _page_args(SESSIONS_PAGE)
    try:
        page = session_page(get_engine(), current_user().id, limit, before)
    except BadCursor as exc:
        abort(400, str(exc))
    older = url_for("api.index", limit=limit, before=page.before) if page.before else None
    return jsonify(sessions=[s.as_json() for s in page.rows], next=older)


@bp.get("/sessions/<session_id>")
@api_user_required
def show(session_id: str) -> Response:
    """Return a session with its latest messages (a page: `limit`, `before`), oldest first."""
    found = own_session(session_id)
    limit, before = _page_args(MESSAGES_PAGE)
    try:
        page = message_page(get_engine(), current_user().id, session_id, limit, before)
    except BadCursor as exc:
        abort(400, str(exc))
    older = (
        url_for("api.show", session_id=session_id, limit=limit, before=page.before)
        if page.before
        else None
    )
    return jsonify({**found.as_json(), "messages": _with_versions(page.rows), "next": older})


def _with_versions(rows: list[MessageRow]) -> list[dict[str, Any]]:
    """Return the messages' JSON; each answer lists its versions' ids, oldest first."""
    found = versions_of(get_engine(), current_user().id, rows)
    return [
        {**m.as_json(), "versions": list(found[m.id].ids)} if m.id in found else m.as_json()
        for m in rows
    ]


@bp.patch("/sessions/<session_id>")
@api_user_required
def rename(session_id: str) -> Response:
    """Rename a session: `{"title": "..."}`, trimmed, 1 to 80 characters."""
    own_session(session_id)
    try:
        title = clean_title(_json_body().get("title"))
    except ValueError as exc:
        abort(400, str(exc))
    renamed = rename_session(get_engine(), current_user().id, session_id, title)
    if renamed is None:  # deleted meanwhile
        abort(404, NO_SESSION)
    return jsonify(renamed.as_json())


@bp.delete("/sessions/<session_id>")
@api_user_required
def delete(session_id: str) -> Response:
    """Delete a session with everything in it; a running answer is stopped first."""
    own_session(session_id)
    if not remove_session(chat_service(), current_user().id, session_id):
        abort(404, NO_SESSION)
    return Response(status=204)


def _idempotency_key() -> str | None:
    raw = request.headers.get("Idempotency-Key")
    if raw is None:
        return None
    try:
        return clean_key(raw)
    except ValueError as exc:
        abort(400, str(exc))


BUSY = "This session is still answering; wait for the answer to finish."


def _message_text() -> str:
    """Return the body's `message`, trimmed, or end the request: 400 saying what is wrong."""
    message = _json_body().get("message")
    if not isinstance(message, str) or not message.strip():
        abort(400, "`message` must be a non-empty string.")
    if len(message) > MAX_QUESTION_CHARS:
        abort(400, f"`message` is longer than {MAX_QUESTION_CHARS} characters.")
    if not is_text(message):
        abort(400, "`message` is not valid text.")
    return message.strip()


@bp.post("/sessions/<session_id>/messages")
@api_user_required
def ask(session_id: str) -> tuple[Response, int]:
    """Ask a question; the turn runs in the background. A repeated Idempotency-Key asks once."""
    own_session(session_id)
    key = _idempotency_key()
    message = _message_text()
    try:
        asked = ask_once(chat_service(), current_user().id, session_id, message, key)
    except SessionBusy:
        abort(409, BUSY)
    except TooManyTurns:
        raise TooManyRequests(TOO_MANY_TURNS, retry_after=TURN_RETRY_SECONDS) from None
    except KeyConflict:
        abort(422, "This Idempotency-Key was already used for another question.")
    stream_url = url_for("api.stream", session_id=session_id, message_id=asked.message_id)
    return jsonify(message_id=asked.message_id, stream_url=stream_url), 202


@bp.post("/sessions/<session_id>/messages/<message_id>/cancel")
@api_user_required
def cancel(session_id: str, message_id: str) -> tuple[Response, int]:
    """Stop an answer being written; it keeps what it wrote, with status `cancelled`."""
    own_message(session_id, message_id, "No such answer.", answer=True)
    if not chat_service().cancel(current_user().id, session_id, message_id):
        abort(409, "This answer is not being written any more.")
    return jsonify(status="cancelled"), 202


NOT_LATEST = (
    "Only the chat's latest answer can be regenerated; edit its question to ask again from there."
)
LEFT_OUT = "This message is no longer in the chat: a question before it was edited."


@contextmanager
def _asked_in_place(missing: str) -> Iterator[None]:
    """Answer a Regenerate or an Edit that can't be asked: 404 `missing`, 409, or 429."""
    try:
        yield
    except LookupError:
        abort(404, missing)
    except NotLatest:
        abort(409, NOT_LATEST)
    except NotInChat:
        abort(409, LEFT_OUT)
    except SessionBusy:
        abort(409, BUSY)
    except TooManyTurns:
        raise TooManyRequests(TOO_MANY_TURNS, retry_after=TURN_RETRY_SECONDS) from None


@bp.post("/sessions/<session_id>/messages/<message_id>/regenerate")
@api_user_required
def regenerate(session_id: str, message_id: str) -> tuple[Response, int]:
    """Write a new version of the latest answer in its place; its question is not repeated."""
    own_session(session_id)
    own_message(session_id, message_id, "No such answer.", answer=True)
    with _asked_in_place("No such answer."):
        version = chat_service().regenerate(current_user().id, session_id, message_id)
    stream_url = url_for("api.stream", session_id=session_id, message_id=version)
    return jsonify(message_id=version, stream_url=stream_url), 202


@bp.post("/sessions/<session_id>/messages/<message_id>/edit")
@api_user_required
def edit(session_id: str, message_id: str) -> tuple[Response, int]:
    """Ask `{"message": "..."}` in place of a question; what followed it leaves the chat."""
    own_session(session_id)
    own_message(session_id, message_id, "No such question.")
    text = _message_text()
    with _asked_in_place("No such question."):
        edited = chat_service().edit(current_user().id, session_id, message_id, text)
    stream_url = url_for("api.stream", session_id=session_id, message_id=edited.answer_id)
    body = {"question_id": edited.question_id, "message_id": edited.answer_id}
    return jsonify(**body, left_out=list(edited.left_out), stream_url=stream_url), 202


@bp.post("/sessions/<session_id>/messages/<message_id>/show")
@api_user_required
def show_a_version(session_id: str, message_id: str) -> Response:
    """Show this version of an answer in its place, from now on; answer with it."""
    own_session(session_id)
    try:
        shown = show_version(get_engine(), current_user().id, session_id, message_id)
    except LookupError:
        abort(404, "No such answer.")
    except NotInChat:
        abort(409, LEFT_OUT)
    except VersionBusy:
        abort(409, "A version of this answer is being written; wait for it to finish.")
    return jsonify(_with_versions([shown])[0])


MAX_EVENT_ID = 2**63 - 1  # what the database's integer holds


def _after() -> int:
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id") or "0"
    if not (raw.isascii() and raw.isdigit()):
        return 0
    # The length first: int() refuses a string of over 4,300 digits with an error of its own.
    if len(raw.lstrip("0")) > len(str(MAX_EVENT_ID)) or int(raw) > MAX_EVENT_ID:
        abort(400, "Last-Event-ID is not an event id of this stream.")
    return int(raw)


@bp.get("/sessions/<session_id>/messages/<message_id>/stream")
@api_user_required
def stream(session_id: str, message_id: str) -> Response:
    """Stream the answer's events, each with its `id:`; resume with Last-Event-ID."""
    own_message(session_id, message_id, "No such message.")
    user, service = current_user(), chat_service()
    batches = service.event_batches(user.id, session_id, message_id, _after())

    def body() -> Iterator[str]:
        yield format_comment("open")  # the headers go out now, even if the answer is quiet
        try:
            for batch in batches:
                # Events stored together go out in one write.
                yield "".join(
                    format_event(e.data, event=e.event, id=e.seq) for e in batch
                ) or format_comment("heartbeat")
        except WorkerStopping:
            return  # ends without `done`: the client resumes on a live worker by Last-Event-ID

    return counted_sse_response(service, user.id, body())
