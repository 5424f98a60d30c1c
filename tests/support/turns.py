"""Helpers for turn tests: an in-memory sink, canned tools, and reading packets back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webapp.citations.citable import ToolOutcome, from_sql


@dataclass
class MemorySink:
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    checkpoints: list[dict[str, Any]] = field(default_factory=list)

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self.events.append((event, data))

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        self.checkpoints.append(checkpoint)

    def named(self, name: str) -> list[dict[str, Any]]:
        return [data for event, data in self.events if event == name]

    def packets(self) -> list[dict[str, Any]]:
        return self.named("packet")

    def packet_types(self) -> list[str]:
        return [p["obj"]["type"] for p in self.packets()]

    def streamed_text(self) -> str:
        return "".join(
            p["obj"]["content"] for p in self.packets() if p["obj"]["type"] == "message_delta"
        )


@dataclass(frozen=True)
class Rows:
    rows: tuple[Mapping[str, object], ...]
    columns: tuple[str, ...] = ()
    truncated: bool = False


@dataclass
class CannedTools:
    """Answer each execute_sql query from a table of canned rows, through the real citable layer."""

    sql: dict[str, list[dict[str, object]]]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    other: Callable[[str, dict[str, Any]], ToolOutcome] | None = None

    def run(self, name: str, tool_input: dict[str, Any]) -> ToolOutcome:
        self.calls.append((name, tool_input))
        if name == "execute_sql" and tool_input.get("query") in self.sql:
            citables = from_sql(Rows(tuple(self.sql[tool_input["query"]])), "2026-11-29T00:00:00Z")
            return ToolOutcome([c.search_result() for c in citables], citables)
        if self.other is not None:
            return self.other(name, tool_input)
        return ToolOutcome([{"type": "text", "text": f"unknown call {name}"}], is_error=True)
