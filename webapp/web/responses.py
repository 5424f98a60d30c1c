"""What every response carries, whatever blueprint made it: security headers, no caching of
a user's data, and errors in the shape the client reads (JSON under /api/, a page elsewhere).

Error handlers live here, at app level, because a routing error (404, 405) happens before
any blueprint is chosen.
"""

from __future__ import annotations

from flask import Flask, Response, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

# Pages load only this site's own scripts, styles and images (favicons via /favicon/).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)
# Sent on HTTPS only (a plain-HTTP localhost must not be pinned to HTTPS): a year, this host.
STRICT_TRANSPORT_SECURITY = "max-age=31536000"
# Shared caches may keep these: they show nobody's data.
CACHEABLE_PREFIXES = ("/static/", "/favicon/")


def is_text(value: str) -> bool:
    """Tell whether `value` can be stored and shown: no lone surrogates, no NUL."""
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _headers(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    if request.is_secure:
        response.headers.setdefault("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY)
    if not request.path.startswith(CACHEABLE_PREFIXES):
        # Financial pages and answers: never kept by the browser (Back reloads) or a proxy.
        response.headers["Cache-Control"] = "no-store"
    return response


def _http_error(error: HTTPException) -> HTTPException | Response:
    if error.code is None or error.code < 400:
        return error
    if request.path.startswith("/api/"):
        response = jsonify(error=error.description or error.name)
        response.status_code = error.code
        for name, value in error.get_headers():
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value  # Allow, Retry-After, WWW-Authenticate
        return response
    page = render_template("error.html", title=error.name, message=error.description)
    kept = [(n, v) for n, v in error.get_headers() if n.lower() in ("allow", "retry-after")]
    return Response(page, error.code, kept)


def init_app(app: Flask) -> None:
    """Register the headers and the error handlers on `app`."""
    app.after_request(_headers)
    app.register_error_handler(HTTPException, _http_error)
