"""The answer as it streams: plain text, `[[n]](link)` markers, numbers and inline citations.

Numbers go in first-cite order per answer, and a document keeps its first number however
often it is cited again (unlike Onyx issue 14334, where one document could get two numbers).
A citation's target is read only when asked for: a later tool round may still pool or
poison its source (docs/specs.md, rules T11 and T12), so the builder never keeps
what a source meant when it was cited.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..citations.registry import CitationRegistry
from ..citations.targets import CitationTarget, target_to_json


@dataclass(frozen=True, slots=True)
class CitedSource:
    """What the answer knows of a source it may cite: its title and browser link."""

    title: str
    link: str | None


@dataclass(slots=True)
class BlockOutput:
    """What closing a text block adds: marker text, and the numbers it gave out."""

    markers: str = ""  # Stream after the block's text: markers, then its trailing whitespace.
    new_numbers: list[tuple[int, str]] = field(default_factory=list)


_CITATION_FIELDS = ("number", "type", "source", "title", "cited_text")


def _json_target(target: CitationTarget | None) -> dict[str, Any] | None:
    return None if target is None else target_to_json(target)


class AnswerBuilder:
    """Accumulate the answer's text and citations across the turn's rounds."""

    def __init__(self, registry: CitationRegistry, sources: dict[str, CitedSource]) -> None:
        self._registry = registry
        self._sources = sources  # Shared with the turn, which adds to it every tool round.
        self.text = ""
        self.numbers: dict[str, int] = {}
        self.cited_texts: dict[str, list[str]] = {}
        self._inline: list[dict[str, Any]] = []
        self._block_start = 0
        self._round_break = False
        self._held = ""  # A block's trailing whitespace, streamed after its markers.

    def state(self) -> dict[str, Any]:
        """Return what a checkpoint keeps of the answer so far."""
        return {
            "text": self.text,
            "numbers": dict(self.numbers),
            "cited_texts": {k: list(v) for k, v in self.cited_texts.items()},
            "inline": list(self._inline),
            "round_break": self._round_break,
        }

    def restore(self, state: object) -> None:
        """Continue from a checkpoint's `state()`; anything malformed starts afresh."""
        if not isinstance(state, dict):
            return
        text, numbers = state.get("text"), state.get("numbers")
        cited, inline = state.get("cited_texts"), state.get("inline")
        if not (
            isinstance(text, str)
            and isinstance(numbers, dict)
            and isinstance(cited, dict)
            and isinstance(inline, list)
        ):
            return
        self.text = text
        self._round_break = state.get("round_break") is True
        self.numbers = {str(k): int(v) for k, v in numbers.items() if k in self._sources}
        self.cited_texts = {
            str(k): [str(t) for t in v] for k, v in cited.items() if isinstance(v, list)
        }
        self._inline = [
            c for c in inline if isinstance(c, dict) and c.get("source") in self.numbers
        ]

    def new_round(self) -> None:
        """Mark a tool round: text after it starts a new paragraph."""
        self._round_break = True

    def start_block(self) -> str:
        """Open a text block; return any separator to stream before it."""
        separator = ""
        if self._round_break and self.text and not self.text.endswith("\n"):
            separator = "\n\n"
        self._round_break = False
        self.text += separator
        self._block_start = len(self.text)
        return separator

    def add_text(self, delta: str) -> str:
        """Append streamed text; return what to stream now (trailing whitespace waits)."""
        self.text += delta
        pending = self._held + delta
        body = pending.rstrip()
        self._held = pending[len(body) :]
        return body

    def finish_block(self, citations: list[Any]) -> BlockOutput:
        """Close a text block with the citations the model gave it."""
        out = BlockOutput()
        held, self._held = self._held, ""
        start, end = self._block_start, len(self.text) - len(held)
        marked: list[int] = []
        for raw in citations:
            if not isinstance(raw, dict):
                continue
            source = raw.get("source")
            if not isinstance(source, str) or source not in self._sources:
                continue  # Not a search result of this turn: nothing to number.
            number = self.numbers.get(source)
            if number is None:
                number = self.numbers[source] = len(self.numbers) + 1
                out.new_numbers.append((number, source))
            cited = str(raw.get("cited_text") or "")
            texts = self.cited_texts.setdefault(source, [])
            if cited and cited not in texts:
                texts.append(cited)
            self._inline.append(
                {
                    **self._citation(number, source, raw),
                    "start": start,
                    "end": end,
                    "text": self.text[start:end],
                }
            )
            if number not in marked:
                marked.append(number)
        if marked:
            space = "" if start == end or self.text[end - 1].isspace() else " "
            out.markers = space + " ".join(f"[[{n}]]({self._link(n)})" for n in marked)
        out.markers += held
        return out

    def _link(self, number: int) -> str:
        source = next(s for s, n in self.numbers.items() if n == number)
        return self._sources[source].link or ""

    def _citation(self, number: int, source: str, raw: dict[str, Any]) -> dict[str, Any]:
        title = raw.get("title")
        return {
            "number": number,
            "type": str(raw.get("type") or "search_result_location"),
            "source": source,
            "title": title if isinstance(title, str) else self._sources[source].title,
            "cited_text": str(raw.get("cited_text") or ""),
        }

    def summary(self) -> list[dict[str, Any]]:
        """Return one citation per cited source, in number order, with its final target."""
        return [
            {
                "number": number,
                "source": source,
                "title": self._sources[source].title,
                "cited_text": (self.cited_texts.get(source) or [""])[0],
                "cited_texts": list(self.cited_texts.get(source, [])),
                "target": _json_target(self._registry.target(source)),
            }
            for source, number in sorted(self.numbers.items(), key=lambda item: item[1])
        ]

    def citations(self) -> list[dict[str, Any]]:
        """Return each citation as the model made them, in order, with its source's target now.

        docs/specs.md T15, SSE `citation` shape: number, type, source, title, cited_text, target.
        """
        return [
            {k: c[k] for k in _CITATION_FIELDS if k in c} | {"target": self._target(c)}
            for c in self._inline
        ]

    def inline_citations(self) -> list[dict[str, Any]]:
        """Return each citation with the span of the answer it backs, targets as final."""
        return [{**c, "target": self._target(c)} for c in self._inline]

    def _target(self, citation: dict[str, Any]) -> dict[str, Any] | None:
        return _json_target(self._registry.target(citation["source"]))
