"""The app's chat service for the views, from the app's services (`webapp.services`)."""

from __future__ import annotations

from flask import Flask

from ..chat.service import ChatService
from ..services import installed, services


def owns(app: Flask) -> bool:
    """Tell whether `app` is one of this package's apps (it has services)."""
    return installed(app)


def chat_service(app: Flask | None = None) -> ChatService:
    """Return the app's chat service, taking over turns a dead worker left behind."""
    service = services(app).chat
    service.resume_stale_once()
    return service
