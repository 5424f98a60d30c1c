"""Sign in and out with the session cookie; CSRF on every form; security headers."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.wrappers import Response as BaseResponse

from ..store import authenticate, get_engine
from ._auth import bearer_user, session_user
from ._htmx import htmx_details

P = ParamSpec("P")
R = TypeVar("R")

bp = Blueprint("auth", __name__)
csrf = CSRFProtect()

BAD_LOGIN = "Incorrect username or password."
# Only this origin: no CDN, font or tracker, and nothing inline that an injection could use.


def _check_csrf() -> None:
    # Only the JSON API skips it, and only for a valid bearer token: such a client sends no
    # cookie a third party could ride on. Browser form routes check it whatever comes along.
    if not current_app.config.get("WTF_CSRF_ENABLED", True):
        return
    if request.path.startswith("/api/") and bearer_user() is not None:
        return
    csrf.protect()


def _csrf_failed(error: CSRFError) -> tuple[str, int]:
    message = "This form has expired. Reload the page and try again."
    return render_template("error.html", title="Please try again", message=message), 400


def init_app(app: Flask) -> None:
    """Set the session cookie flags and CSRF protection."""
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    # Flask's default is None (no attribute): Lax keeps the cookie off cross-site POSTs.
    app.config["SESSION_COOKIE_SAMESITE"] = app.config.get("SESSION_COOKIE_SAMESITE") or "Lax"
    # Checked by `_check_csrf` below, so that bearer-token API calls can be told apart.
    app.config["WTF_CSRF_CHECK_DEFAULT"] = False
    # A chat page may stay open for hours: the token lives as long as the session.
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", None)
    csrf.init_app(app)
    app.before_request(_check_csrf)
    app.register_error_handler(CSRFError, _csrf_failed)


def _wants_event_stream() -> bool:
    return "text/event-stream" in request.headers.get("Accept", "").lower()


def login_required(view: Callable[P, R]) -> Callable[P, R | BaseResponse]:
    """Send a visitor who is not signed in to the sign-in page."""

    @wraps(view)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R | BaseResponse:
        user = session_user()
        if user is None:
            if htmx_details():
                return Response(status=401, headers={"HX-Redirect": url_for("auth.login")})
            if _wants_event_stream():
                # An EventSource follows a redirect to the sign-in page and fails on its HTML
                # only after loading it; a plain 401 tells the page at once to stop.
                return Response(status=401)
            target = request.full_path if request.method == "GET" else None
            return redirect(url_for("auth.login", next=target))
        g.user = user
        return view(*args, **kwargs)

    return wrapped


def safe_next(target: str | None) -> str:
    """Return `target` when it is a path on this site, else the chat page."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return url_for("chat.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or any(ch in target for ch in "\\\r\n\t"):
        return url_for("chat.index")
    return target.removesuffix("?")


@bp.get("/login")
def login() -> str | BaseResponse:
    """Show the sign-in form."""
    if session_user() is not None:
        return redirect(safe_next(request.args.get("next")))
    return render_template("login.html", next=request.args.get("next", ""))


@bp.post("/login")
def sign_in() -> tuple[str, int] | BaseResponse:
    """Sign in; a wrong username and a wrong password get the same answer."""
    username = request.form.get("username", "").strip()
    user = authenticate(get_engine(), username, request.form.get("password", ""))
    next_url = request.form.get("next", "")
    if user is None:
        page = render_template("login.html", error=BAD_LOGIN, username=username, next=next_url)
        return page, 401
    session.clear()
    session["user_id"] = user.id
    return redirect(safe_next(next_url))


@bp.post("/logout")
def logout() -> BaseResponse:
    """Sign out."""
    session.clear()
    return redirect(url_for("auth.login"))
