"""What `run_sql` returns: columns, JSON-safe rows, a truncation flag, or a clear error."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from webapp.store import QUERY_VIEWS, JsonValue, json_safe

VIEWS_HINT = "query only the views " + ", ".join(QUERY_VIEWS)


class QueryRejected(Exception):
    """The query may not run; the message says why, in words fit for the model."""


@dataclass(frozen=True, slots=True)
class SqlResult:
    """The outcome of one `execute_sql` call: rows, or an `error` message and no rows."""

    columns: tuple[str, ...] = ()
    rows: tuple[dict[str, JsonValue], ...] = field(default_factory=tuple)
    truncated: bool = False
    error: str | None = None

    @classmethod
    def failed(cls, message: str) -> SqlResult:
        """Return a result that carries only `message`."""
        return cls(error=message)


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


def build_result(
    names: Iterable[str], fetched: Sequence[Sequence[object]], max_rows: int
) -> SqlResult:
    """Return the first `max_rows` of `fetched` (one more was fetched to detect truncation)."""
    columns = unique_columns(names)
    rows = tuple(
        {column: json_safe(value) for column, value in zip(columns, row, strict=True)}
        for row in fetched[:max_rows]
    )
    return SqlResult(columns, rows, truncated=len(fetched) > max_rows)
