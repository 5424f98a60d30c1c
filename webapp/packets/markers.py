"""Split the answer text into plain text and resolved citations for the renderer.

Markers are `[[n]](link)` and `[[n]]()` (docs/specs.md, rule P18). A marker is resolved
through the citation map and the document map, never through its link text; an unknown
number shows nothing; a partial marker at the end of a streaming text is held back;
markers inside code stay literal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .code import code_end, code_ranges
from .documents import SearchDoc
from .state import ProcessedMessageState

_HEAD = re.compile(r"\[\[(\d{1,9})\]\]")
# What the end of a streaming text may hold of a marker that is still arriving.
_HEAD_PREFIX = re.compile(r"\[(?:\[(?:\d{1,9}(?:\]\]?)?)?)?")


@dataclass(frozen=True, slots=True)
class TextSegment:
    """Plain answer text (markdown, rendered later by the web layer)."""

    text: str


@dataclass(frozen=True, slots=True)
class CitationSegment:
    """One inline citation: its number and the document, None while it is not known."""

    number: int
    document_id: str
    doc: SearchDoc | None


Segment: TypeAlias = TextSegment | CitationSegment
_Scan: TypeAlias = tuple[int, int] | Literal["partial"] | None


def _link_end(text: str, start: int) -> int | Literal["partial"] | None:
    """Return the end of the `(link)` that opens at `start`, as markdown reads it."""
    depth = 0
    index = start
    while index < len(text):
        char = text[index]
        if char.isspace() or ord(char) < 0x20 or char == "<":
            return None
        if char == "\\":
            index += 2
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return "partial"


def _marker_at(text: str, index: int) -> _Scan:
    """Return `(end, number)` for a marker at `index`, "partial" when cut off, else None."""
    head = _HEAD.match(text, index)
    if head is None:
        prefix = _HEAD_PREFIX.match(text, index)
        return "partial" if prefix is not None and prefix.end() == len(text) else None
    if head.end() == len(text):
        return "partial"
    if text[head.end()] != "(":
        return None
    end = _link_end(text, head.end())
    if end is None or end == "partial":
        return end
    return end, int(head.group(1))


def _first_numbers(state: ProcessedMessageState) -> dict[str, int]:
    return {c.document_id: c.citation_num for c in reversed(state.citations)}


def answer_segments(state: ProcessedMessageState) -> list[Segment]:
    """Return the answer as text and citation segments, ready for the renderer."""
    text = state.text
    streaming = not state.is_complete
    code = code_ranges(text, streaming=streaming)
    first = _first_numbers(state)
    segments: list[Segment] = []
    plain: list[str] = []

    def flush(upto: int) -> None:
        if upto > emitted:
            plain.append(text[emitted:upto])
        if plain:
            segments.append(TextSegment("".join(plain)))
            plain.clear()

    emitted = 0
    pos = text.find("[")
    while pos != -1:
        skip = code_end(code, pos)
        if skip is not None:
            pos = text.find("[", skip)
            continue
        found = _marker_at(text, pos)
        if found == "partial" and streaming:
            return _done(segments, plain, text[emitted:pos])
        if found is None or found == "partial":
            pos = text.find("[", pos + 1)
            continue
        end, number = found
        document_id = state.citation_map.get(number)
        if document_id is not None:
            # A document shows its first number, so the text and the footer agree.
            shown = first.get(document_id, number)
            flush(pos)
            last = segments[-1] if segments else None
            if not (isinstance(last, CitationSegment) and last.document_id == document_id):
                doc = state.document_map.get(document_id)
                segments.append(CitationSegment(shown, document_id, doc))
        else:
            # An unknown number shows nothing (until a later citation_info names it).
            plain.append(text[emitted:pos])
        emitted = end
        pos = text.find("[", end)
    return _done(segments, plain, text[emitted:])


def _done(segments: list[Segment], plain: list[str], tail: str) -> list[Segment]:
    rest = "".join([*plain, tail])
    if rest:
        segments.append(TextSegment(rest))
    return segments
