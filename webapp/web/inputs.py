"""A request's body, read within limits before any view parses it.

- A chunked body (no `Content-Length`) is read whole, up to `MAX_CONTENT_LENGTH`, before the
  request is handled: one byte more is `413`, as a declared length over the limit is.
  werkzeug's limited stream stops quietly at the limit, so the view would otherwise parse
  the body's first 64 KB as though it were all.
- A JSON body nested past `MAX_JSON_DEPTH` is refused before it is parsed: Python's parser
  recurses once per level and fails past about a thousand with an error of its own.
"""

from __future__ import annotations

import io
import json
import re

from flask import Flask, abort, request

MAX_JSON_DEPTH = 32
# A JSON string (escapes included), or one left open to the end: every match moves on past
# what it read, so the scan is linear whatever the body holds. Then the brackets of a level.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class BodyError(ValueError):
    """The body can't be read as what the route takes; the text says why, in plain words."""


def json_depth(data: bytes) -> int:
    """Return how deeply the JSON text `data` nests arrays and objects (0 for a scalar)."""
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_STRING.sub(b'""', data)):
        depth += 1 if bracket.group() in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest


def parse_json(data: bytes) -> object:
    """Return the JSON value `data` holds; BodyError for one that is invalid or too deep."""
    if json_depth(data) > MAX_JSON_DEPTH:
        raise BodyError(f"The body nests more than {MAX_JSON_DEPTH} levels deep.")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # invalid UTF-8 or JSON, a number of 4,301 digits
        raise BodyError("The body is not valid JSON.") from None


def _read_chunked_body() -> None:
    environ = request.environ
    if (
        environ.get("CONTENT_LENGTH")
        or "chunked" not in (environ.get("HTTP_TRANSFER_ENCODING") or "").lower()
    ):
        return
    limit = request.max_content_length
    stream = environ["wsgi.input"]
    data = stream.read() if limit is None else stream.read(limit + 1)
    if limit is not None and len(data) > limit:
        abort(413)
    # From here on the body is an ordinary one of known length.
    environ["wsgi.input"] = io.BytesIO(data)
    environ["CONTENT_LENGTH"] = str(len(data))


def init_app(app: Flask) -> None:
    """Read chunked bodies whole, within the limit, before anything else of a request runs."""
    app.before_request_funcs.setdefault(None, []).insert(0, _read_chunked_body)
