"""`GET /favicon/<host>`: a source's icon, fetched by the server (never the browser), cached."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from flask import Blueprint, Response, current_app

from ..services import services
from .auth import login_required

bp = Blueprint("favicon", __name__)

ICON_MAX_AGE = 24 * 3600
GENERIC_MAX_AGE = 3600
# An icon is an image and nothing else, even when opened on its own.
_ICON_POLICY = "default-src 'none'; img-src 'self'; style-src 'none'; sandbox"


@cache
def _generic_bytes(static_folder: str) -> bytes:
    return (Path(static_folder) / "icons" / "generic.svg").read_bytes()


def _icon_response(body: bytes, content_type: str, max_age: int) -> Response:
    response = Response(body, mimetype=content_type)
    response.cache_control.public = True
    response.cache_control.max_age = max_age
    response.headers["Content-Security-Policy"] = _ICON_POLICY
    return response


@bp.get("/favicon/<path:host>")
@login_required
def icon(host: str) -> Response:
    """Serve the host's icon, or the generic icon for anything refused or missing."""
    # With FAVICON_FETCH off there is no fetcher: nothing is resolved or fetched.
    favicons = services().favicons
    found = favicons.icon(host) if favicons is not None else None
    if found is None:
        generic = _generic_bytes(current_app.static_folder or "static")
        return _icon_response(generic, "image/svg+xml", GENERIC_MAX_AGE)
    return _icon_response(found.body, found.content_type, ICON_MAX_AGE)
