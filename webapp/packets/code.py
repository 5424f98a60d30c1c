"""Find the parts of markdown text that are code, where citation markers stay literal.

Block code (fenced and indented) comes from markdown-it's CommonMark parser, so the
block rules (lazy continuation, lists, quotes) are the renderer's own; inline code
spans follow CommonMark's backtick rule.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Sequence

from markdown_it import MarkdownIt

# markdown-it counts lines after normalizing each of these to "\n".
_NEWLINE = re.compile(r"\r\n?|\n")
_BLANK_LINE = re.compile(r"(?:\r\n?|\n)[ \t]*(?=\r\n?|\n)")
_BACKTICKS = re.compile(r"`+")
# Block structure only: code blocks are block tokens, and reading each block's inline
# markup (links, emphasis) changes none of them.
_PARSER = MarkdownIt("commonmark").disable("inline")


def _line_starts(text: str) -> list[int]:
    return [0, *(match.end() for match in _NEWLINE.finditer(text))]


def _block_code(text: str) -> list[tuple[int, int]]:
    starts = _line_starts(text)
    ranges = []
    for token in _PARSER.parse(text):
        if token.type in ("fence", "code_block") and token.map:
            first, last = token.map
            end = starts[last] if last < len(starts) else len(text)
            ranges.append((starts[first], end))
    return ranges


def _escaped(text: str, index: int, floor: int) -> bool:
    slashes = 0
    while index - slashes - 1 >= floor and text[index - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def _spans_in(text: str, start: int, end: int, open_at_end: bool) -> list[tuple[int, int]]:
    """Return the code spans of one paragraph-like stretch `text[start:end]`."""
    spans: list[tuple[int, int]] = []
    pos = start
    while True:
        opener = _BACKTICKS.search(text, pos, end)
        if opener is None:
            return spans
        if _escaped(text, opener.start(), start):
            # "\`" is a literal backtick; the rest of the run may still open a span.
            pos = opener.start() + 1
            continue
        width = len(opener.group())
        closer = _BACKTICKS.search(text, opener.end(), end)
        while closer is not None and len(closer.group()) != width:
            closer = _BACKTICKS.search(text, closer.end(), end)
        if closer is not None:
            spans.append((opener.start(), closer.end()))
            pos = closer.end()
        elif open_at_end:
            # Still streaming: the closing backticks may be on their way.
            spans.append((opener.start(), end))
            return spans
        else:
            pos = opener.end()


def code_ranges(text: str, *, streaming: bool = False) -> list[tuple[int, int]]:
    """Return the sorted `(start, end)` offsets of every code block and code span."""
    blocks = _block_code(text)
    ranges = list(blocks)
    cursor = 0
    for block_start, block_end in [*blocks, (len(text), len(text))]:
        # Code spans never cross a blank line or a code block.
        stretch = cursor
        for blank in _BLANK_LINE.finditer(text, cursor, block_start):
            ranges += _spans_in(text, stretch, blank.start(), open_at_end=False)
            stretch = blank.end()
        at_end = streaming and block_start == len(text)
        ranges += _spans_in(text, stretch, block_start, open_at_end=at_end)
        cursor = max(cursor, block_end)
    return sorted(ranges)


def code_end(ranges: Sequence[tuple[int, int]], index: int) -> int | None:
    """Return the end of the code range holding `index`, or None when it is not code."""
    found = bisect_right(ranges, (index, sys.maxsize)) - 1
    if found >= 0 and ranges[found][0] <= index < ranges[found][1]:
        return ranges[found][1]
    return None
