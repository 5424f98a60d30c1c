"""Who is asking: a bearer token for API clients, the session cookie for the browser."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

from flask import abort, g, request, session

from ..store import User, get_engine, user_for_session, user_for_token

P = ParamSpec("P")
R = TypeVar("R")


def bearer_user() -> User | None:
    """Return the user whose API token the request carries, if any (looked up once)."""
    if "bearer_user" not in g:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        found = None
        if scheme.lower() == "bearer" and token.strip():
            found = user_for_token(get_engine(), token.strip())
        g.bearer_user = found
    user: User | None = g.bearer_user
    return user


def session_user() -> User | None:
    """Return the user signed in with the session cookie, if the session has not been ended."""
    user_id = session.get("user_id")
    # A cookie from before session versions existed is at version 0 until its user signs out.
    version = session.get("session_version", 0)
    return user_for_session(get_engine(), user_id, version) if isinstance(user_id, int) else None


def api_user_required(view: Callable[P, R]) -> Callable[P, R]:
    """Answer 401 unless the request names a user by token (or a browser session)."""

    @wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        user = bearer_user() or session_user()
        if user is None:
            abort(401)
        g.user = user
        return view(*args, **kwargs)

    return wrapped


def current_user() -> User:
    """Return the user the view was authorised for."""
    user = g.get("user")
    assert isinstance(user, User), "the view is missing its login decorator"
    return user
