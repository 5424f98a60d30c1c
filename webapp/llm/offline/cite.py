"""This turn's tool results as the offline engine reads them, and citations of their blocks.

A citation is Claude's `search_result_location`: the result's source and title, the block
range it relies on, and that range's text, so its target is whatever the real tool result
was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# One text block of the answer and the citations that back it.
Block = tuple[str, list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Result:
    """One search_result block of this turn (index None: a tool error, `block` has `error`)."""

    tool: str
    index: int | None
    block: dict[str, Any]
    call: int = -1  # the position of its tool call in the engine's round of calls

    @property
    def texts(self) -> list[str]:
        """Return the text of each content block, in order."""
        content = self.block.get("content")
        return (
            [str(c.get("text", "")) for c in content if isinstance(c, dict)]
            if isinstance(content, list)
            else []
        )

    @property
    def source(self) -> str:
        return str(self.block.get("source", ""))

    @property
    def title(self) -> str:
        return str(self.block.get("title") or "")


def cite(result: Result, start: int = 0, end: int | None = None) -> dict[str, Any]:
    """Cite blocks `start` to `end` (exclusive; all by default) of one result."""
    texts = result.texts
    end = len(texts) if end is None else end
    return {
        "type": "search_result_location",
        "source": result.block.get("source"),
        "title": result.block.get("title"),
        "cited_text": "\n\n".join(texts[start:end]),
        "search_result_index": result.index,
        "start_block_index": start,
        "end_block_index": end,
    }


def fields(text: str) -> dict[str, str | None]:
    """Read a row block ("column: value" lines); "null" becomes None."""
    pairs = (line.partition(": ") for line in text.splitlines())
    return {
        key.strip(): (None if value.strip() == "null" else value.strip())
        for key, sep, value in pairs
        if sep
    }


def number(value: str | None) -> float | None:
    """Return a row value as a number, or None when it is empty or not one."""
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None
