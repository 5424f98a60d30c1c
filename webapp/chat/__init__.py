"""Chat sessions and turns: persistence, the background runner, and the tools per user."""

from __future__ import annotations

from ..tools.runner import LocalTools
from .service import ChatService
from .sessions import (
    KEY_CHARS,
    Asked,
    KeyConflict,
    ask_once,
    clean_key,
    clean_title,
    delete_session,
    question_before,
    remove_session,
    rename_session,
)
from .store import (
    TITLE_CHARS,
    LeaseLost,
    SessionBusy,
    StoredEvent,
    TooManyTurns,
    create_session,
    find_message,
    get_message,
    get_session,
    list_sessions,
    session_messages,
)
from .tables import metadata
from .wakeups import Wakeups, listener_for

__all__ = [
    "KEY_CHARS",
    "TITLE_CHARS",
    "Asked",
    "ChatService",
    "KeyConflict",
    "LeaseLost",
    "LocalTools",
    "Wakeups",
    "SessionBusy",
    "TooManyTurns",
    "StoredEvent",
    "ask_once",
    "clean_key",
    "clean_title",
    "create_session",
    "find_message",
    "delete_session",
    "get_message",
    "get_session",
    "list_sessions",
    "listener_for",
    "metadata",
    "question_before",
    "remove_session",
    "rename_session",
    "session_messages",
]
