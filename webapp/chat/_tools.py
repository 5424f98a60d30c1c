"""Run the model's tool calls for one user, turning each result into citable content."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy.engine import Engine

from ..tools import (
    FolderListing,
    ReaderError,
    SandboxError,
    WebSearchError,
    WebSearchProvider,
    read_document,
    run_python,
    run_sql,
    search_web,
)
from ..turn import ToolOutcome, from_document, from_python, from_sql, from_web_results

log = logging.getLogger(__name__)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _error(message: str) -> ToolOutcome:
    return ToolOutcome([_text(message)], is_error=True)


def _listing(listing: FolderListing) -> str:
    lines = [f"Folder '{listing.path or '/'}' of {listing.corpus}:"]
    for entry in listing.entries:
        title = f" — {entry.title}" if entry.title and not entry.is_folder else ""
        lines.append(f"- {entry.name}{'/' if entry.is_folder else ''}{title}")
    if not listing.entries:
        lines.append("(empty)")
    return "\n".join(lines)


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class LocalTools:
    """The six tools, over the user's own rows and the bundled corpora and indexes."""

    engine: Engine
    user_id: int
    # Folders the Python sandbox must not see besides its defaults (the app's instance folder).
    hide: tuple[str, ...] = ()
    # Where search_web searches: None for the configured default (Exa or the local index).
    web: WebSearchProvider | None = None

    def run(self, name: str, tool_input: dict[str, Any]) -> ToolOutcome:
        """Run one call; bad input and tool failures come back as error outcomes."""
        handlers: dict[str, Callable[[dict[str, Any]], ToolOutcome]] = {
            "execute_sql": self._execute_sql,
            "execute_python": self._execute_python,
            "read_tax_authority": partial(self._read, "read_tax_authority"),
            "read_credit_card_document": partial(self._read, "read_credit_card_document"),
            "read_mortgage_authority": partial(self._read, "read_mortgage_authority"),
            "search_web": self._search_web,
        }
        handler = handlers.get(name)
        if handler is None:
            return _error(f"There is no tool named {name!r}.")
        try:
            outcome = handler(tool_input)
        except (ReaderError, SandboxError, WebSearchError) as exc:
            return _error(str(exc))
        except Exception:
            log.exception("tool %s failed", name)
            return _error(f"{name} failed unexpectedly; try a different approach.")
        return outcome

    def _field(self, tool_input: dict[str, Any], name: str) -> str:
        value = tool_input.get(name)
        if not isinstance(value, str):
            raise ReaderError(f"The input needs a string field {name!r}.")
        return value

    def _execute_sql(self, tool_input: dict[str, Any]) -> ToolOutcome:
        result = run_sql(self.engine, self.user_id, self._field(tool_input, "query"))
        if result.error is not None:
            return _error(result.error)
        citables = from_sql(result, _stamp())
        content = [c.search_result() for c in citables]
        if not result.rows:
            content.append(_text("The query returned no rows."))
        if result.truncated:
            content.append(_text(f"Only the first {len(result.rows)} rows are shown."))
        return ToolOutcome(content, citables)

    def _execute_python(self, tool_input: dict[str, Any]) -> ToolOutcome:
        result = run_python(self._field(tool_input, "code"), hide=self.hide)
        citables = from_python(result.stdout, result.finnhub, result.articles, _stamp())
        content: list[dict[str, Any]] = [c.search_result() for c in citables]
        if result.error is not None:
            content.append(_text(f"Error: {result.error}"))
        if result.stderr.strip() and result.error is None:
            content.append(_text(f"stderr:\n{result.stderr[-2000:]}"))
        if not content:
            content.append(_text("The code ran and printed nothing."))
        return ToolOutcome(content, citables, is_error=result.error is not None and not citables)

    def _read(self, tool: str, tool_input: dict[str, Any]) -> ToolOutcome:
        read = read_document(tool, self._field(tool_input, "path"))
        if isinstance(read, FolderListing):
            return ToolOutcome([_text(_listing(read))])
        citable = from_document(tool, read)
        return ToolOutcome([citable.search_result()], [citable])

    def _search_web(self, tool_input: dict[str, Any]) -> ToolOutcome:
        results = search_web(self._field(tool_input, "query"), provider=self.web)
        if not results:
            return ToolOutcome([_text("No results.")])
        citables = from_web_results(results)
        return ToolOutcome([c.search_result() for c in citables], citables)
