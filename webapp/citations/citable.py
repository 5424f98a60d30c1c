"""Tool results become citable content: Claude `search_result` blocks, each with its target.

docs/specs.md, rules T3-T8, decide each block's source and target; rule J1 what a block
shows. Pure: tool results come in as plain values (the protocols below), blocks go out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from ..text import valid_text
from ..tool_registry import EXECUTE_PYTHON, EXECUTE_SQL, SEARCH_WEB, Content
from .account_ids import ID_COLUMNS
from .market import as_of, describe
from .sources import (
    ANALYSIS_SOURCE,
    FILE_ID_COLUMN,
    MARKET_DATA_SOURCE,
    PYTHON_SEARCH_SOURCE,
    SEARCH_SOURCE,
    is_http_url,
    market_data_source,
    target_for_source,
    targets_for_sql,
)
from .targets import CitationTarget, UserFileTarget
from .urls import humanize_citation_url

MAX_BLOCK_CHARS = 1500
MAX_BLOCKS = 40
# Never shown: `source` names a data provider, and ids are routing data, not reading matter.
_HIDDEN_COLUMNS = frozenset({"source", "user_id", FILE_ID_COLUMN, *ID_COLUMNS})
_PARAGRAPHS = re.compile(r"\n\s*\n")
# The views' column for when a row's data last synced (UTC; NULL for a manual account).
SYNC_COLUMN = "synced_at"


@dataclass(frozen=True, slots=True)
class Citable:
    """One search result the model may cite, and what the turn knows about it."""

    tool: str
    source: str
    title: str
    texts: tuple[str, ...]
    target: CitationTarget | None
    source_type: str
    link: str | None = None
    updated_at: str | None = None
    is_internet: bool = False
    # The user file the block's rows came from: the sheet lists it under User Files.
    file_id: str | None = None

    def search_result(self) -> dict[str, Any]:
        """Return the Claude `search_result` block, citations enabled."""
        return {
            "type": "search_result",
            "source": self.source,
            "title": self.title,
            "content": [{"type": "text", "text": text} for text in self.texts],
            "citations": {"enabled": True},
        }


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool's result: what the model reads, and the blocks it may cite."""

    content: list[dict[str, Any]]
    citables: list[Citable] = field(default_factory=list)
    is_error: bool = False


def valid_citable(citable: Citable) -> Citable:
    """Return `citable` with its text valid Unicode (`webapp.text`), as it may be stored.

    A source that changes in the cleaning was a web page's address (every other source is
    made of the app's own names and ids), so its target is made again from the clean one.
    """
    source = valid_text(citable.source)
    cleaned = replace(
        citable,
        source=source,
        title=valid_text(citable.title),
        texts=tuple(valid_text(text) for text in citable.texts),
        link=None if citable.link is None else valid_text(citable.link),
        updated_at=None if citable.updated_at is None else valid_text(citable.updated_at),
    )
    if source != citable.source:
        cleaned = replace(cleaned, target=target_for_source(citable.tool, source))
    return cleaned


class SqlResultLike(Protocol):
    @property
    def columns(self) -> Sequence[str]: ...
    @property
    def rows(self) -> Sequence[Mapping[str, object]]: ...
    @property
    def truncated(self) -> bool: ...


