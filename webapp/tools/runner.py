"""Run the model's tool calls for one user, turning each result into citable content.

docs/architecture.md#service-grade-contracts: at most `max_bytes` (TOOL_RESULT_MAX_BYTES) of text
per call reaches the model, on every backend, for every tool; a longer result is cut, and a
note says so. The tools bound their own reading too (the SQL service stops reading rows once
the bytes are spent, the sandbox keeps only so much output), so what is cut here is already
small: memory, the checkpoint and the events stay bounded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

from sqlalchemy.engine import Engine

from ..citations.citable import (
    Citable,
    ToolOutcome,
    from_document,
    from_python,
    from_sql,
    from_web_results,
)
from ..citations.urls import marker_safe_link
from ..settings import DEFAULT_TOOL_RESULT_MAX_BYTES, MIN_TOOL_RESULT_MAX_BYTES
from ..tool_registry import EXECUTE_PYTHON, EXECUTE_SQL, READERS, SEARCH_WEB
from .python.market import MarketData
from .python.results import SandboxError
from .python.run import run_python
from .readers import FolderListing, ReaderError, read_document
from .sql.service import run_sql
from .web_index import WebSearchError
from .web_search import WebSearchProvider, search_web

log = logging.getLogger(__name__)

# The sandbox's own bound on printed output, when the budget is larger.
PYTHON_OUTPUT_BYTES = 64 * 1024
STDERR_CHARS = 2000
# What the note that says a result was cut may take of the budget.
_NOTE_BYTES = 512
# A title longer than this is cut when the result must be.
_CUT_TITLE_BYTES = 256


def tool_result_max_bytes(value: object) -> int:
    """Return TOOL_RESULT_MAX_BYTES from its setting: a whole number of bytes, or the default."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_TOOL_RESULT_MAX_BYTES
    try:
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError
        number = int(value)
    except ValueError:
        raise ValueError(
            f"TOOL_RESULT_MAX_BYTES must be a whole number of bytes, not {value!r}."
        ) from None
    if number < MIN_TOOL_RESULT_MAX_BYTES:
        raise ValueError(f"TOOL_RESULT_MAX_BYTES must be at least {MIN_TOOL_RESULT_MAX_BYTES}.")
    return number


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _cut(text: str, limit: int) -> str:
    """Return `text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    if limit <= 0:
        return ""
    if len(text) * 4 <= limit:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    return text if len(raw) <= limit else raw[:limit].decode("utf-8", "ignore")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


@dataclass
class _Result:
    """A tool's result before the byte budget: blocks to cite, then notes for the model."""

    citables: list[Citable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    is_error: bool = False


def _error(message: str) -> _Result:
    return _Result(notes=[message], is_error=True)


def _citable_size(citable: Citable) -> int:
    return _size(citable.source) + _size(citable.title) + sum(map(_size, citable.texts))


def _cut_citable(citable: Citable, room: int) -> Citable | None:
    """Return `citable` with as much of its text as fits in `room` bytes, or None."""
    title = citable.title
    head = _size(citable.source) + _size(title)
    if head >= room:
        title = _cut(title, _CUT_TITLE_BYTES)
        head = _size(citable.source) + _size(title)
        if head >= room:
            return None
    left = room - head
    texts: list[str] = []
    for text in citable.texts:
        piece = _cut(text, left)
        if piece.strip():
            texts.append(piece)
        left -= _size(piece)
        if piece != text:
            break
    return replace(citable, title=title, texts=tuple(texts)) if texts else None


def _cut_note(max_bytes: int, total: int, shown: int, of: int) -> str:
    note = (
        f"[This tool result was cut: it had {total:,} bytes of text, and a tool call "
        f"returns at most {max_bytes:,}."
    )
    if of:
        note += f" {shown} of its {of} search results are shown, the last one possibly cut short."
    return note + (
        " Ask for less to see the rest: fewer rows or columns, a narrower query "
        "or search, or shorter output.]"
    )


def fit(result: _Result, max_bytes: int) -> ToolOutcome:
    """Return the outcome the model reads: `result`, cut to `max_bytes` of text with a note."""
    total = sum(map(_citable_size, result.citables)) + sum(map(_size, result.notes))
    if total <= max_bytes:
        return ToolOutcome(
            [c.search_result() for c in result.citables] + [_text(note) for note in result.notes],
            list(result.citables),
            is_error=result.is_error,
        )
    room = max_bytes - _NOTE_BYTES
    # The notes first: they say what went wrong or what is missing, and they are short.
    notes = []
    for note in result.notes:
        kept = _cut(note, min(room, max(room // 4, 1024)))
        room -= _size(kept)
        if kept:
            notes.append(kept)
    citables: list[Citable] = []
    for citable in result.citables:
        kept_citable = _cut_citable(citable, room)
        if kept_citable is None:
            break
        citables.append(kept_citable)
        room -= _citable_size(kept_citable)
    note = _cut_note(max_bytes, total, len(citables), len(result.citables))
    content = [c.search_result() for c in citables] + [_text(n) for n in [*notes, note]]
    return ToolOutcome(content, citables, is_error=result.is_error)


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


def _linked(citables: list[Citable]) -> list[Citable]:
    """Return `citables` with links that a `[[n]](link)` marker can carry as they are."""
    return [c if c.link is None else replace(c, link=marker_safe_link(c.link)) for c in citables]


@dataclass
class LocalTools:
    """The registered tools (`webapp/tool_registry.py`), over the user's own rows and the
    bundled corpora and indexes."""

    engine: Engine
    user_id: int
    # Folders the Python sandbox must not see besides its defaults (the app's instance folder).
    hide: tuple[str, ...] = ()
    # Where search_web and execute_python search, and execute_python's market data: the
    # app's (`webapp.services`); None for the bundled local index and snapshot.
    web: WebSearchProvider | None = None
    market: MarketData | None = None
    # The most text one call's result may hand the model (TOOL_RESULT_MAX_BYTES).
    max_bytes: int = DEFAULT_TOOL_RESULT_MAX_BYTES
    # Set when the turn is stopped (cancelled, past its deadline): a sandbox ends at once.
    stopped: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        """End what is running for this turn now; later calls still run (and are ignored)."""
        self.stopped.set()

    @staticmethod
    def max_bytes_from(config: Mapping[str, Any]) -> int:
        """Return the app's TOOL_RESULT_MAX_BYTES (`config` is the app's config)."""
        return tool_result_max_bytes(config.get("TOOL_RESULT_MAX_BYTES"))

    def run(self, name: str, tool_input: dict[str, Any]) -> ToolOutcome:
        """Run one call; bad input and tool failures come back as error outcomes."""
        handler = self.handlers().get(name)
        if handler is None:
            return fit(_error(f"There is no tool named {name!r}."), self.max_bytes)
        try:
            result = handler(tool_input)
        except (ReaderError, SandboxError, WebSearchError) as exc:
            result = _error(str(exc))
        except Exception:
            log.exception("tool %s failed", name)
            result = _error(f"{name} failed unexpectedly; try a different approach.")
        result.citables = _linked(result.citables)
        return fit(result, self.max_bytes)

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], _Result]]:
        """Return each registered tool's executor, by name (`webapp/tool_registry.py`)."""
        return {
            EXECUTE_SQL: self._execute_sql,
            EXECUTE_PYTHON: self._execute_python,
            **{reader: partial(self._read, reader) for reader in READERS},
            SEARCH_WEB: self._search_web,
        }

    def _field(self, tool_input: dict[str, Any], name: str) -> str:
        value = tool_input.get(name)
        if not isinstance(value, str):
            raise ReaderError(f"The input needs a string field {name!r}.")
        return value

    def _execute_sql(self, tool_input: dict[str, Any]) -> _Result:
        result = run_sql(
            self.engine, self.user_id, self._field(tool_input, "query"), max_bytes=self.max_bytes
        )
        if result.error is not None:
            return _error(result.error)
        out = _Result(from_sql(result, _stamp()))
        if not result.rows:
            out.notes.append("The query returned no rows.")
        if result.truncated and result.cut:
            out.notes.append(
                f"Only the first {len(result.rows)} rows are shown: the result "
                f"reached the limit of {self.max_bytes:,} bytes of text per tool "
                "call. Ask for fewer or shorter columns, or fewer rows."
            )
        elif result.truncated:
            out.notes.append(f"Only the first {len(result.rows)} rows are shown.")
        elif result.cut:
            out.notes.append(
                "Values too long for the limit of "
                f"{self.max_bytes:,} bytes of text per tool call are cut short; "
                "each says so."
            )
        return out

    def _execute_python(self, tool_input: dict[str, Any]) -> _Result:
        result = run_python(
            self._field(tool_input, "code"),
            hide=self.hide,
            cancel=self.stopped,
            output_limit=min(PYTHON_OUTPUT_BYTES, self.max_bytes),
            market=self.market,
            search=self.web,
        )
        citables = from_python(result.stdout, result.finnhub, result.articles, _stamp())
        out = _Result(citables, is_error=result.error is not None and not citables)
        if result.error is not None:
            out.notes.append(f"Error: {result.error}")
        if result.stderr.strip() and result.error is None:
            out.notes.append(f"stderr:\n{result.stderr[-STDERR_CHARS:]}")
        if not citables and not out.notes:
            out.notes.append("The code ran and printed nothing.")
        return out

    def _read(self, tool: str, tool_input: dict[str, Any]) -> _Result:
        read = read_document(tool, self._field(tool_input, "path"))
        if isinstance(read, FolderListing):
            return _Result(notes=[_listing(read)])
        return _Result([from_document(tool, read)])

    def _search_web(self, tool_input: dict[str, Any]) -> _Result:
        results = search_web(self._field(tool_input, "query"), provider=self.web)
        if not results:
            return _Result(notes=["No results."])
        return _Result(from_web_results(results))
