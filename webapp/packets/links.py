"""Which links may open in a browser, the host a source row shows, its age, and how its
title reads.

docs/specs.md P11, P22: `domain_of` is the lower-cased host only; it names a web source's
icon, which comes from the app's own favicon route (spelled by the web layer), never from a
third-party service. A title comes from a tool (a web page, a sidecar, a SQL row), so bidi
controls that would reorder what people read around it (U+202E RIGHT-TO-LEFT OVERRIDE and the
rest) are taken out before it is shown.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from urllib.parse import SplitResult, quote, urlsplit

import humanize

_TRICK_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
# Unicode's bidi formatting characters (UAX #9, "Explicit Directional Formatting Characters"
# and the implicit marks): ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI.
_BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# How far from now a time still reads as "3 days from now" or "5 years ago"; past this it is
# shown as its date ("on 9999-12-30"), never as "7,978 years from now".
FUTURE_HORIZON = timedelta(days=7)
PAST_HORIZON = timedelta(days=100 * 365)


def display_title(title: str) -> str:
    """Return `title` as people should read it: no bidi controls, controls as spaces."""
    return _BREAKS.sub(" ", _BIDI_CONTROLS.sub("", title)).strip()


def _has_tricks(link: str) -> bool:
    # Browsers strip or skip whitespace and control characters (" javascript:"), and
    # treat "\" as "/": a link that needs any of that is not trusted at all. A lone
    # surrogate (possible in decoded JSON) cannot even be encoded.
    if link.isascii():
        # In ASCII those are the C0 controls and DEL (none printable), the space and the
        # backslash: three scans in C rather than a category looked up per character.
        return not link.isprintable() or " " in link or "\\" in link
    return any(
        ch == "\\" or ch.isspace() or unicodedata.category(ch) in _TRICK_CATEGORIES for ch in link
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


# A text fragment names a passage by its first and last words when it is longer than this.
FRAGMENT_EDGE_WORDS = 4
# Markdown a cited snippet may carry that the page shows as plain text: a link's target, and
# emphasis and code marks.
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKDOWN_MARKS = re.compile(r"\*\*|__|[*`]")
# Quote marks and ellipses a cited snippet may carry at its ends, which the page need not have.
_FRAGMENT_TRIM = "\"'“”‘’«»…. "


def _fragment_term(words: list[str]) -> str:
    # Percent-encoded, and so are the directive's own delimiters: `-`, `,` and `&`.
    return quote(" ".join(words), safe="").replace("-", "%2D")


def with_text_fragment(url: str, cited: str | None) -> str:
    """Return `url` opening at the cited passage: a text fragment (`#:~:text=`) from `cited`.

    A long passage is named by its first and last few words (`text=start,end`), which still
    match when the snippet was cut or reflowed in between. Browsers without text fragments
    ignore the directive; one that finds no match opens the page at its top.
    """
    plain = _MARKDOWN_MARKS.sub("", _MARKDOWN_LINK.sub(r"\1", cited or ""))
    words = plain.strip(_FRAGMENT_TRIM).split()
    if not words:
        return url
    if len(words) > 2 * FRAGMENT_EDGE_WORDS:
        start, end = words[:FRAGMENT_EDGE_WORDS], words[-FRAGMENT_EDGE_WORDS:]
        directive = f"{_fragment_term(start)},{_fragment_term(end)}"
    else:
        directive = _fragment_term(words)
    return f"{url}{'' if '#' in url else '#'}:~:text={directive}"


def domain_of(link: object) -> str | None:
    """Return the lower-cased host of an http(s) link, without a leading `www.`; else None."""
    parts = _split(link)
    if parts is None or parts.hostname is None:
        return None
    host = parts.hostname.lower().rstrip(".")
    host = host.removeprefix("www.") if host != "www." else host
    return host or None


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
    """Return how long ago an ISO-8601 time was ("3 days ago"); None when missing or bad.

    A time more than FUTURE_HORIZON ahead (or PAST_HORIZON back) reads as its date instead:
    "on 2031-05-01".
    """
    if not isinstance(updated_at, str) or not updated_at.strip():
        return None
    then = _parse_iso(updated_at)
    if then is None:
        return None
    try:
        reference = _as_utc(now) if now is not None else datetime.now(UTC)
    except OverflowError:
        return None
    if then - reference > FUTURE_HORIZON or reference - then > PAST_HORIZON:
        return f"on {then.date().isoformat()}"
    # humanize compares naive datetimes; both are UTC here.
    return humanize.naturaltime(then.replace(tzinfo=None), when=reference.replace(tzinfo=None))