class DocumentLike(Protocol):
    @property
    def corpus(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def source_url(self) -> str | None: ...
    @property
    def section(self) -> str | None: ...


class FinnhubCallLike(Protocol):
    @property
    def endpoint(self) -> str: ...
    @property
    def ticker(self) -> str | None: ...
    @property
    def payload(self) -> object: ...


class ArticleLike(Protocol):
    @property
    def url(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def published_date(self) -> str | None: ...


def chunks(text: str) -> tuple[str, ...]:
    """Split text into paragraph blocks of bounded size; never an empty block."""
    blocks: list[str] = []
    for paragraph in _PARAGRAPHS.split(text.strip()):
        paragraph = paragraph.strip()
        while paragraph:
            blocks.append(paragraph[:MAX_BLOCK_CHARS])
            paragraph = paragraph[MAX_BLOCK_CHARS:].strip()
    return tuple(blocks[:MAX_BLOCKS])


def _row_text(row: Mapping[str, object]) -> str:
    lines = [f"{k}: {_cell(v)}" for k, v in row.items() if k not in _HIDDEN_COLUMNS]
    return "\n".join(lines) or "(no readable columns)"


def _cell(value: object) -> str:
    return "null" if value is None else str(value)


def _web(tool: str, source: str, title: str, text: str, published: str | None) -> Citable:
    if not is_http_url(source):
        source = SEARCH_SOURCE if tool == SEARCH_WEB else PYTHON_SEARCH_SOURCE
    return Citable(
        tool,
        source,
        title.strip() or source,
        chunks(text) or (title or source,),
        target_for_source(tool, source),
        "web",
        link=source if is_http_url(source) else None,
        updated_at=published,
        is_internet=True,
    )


def _sync_time(value: object) -> datetime | None:
    """Read one `synced_at` cell (ISO text from either database, or a datetime) as UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    # SQLite keeps the UTC time without its offset.
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:  # a time at the very edge of the calendar, e.g. year 1 at +14:00
        return None


def synced_at(rows: Iterable[Mapping[str, object]], now: str) -> str | None:
    """Return when the rows' data last synced: the OLDEST sync time among them.

    A figure drawn from several rows is only as fresh as its stalest row. Rows that do not
    carry the column at all (the query did not select it) keep `now`, the moment they were
    read, as before; rows that carry it but hold no time (a manual account, never synced)
    give None, since no moment can honestly be claimed for them.
    """
    carried, oldest = False, None
    for row in rows:
        if SYNC_COLUMN not in row:
            continue
        carried = True
        moment = _sync_time(row[SYNC_COLUMN])
        if moment is not None and (oldest is None or moment < oldest):
            oldest = moment
    if not carried:
        return now
    return oldest.isoformat() if oldest is not None else None


def from_sql(result: SqlResultLike, now: str) -> list[Citable]:
    """Cite SQL rows per account label (`silvia://your-account/<slug>`) or as the portfolio.

    Each source is dated by its rows' sync time (`synced_at`), not by when they were read.
    """
    citables = []
    for group in targets_for_sql(result.rows):
        file_id = group.target.file_id if isinstance(group.target, UserFileTarget) else None
        kind = (
            group.target.kind
            if group.target is not None and group.target.kind in ("portfolio", "file")
            else "account"
        )
        # Only the rows a block shows are written out; the target still covers every row.
        texts = tuple(_row_text(row) for row in group.rows[:MAX_BLOCKS])
        updated_at = synced_at(group.rows, now)
        citables.append(
            Citable(
                EXECUTE_SQL,
                group.source,
                group.title,
                texts,
                group.target,
                kind,
                updated_at=updated_at,
                file_id=file_id,
            )
        )
    return citables


def from_document(tool: str, document: DocumentLike) -> Citable:
    """Cite a corpus document under its readable official URL, or its `silvia://` path."""
    if document.source_url and is_http_url(document.source_url):
        source = humanize_citation_url(document.source_url, document.section)
    else:
        source = f"silvia://{document.corpus}/{document.path.lstrip('/')}"
    target = target_for_source(tool, source)
    return Citable(
        tool,
        source,
        document.title,
        chunks(document.text) or (document.title,),
        target,
        target.kind if target is not None else "document",
        link=source if is_http_url(source) else None,
    )


def _plain(value: object) -> object:
    """Return JSON-ready values: read-only mappings and tuples become dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _payload(call: FinnhubCallLike) -> dict[str, Any]:
    plain = _plain(call.payload)
    return plain if isinstance(plain, dict) else {"value": plain}


def from_python(
    stdout: str,
    calls: Iterable[FinnhubCallLike],
    articles: Iterable[ArticleLike],
    now: str,
) -> list[Citable]:
    """Cite market data per ticker, printed output as live data or analysis, articles as web."""
    by_ticker: dict[str, list[str]] = {}
    untickered: list[str] = []
    moments: dict[str, datetime] = {}
    for call in calls:
        source = market_data_source(call.ticker)
        payload = _payload(call)
        texts = untickered if source == MARKET_DATA_SOURCE else by_ticker.setdefault(source, [])
        texts.append(describe(call.endpoint, call.ticker, payload)[:MAX_BLOCK_CHARS])
        moment = as_of(call.endpoint, payload)
        if moment is not None and (source not in moments or moment > moments[source]):
            moments[source] = moment
    printed = chunks(stdout)
    if printed and len(by_ticker) == 1 and not untickered:
        next(iter(by_ticker.values())).extend(printed)  # Output about exactly one ticker.
    elif printed and (by_ticker or untickered):
        untickered.extend(printed)  # Finnhub data printed without one ticker: live data.

    def dated(source: str) -> str:
        # Market data is as old as the quote it shows, not as the moment it was read.
        moment = moments.get(source)
        return moment.isoformat() if moment else now

    citables = [
        Citable(
            EXECUTE_PYTHON,
            source,
            f"{source.rsplit('/', 1)[-1]} market data",
            tuple(texts)[:MAX_BLOCKS],
            target_for_source(EXECUTE_PYTHON, source),
            "market_data",
            updated_at=dated(source),
        )
        for source, texts in by_ticker.items()
    ]
    if untickered:
        citables.append(
            Citable(
                EXECUTE_PYTHON,
                MARKET_DATA_SOURCE,
                "Live data",
                tuple(untickered)[:MAX_BLOCKS],
                target_for_source(EXECUTE_PYTHON, MARKET_DATA_SOURCE),
                "analysis",
                updated_at=dated(MARKET_DATA_SOURCE),
            )
        )
    elif printed and not by_ticker:
        citables.append(
            Citable(
                EXECUTE_PYTHON,
                ANALYSIS_SOURCE,
                "Analysis",
                printed,
                target_for_source(EXECUTE_PYTHON, ANALYSIS_SOURCE),
                "analysis",
                updated_at=now,
            )
        )
    citables += [_web(EXECUTE_PYTHON, a.url, a.title, a.text, a.published_date) for a in articles]
    return citables


def from_web_results(results: Iterable[ArticleLike]) -> list[Citable]:
    """Cite each web result under its URL (or the search itself when it has none)."""
    return [_web(SEARCH_WEB, r.url, r.title, r.text, r.published_date) for r in results]


# How each kind of tool result becomes citable content: the registry's `ToolSpec.content`
# names one of these (tests/test_tool_registry.py checks that each has its converter).
CITABLE_FROM: Mapping[Content, Callable[..., Citable | list[Citable]]] = {
    "sql_rows": from_sql,
    "python_run": from_python,
    "library_document": from_document,
    "web_results": from_web_results,
}
