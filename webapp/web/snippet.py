"""A source's passage as the sheet's snippet: plain words, search emphasis kept, all escaped.

docs/specs.md, rule P15: the first highlight or the blurb, 200 characters. A passage may be
markdown (read down to its words) or a tool's `key: value` lines (read as labels); only a
search engine's `<hi>` emphasis becomes markup. `freshness` says how old a row's data is:
"Synced 2 hours ago" for account data that carries its sync time, "Updated ..." otherwise.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from markupsafe import Markup, escape

from ..money import as_decimal, format_money
from ..packets.links import time_ago
from .markdown import markdown_text

SNIPPET_CHARS = 200

_HI = re.compile(r"<hi>(.*?)</hi>", re.DOTALL | re.IGNORECASE)
# A tool's row text ("account_name: Credit card" a line) reads better as "Account name: ...".
_FIELD_LINE = re.compile(r"([a-z][a-z0-9]*(?:_[a-z0-9]+)*): (.*)")
_SPACE = re.compile(r"\s+")


# One `key: value` pair of a tool's row text, up to the next key (rows may run together).
_KEY = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*"
_PAIR = re.compile(rf"({_KEY}): (.*?)(?=\s+{_KEY}: |$)", re.DOTALL)
_DEBT_TYPES = frozenset({"credit", "loan", "mortgage"})
_MISSING = frozenset({"", "null", "none"})
# A tool's row text carries its data's sync time as this field (the views' column).
_SYNCED = re.compile(r"(?:^|\s)synced_at: (\S+)")
# Times this close read alike, so rows written a moment apart never say "just now" and
# "a second ago" side by side.
JUST_NOW = timedelta(minutes=1)


def _records(text: str) -> list[dict[str, str]]:
    """Split a tool's row text into rows: a key seen again starts the next row."""
    records: list[dict[str, str]] = []
    for key, value in _PAIR.findall(text.strip()):
        if not records or key in records[-1]:
            records.append({})
        records[-1][key] = value.strip()
    return records


def _money_row(row: dict[str, str]) -> str | None:
    """ "Credit card · American Express · $1,842.17 owed", "AAPL · 12 shares · $2,313.36"."""

    def given(key: str) -> str | None:
        value = row.get(key)
        return None if value is None or value.lower() in _MISSING else value

    def amount(key: str) -> Decimal | None:
        try:
            value = Decimal(given(key) or "")
        except InvalidOperation:
            return None
        return as_decimal(value)  # a finite amount a page can draw, else None

    currency = given("currency")
    if (current := amount("current_balance")) is not None:
        balance = format_money(current, currency)
        owed = (given("account_type") or "").lower() in _DEBT_TYPES
        parts = [
            given("account_name"),
            given("institution_name"),
            f"{balance.removeprefix('-')} owed" if owed else balance,
        ]
    elif (value := amount("market_value")) is not None:
        quantity = amount("quantity")
        parts = [
            given("ticker") or given("account_name"),
            f"{quantity.normalize():f} shares" if quantity is not None else None,
            format_money(value, currency),
        ]
    else:
        return None
    return " · ".join(part for part in parts if part)


def money_rows(text: str) -> str | None:
    """Return account or holding rows as people read them, or None for other text."""
    if "current_balance: " not in text and "market_value: " not in text:
        return None
    rows = [_money_row(record) for record in _records(text)]
    return "; ".join(row for row in rows if row) if rows and all(rows) else None


def readable_fields(text: str) -> str:
    """Return a tool's rows as people read them: money rows, else "Key: value · ..."."""
    as_money = money_rows(text)
    if as_money is not None:
        return as_money
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    matches = [_FIELD_LINE.fullmatch(line) for line in lines]
    if not lines or not all(matches):
        return text
    return " · ".join(
        f"{m.group(1).replace('_', ' ').capitalize()}: {m.group(2)}"
        for m in matches
        if m is not None
    )


# A source's snippet is drawn twice in every answer (its citation's preview and its row), and
# again in every answer citing the same passage: short passages are kept, each drawn once.
CACHED_SNIPPET_TEXT = 8192
CACHED_SNIPPETS = 512


def snippet(text: str, limit: int = SNIPPET_CHARS) -> Markup:
    """Return `text` as plain words cut to `limit` characters: `<hi>` as <mark>, all escaped."""
    if type(text) is not str or len(text) > CACHED_SNIPPET_TEXT:
        return _snippet(text, limit)
    return _kept_snippet(text, limit)


def _snippet(text: str, limit: int) -> Markup:
    text = markdown_text(readable_fields(text))
    pieces: list[tuple[str, bool]] = []
    position = 0
    for match in _HI.finditer(text):
        pieces += [(text[position : match.start()], False), (match.group(1), True)]
        position = match.end()
    pieces.append((text[position:], False))
    out, used = Markup(""), 0
    for piece, marked in pieces:
        piece = _SPACE.sub(" ", piece)
        if used == 0:
            piece = piece.lstrip()
        room = limit - used
        cut = piece[:room]
        used += len(cut)
        out += Markup("<mark>{}</mark>").format(cut) if marked and cut else escape(cut)
        if len(piece) > room:
            return Markup("{}…").format(Markup(out.rstrip()))
    return out


_kept_snippet = functools.lru_cache(maxsize=CACHED_SNIPPETS)(_snippet)


def relative_time(updated_at: str | None, now: datetime | None = None) -> str | None:
    """Return how long ago `updated_at` was, "just now" for anything within a minute."""
    reference = now or datetime.now(UTC)
    reference = reference.replace(tzinfo=UTC) if reference.tzinfo is None else reference
    try:
        then: datetime | None = datetime.fromisoformat((updated_at or "").strip())
    except ValueError:
        then = None
    if then is not None:
        then = then.replace(tzinfo=UTC) if then.tzinfo is None else then
        if abs(reference - then) < JUST_NOW:
            return "just now"
    return time_ago(updated_at, reference)


def freshness(updated_at: str | None, text: str, now: datetime | None = None) -> str | None:
    """Return a row's "Synced 2 hours ago" or "Updated 3 days ago", or None with no time.

    Account rows whose text carries `synced_at` are dated by the data's last sync (the turn
    gives the source its rows' oldest sync time); rows that carry the field but hold no
    time were never synced (a manual account: "Entered by hand"). Other sources keep "Updated".
    """
    synced = _SYNCED.findall(text)
    ago = relative_time(updated_at, now)
    if synced and ago is not None:
        return f"Synced {ago}"
    if synced and all(value.lower() in _MISSING for value in synced):
        return "Entered by hand"  # as the accounts page says it
    return f"Updated {ago}" if ago is not None else None
