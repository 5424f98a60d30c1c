"""A topic's bundled page as the tools returned it (a web page from the article search, or a
corpus document from its reader), read as sentences, each cited to its passage: headings and
notes about the document left out, bold marks dropped, a table's rows read as "cell: cell."
sentences, no break after "U.S."."""

from __future__ import annotations

import re
from typing import Any

from ...tool_registry import EXECUTE_PYTHON, SEARCH_WEB
from ...tools.readers import READER_TOOLS
from .cite import Block, Result, cite
from .quotable import is_note
from .words import amounts

# The tools a topic's page comes back from: the article search or code, or a corpus reader.
_PAGE_TOOLS = frozenset({EXECUTE_PYTHON, SEARCH_WEB, *READER_TOOLS})


class Page:
    """The bundled page of a topic as the tools returned it: its sentences, each cited."""

    def __init__(self, results: list[Result], title: str) -> None:
        mine = [r for r in results if r.tool in _PAGE_TOOLS and r.title == title]
        self._sentences: list[tuple[str, dict[str, Any]]] = [
            (" ".join(sentence.split()).removeprefix("- "), cite(result, at, at + 1))
            for result in mine
            for at, text in enumerate(result.texts)
            if not is_note(text)  # a heading, or a note about the document itself
            for sentence in re.split(r"(?<=[.!?])(?<![A-Z]\.[A-Z]\.)\s+", _plain(text))
            if sentence.strip()
        ]

    @property
    def found(self) -> bool:
        return bool(self._sentences)

    def sentence(self, key: str) -> Block | None:
        """Return the first sentence holding `key` (case ignored), cited to its passage."""
        for text, citation in self._sentences:
            if key and key.lower() in text.lower():
                return (text, [citation])
        return None

    def amounts(self, key: str) -> list[float]:
        """Return the money amounts of the sentence holding `key`, in order."""
        said = self.sentence(key)
        return amounts(said[0]) if said else []

    def number(self, key: str, after: str) -> int | None:
        """Return the first whole number after the word `after` in the sentence of `key`."""
        said = self.sentence(key)
        found = re.search(rf"{re.escape(after)}\D*?(\d+)", said[0]) if said else None
        return int(found[1]) if found else None


def _plain(text: str) -> str:
    """A passage as sentences: bold marks dropped, a table's rows as "cell: cell." lines."""
    lines = []
    for line in text.replace("**", "").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) > 1:
            if not all(set(c) <= set("-: ") for c in cells):
                lines.append(": ".join(cells).rstrip(".") + ".")
        else:
            lines.append(line)
    return "\n".join(lines)
