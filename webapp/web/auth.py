"""Who is asking and how they prove it: bearer tokens for API clients, the session cookie
for the browser, sign-in and out, CSRF on every form, sign-in throttling.

A browser that signs in gets a device cookie (`DEVICE_COOKIE`, signed, sent only to /login):
the users it signed in as, each with a random nonce. Its later sign-ins as one of them count
against that device, not the username, so guessing a user's password elsewhere never locks
that user out of their own browsers (`webapp/store/throttle.py`, OWASP's device cookies).
"""

from __future__ import annotations

import math
import secrets
import threading
from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar
from urllib.parse import urlsplit

from cachetools import TTLCache
from flask import (
    Blueprint,
    Flask,
    Response,
    abort,
    current_app,
    g,
    has_request_context,
    jsonify,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError, CSRFProtect
from itsdangerous import BadData, URLSafeTimedSerializer
from werkzeug.wrappers import Response as BaseResponse

from ..services import services
from ..store.app_db import get_engine
from ..store.throttle import FailureLog, SignInThrottle
from ..store.users import (
    User,
    authenticate,
    end_sessions,
    hash_token,
    session_version,
    user_for_session,
    user_for_token,
)
from .htmx import htmx_details

P = ParamSpec("P")
R = TypeVar("R")

bp = Blueprint("auth", __name__)
csrf = CSRFProtect()

BAD_LOGIN = "Incorrect username or password."
DEVICE_COOKIE = "device"
DEVICE_SECONDS = 365 * 24 * 3600  # a device cookie is good for a year after its sign-in
DEVICE_USERS = 5  # the users one browser's device cookie remembers, latest first
# Only this origin: no CDN, font or tracker, and nothing inline that an injection could use.


# Who each API token names, remembered per worker process for a minute: a token is made for
# one user and never moves to another, so this spares an API client's every request its
# lookup (a turn is three requests). Only tokens that name a user are kept, under their hash.
TOKEN_USERS_KEPT = 4096
TOKEN_USERS_SECONDS = 60
_token_users: TTLCache[tuple[str, str], User] = TTLCache(TOKEN_USERS_KEPT, TOKEN_USERS_SECONDS)
_token_users_lock = threading.Lock()


def _user_for_token(token: str) -> User | None:
    engine = get_engine()
    key = (engine.url.render_as_string(hide_password=True), hash_token(token))
    with _token_users_lock:
        known = _token_users.get(key)
    if known is not None:
        return known
    found = user_for_token(engine, token)
    if found is not None:
        with _token_users_lock:
            _token_users[key] = found
    return found


def bearer_user() -> User | None:
    """Return the user whose API token the request carries, if any (looked up once)."""
    if "bearer_user" not in g:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        found = None
        if scheme.lower() == "bearer" and token.strip():
            found = _user_for_token(token.strip())
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


def _check_csrf() -> None:
    # Only the JSON API skips it, and only for a valid bearer token: such a client sends no
    # cookie a third party could ride on. Browser form routes check it whatever comes along.
    if not current_app.config.get("WTF_CSRF_ENABLED", True):
        return
    if request.path.startswith("/api/") and bearer_user() is not None:
        return
    csrf.protect()


def _csrf_failed(error: CSRFError) -> tuple[str | Response, int]:
    message = "This form has expired. Reload the page and try again."
    if request.path.startswith("/api/"):  # an API client reads errors as JSON, this one too
        return jsonify(error=message), 400
    return render_template("error.html", title="Please try again", message=message), 400


class _SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, its cookie `Secure` whenever the request came over HTTPS
    (directly or through a trusted proxy); plain HTTP on localhost keeps working."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return super().get_cookie_secure(app) or (has_request_context() and request.is_secure)


def init_app(app: Flask) -> None:
    """Set the session cookie flags and CSRF protection."""
    app.session_interface = _SessionInterface()
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


def _failure_log() -> FailureLog:
    """Return where failed sign-ins are counted: Redis when `REDIS_URL` is set, else the
    app's database; either way every worker and host shares the counts."""
    return services().sign_in_failures


def too_many_failures(retry_after: int) -> str:
    """Say, in plain words, that sign-in is paused and for how long."""
    minutes = max(1, math.ceil(retry_after / 60))
    wait = "1 minute" if minutes == 1 else f"{minutes} minutes"
    return f"Too many failed sign-ins. Wait {wait}, then try again."


def _device_signer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(str(current_app.secret_key), salt="sign-in-device")


def _known_devices() -> list[tuple[str, str]]:
    """Return the (username, nonce) pairs of the browser's device cookie, if it is valid."""
    raw = request.cookies.get(DEVICE_COOKIE)
    if not raw:
        return []
    try:
        value = _device_signer().loads(raw, max_age=DEVICE_SECONDS)
    except BadData:
        return []
    if not isinstance(value, list):
        return []
    return [
        (pair[0], pair[1])
        for pair in value[:DEVICE_USERS]
        if isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, str) for v in pair)
    ]


def _device_for(username: str) -> str | None:
    """Return the nonce of the browser's device cookie for `username`, if it has one."""
    return next((nonce for name, nonce in _known_devices() if name == username), None)


def _remember_device(response: BaseResponse, username: str) -> None:
    """Give the browser a fresh device nonce for `username`, keeping its other users'."""
    others = [[name, nonce] for name, nonce in _known_devices() if name != username]
    devices = [[username, secrets.token_hex(16)], *others][:DEVICE_USERS]
    response.set_cookie(
        DEVICE_COOKIE,
        _device_signer().dumps(devices),
        max_age=DEVICE_SECONDS,
        path=url_for("auth.sign_in"),
        secure=request.is_secure,
        httponly=True,
        samesite="Lax",
    )


@bp.post("/login")
def sign_in() -> tuple[str, int] | tuple[str, int, dict[str, str]] | BaseResponse:
    """Sign in; a wrong username and a wrong password get the same answer."""
    username = request.form.get("username", "").strip()
    next_url = request.form.get("next", "")
    throttle = SignInThrottle(
        _failure_log(), address_limit=current_app.config["MAX_SIGN_IN_FAILURES_PER_ADDRESS"]
    )
    # ProxyFix sets remote_addr from X-Forwarded-For when a trusted proxy sent the request.
    attempt = throttle.attempt(username, request.remote_addr, _device_for(username))
    if attempt.retry_after is not None:
        # Refused before the password is looked at: no hashing cost, and nothing learnt.
        message = too_many_failures(attempt.retry_after)
        page = render_template("login.html", error=message, username=username, next=next_url)
        return page, 429, {"Retry-After": str(attempt.retry_after)}
    try:
        user = authenticate(get_engine(), username, request.form.get("password", ""))
    except BaseException:
        throttle.forget(attempt)  # an error is not a wrong password
        raise
    if user is None:  # the attempt stays counted: a failure
        page = render_template("login.html", error=BAD_LOGIN, username=username, next=next_url)
        return page, 401
    throttle.forget(attempt)
    session.clear()
    session["user_id"] = user.id
    session["session_version"] = session_version(get_engine(), user.id)
    response = redirect(safe_next(next_url))
    _remember_device(response, user.username)
    return response


@bp.post("/logout")
def logout() -> BaseResponse:
    """Sign out: the user's sessions end on the server, so no copy of a cookie still works."""
    user = session_user()
    if user is not None:
        end_sessions(get_engine(), user.id)
    session.clear()
    return redirect(url_for("auth.login"))
