"""Chat sessions and turns: persistence, the background runner, and the tools per user."""

from __future__ import annotations

from ._service import ChatService
from ._store import (
    LeaseLost,
    SessionBusy,
    StoredEvent,
    create_session,
    get_message,
    get_session,
    list_sessions,
    session_messages,
)
from ._tables import metadata
from ._tools import LocalTools
from ._wakeups import Wakeups, listener_for

__all__ = [
    "ChatService",
    "LeaseLost",
    "LocalTools",
    "Wakeups",
    "SessionBusy",
    "StoredEvent",
    "create_session",
    "get_message",
    "get_session",
    "list_sessions",
    "listener_for",
    "metadata",
    "session_messages",
]
