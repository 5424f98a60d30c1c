"""Pure: text made valid Unicode, the one rule for everything that enters from a tool, the
model, a file or a request before it is stored or drawn.

Python's `str` may hold lone surrogates (U+D800-U+DFFF): JSON's `"\\ud800"` escape and a
`surrogateescape` decode both make them. UTF-8 can't encode one, so a stored row holding one
breaks every page, stream and encoder that meets it. Each is replaced with U+FFFD (the
replacement character), as a decoder does with bytes it can't read; a pair of surrogates
that spells one character becomes that character. NUL, which PostgreSQL's text refuses and
which nobody reads, is replaced too.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["REPLACEMENT", "valid_json", "valid_text"]

REPLACEMENT = "\ufffd"
J = TypeVar("J")


def valid_text(text: str) -> str:
    """Return `text` with every lone surrogate and NUL replaced by U+FFFD."""
    if text.isascii() and "\x00" not in text:
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 joins a surrogate pair into its character; a lone half can't be decoded.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\x00", REPLACEMENT)


def valid_json(value: J) -> J:
    """Return a JSON-like value (dicts, lists, tuples, strings, numbers) with every string
    in it, keys included, made valid (`valid_text`); other values are kept as they are."""
    if isinstance(value, str):
        return valid_text(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {valid_json(k): valid_json(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        return type(value)(valid_json(v) for v in value)
    return value
