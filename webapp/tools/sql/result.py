"""What `run_sql` returns: columns, JSON-safe rows, a truncation flag, or a clear error.

Rows are read into a result one at a time, within two bounds: `max_rows`, and `max_bytes`
of text (docs/architecture.md#service-grade-contracts: a tool call's result is at most
TOOL_RESULT_MAX_BYTES). A value longer than its share of the bytes is cut as it is read,
and no row is read once the bytes are spent, so a hostile query never fills the worker's
memory, the checkpoint or the events.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from webapp.settings import DEFAULT_TOOL_RESULT_MAX_BYTES
from webapp.store.schema import QUERY_VIEWS
from webapp.store.values import JsonValue, json_safe

VIEWS_HINT = "query only the views " + ", ".join(QUERY_VIEWS)
DEFAULT_MAX_BYTES = DEFAULT_TOOL_RESULT_MAX_BYTES
# The least a value may keep however many columns share the bytes.
MIN_VALUE_BYTES = 256


class QueryRejected(Exception):
    """The query may not run; the message says why, in words fit for the model."""


@dataclass(frozen=True, slots=True)
class SqlResult:
    """The outcome of one `execute_sql` call: rows, or an `error` message and no rows.

    `truncated`: the query had more rows than are shown. `cut`: the byte bound left rows
    out or cut values short (a cut value ends with a note that says so).
    """

    columns: tuple[str, ...] = ()
    rows: tuple[dict[str, JsonValue], ...] = field(default_factory=tuple)
    truncated: bool = False
    error: str | None = None
    cut: bool = False

    @classmethod
    def failed(cls, message: str) -> SqlResult:
        """Return a result that carries only `message`."""
        return cls(error=message)


@dataclass(frozen=True, slots=True)
class CutValue:
    """A value the database already cut (PostgreSQL): the start of its text."""

    prefix: str


def unique_columns(names: Iterable[str]) -> tuple[str, ...]:
    """Return `names` with repeats renamed `name_2`, `name_3`, ... so each row key is unique."""
    seen: set[str] = set()
    unique: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate)
        unique.append(candidate)
    return tuple(unique)


def value_bytes(max_bytes: int, columns: int) -> int:
    """Return the most bytes of text one value keeps: its column's share of `max_bytes`."""
    return max(MIN_VALUE_BYTES, max_bytes // max(1, columns))


def cut_text(text: str, limit: int) -> str:
    """Return `text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    if len(text) * 4 <= limit:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= limit:
        return text
    return raw[:limit].decode("utf-8", "ignore")


def _cut_note(limit: int) -> str:
    return f" … [cut: the value is longer than {limit} bytes]"


def _text_of(value: JsonValue) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return "null" if value is None else str(value)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class RowReader:
    """Take rows until `max_rows` or `max_bytes` is reached, cutting values that are too long."""

    def __init__(self, names: Iterable[str], *, max_rows: int, max_bytes: int) -> None:
        self.columns = unique_columns(names)
        self.max_rows, self.max_bytes = max_rows, max_bytes
        self.limit = value_bytes(max_bytes, len(self.columns))
        self.rows: list[dict[str, JsonValue]] = []
        self.used = 0
        self.more = False
        self.cut = False

    @property
    def full(self) -> bool:
        """Tell whether no further row may be taken."""
        return len(self.rows) >= self.max_rows or self.used >= self.max_bytes

    def _value(self, raw: object) -> tuple[JsonValue, int]:
        if isinstance(raw, CutValue):
            self.cut = True
            text = cut_text(raw.prefix, self.limit) + _cut_note(self.limit)
            return text, _size(text)
        value = json_safe(raw)
        if value is None or isinstance(value, bool | int | float):
            return value, len(_text_of(value))
        text = _text_of(value)
        size = _size(text)
        if size <= self.limit:
            return value, size
        self.cut = True
        text = cut_text(text, self.limit) + _cut_note(self.limit)
        return text, _size(text)

    def add(self, row: Sequence[object]) -> None:
        """Take one row (call only while not `full`)."""
        taken: dict[str, JsonValue] = {}
        for column, raw in zip(self.columns, row, strict=True):
            value, size = self._value(raw)
            taken[column] = value
            self.used += len(column) + 3 + size  # "name: value\n", as the model reads it
        self.rows.append(taken)

    def result(self) -> SqlResult:
        """Return what was taken; `truncated` when rows were left unread."""
        cut = self.cut or (self.more and self.used >= self.max_bytes)
        return SqlResult(self.columns, tuple(self.rows), truncated=self.more, cut=cut)


def read_rows(
    names: Iterable[str],
    fetch: Callable[[int], Sequence[Sequence[object]]],
    *,
    max_rows: int,
    max_bytes: int = DEFAULT_MAX_BYTES,
    batch: int = 1,
) -> SqlResult:
    """Read rows with `fetch(n)` (at most `batch` at a time) until the bounds are reached.

    Once the result is full, one more row is asked for, only to tell whether there are more.
    """
    reader = RowReader(names, max_rows=max_rows, max_bytes=max_bytes)
    while True:
        want = 1 if reader.full else max(1, min(batch, max_rows - len(reader.rows) + 1))
        fetched = fetch(want)
        for row in fetched:
            if reader.full:
                reader.more = True
                break
            reader.add(row)
        if reader.more or len(fetched) < want:
            return reader.result()


def build_result(
    names: Iterable[str],
    fetched: Sequence[Sequence[object]],
    max_rows: int,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> SqlResult:
    """Return the first `max_rows` of `fetched` (one more was fetched to detect truncation)."""
    rows = iter(fetched)

    def fetch(n: int) -> list[Sequence[object]]:
        return [row for _, row in zip(range(n), rows, strict=False)]

    return read_rows(names, fetch, max_rows=max_rows, max_bytes=max_bytes, batch=len(fetched))
