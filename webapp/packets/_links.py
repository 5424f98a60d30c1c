"""Which links may open in a browser, the host a source row shows, its icon and its age.

DESIGN.md: `domain_of` is the lower-cased host only; icons come from the app's own
`/favicon/<host>` route, never from a third-party service.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from urllib.parse import SplitResult, urlsplit

import humanize

from webapp.citations import encode_uri_component

FAVICON_ROUTE = "/favicon/"
_TRICK_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _has_tricks(link: str) -> bool:
    # Browsers strip or skip whitespace and control characters (" javascript:"), and
    # treat "\" as "/": a link that needs any of that is not trusted at all. A lone
    # surrogate (possible in decoded JSON) cannot even be encoded.
    return any(
        ch == "\\" or ch.isspace() or unicodedata.category(ch) in _TRICK_CATEGORIES
        for ch in link
    )


def _split(link: object) -> SplitResult | None:
    if not isinstance(link, str) or not link or _has_tricks(link):
        return None
    try:
        parts = urlsplit(link)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host or not parts.netloc:
        return None
    return parts


def browser_url(link: object) -> str | None:
    """Return `link` when it is an absolute http(s) URL with a host, else None."""
    return link if isinstance(link, str) and _split(link) is not None else None


def domain_of(link: object) -> str | None:
    """Return the lower-cased host of an http(s) link, without a leading `www.`; else None."""
    parts = _split(link)
    if parts is None or parts.hostname is None:
        return None
    host = parts.hostname.lower().rstrip(".")
    host = host.removeprefix("www.") if host != "www." else host
    return host or None


def favicon_url(link: object) -> str | None:
    """Return the app's own icon route for the link's host, or None without a host."""
    host = domain_of(link)
    return FAVICON_ROUTE + encode_uri_component(host) if host else None


def _parse_iso(value: str) -> datetime | None:
    try:
        return _as_utc(datetime.fromisoformat(value.strip()))
    except (ValueError, OverflowError):
        # OverflowError: an offset that moves year 1 or 9999 out of range.
        return None


def _as_utc(value: datetime) -> datetime:
    # A naive time on the wire is taken to be UTC, the server's clock.
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def time_ago(updated_at: object, now: datetime | None = None) -> str | None:
    """Return how long ago an ISO-8601 time was ("3 days ago"); None when missing or bad."""
    if not isinstance(updated_at, str) or not updated_at.strip():
        return None
    then = _parse_iso(updated_at)
    if then is None:
        return None
    try:
        reference = _as_utc(now) if now is not None else datetime.now(UTC)
    except OverflowError:
        return None
    # humanize compares naive datetimes; both are UTC here.
    return humanize.naturaltime(then.replace(tzinfo=None), when=reference.replace(tzinfo=None))
