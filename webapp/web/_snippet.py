"""A source's passage as the sheet's snippet: plain words, search emphasis kept, all escaped.

Seed 001 "SourceRow": the first highlight or the blurb, 200 characters. A passage may be
markdown (read down to its words) or a tool's `key: value` lines (read as labels); only a
search engine's `<hi>` emphasis becomes markup.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from ._markdown import markdown_text

SNIPPET_CHARS = 200

_HI = re.compile(r"<hi>(.*?)</hi>", re.DOTALL | re.IGNORECASE)
# A tool's row text ("account_name: Credit card" a line) reads better as "Account name: ...".
_FIELD_LINE = re.compile(r"([a-z][a-z0-9]*(?:_[a-z0-9]+)*): (.*)")
_SPACE = re.compile(r"\s+")


def readable_fields(text: str) -> str:
    """Return "key: value" lines as "Key: value · ..."; any other text unchanged."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    matches = [_FIELD_LINE.fullmatch(line) for line in lines]
    if not lines or not all(matches):
        return text
    return " · ".join(f"{m.group(1).replace('_', ' ').capitalize()}: {m.group(2)}"
                      for m in matches if m is not None)


def snippet(text: str, limit: int = SNIPPET_CHARS) -> Markup:
    """Return `text` as plain words cut to `limit` characters: `<hi>` as <mark>, all escaped."""
    text = markdown_text(readable_fields(text))
    pieces: list[tuple[str, bool]] = []
    position = 0
    for match in _HI.finditer(text):
        pieces += [(text[position:match.start()], False), (match.group(1), True)]
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
