"""The `execute_sql` query service: the model's SQL, read-only, over one user's views only."""

from __future__ import annotations

from .result import DEFAULT_MAX_BYTES, SqlResult, unique_columns
from .service import DEFAULT_TIMEOUT, MAX_QUERY_LENGTH, run_sql

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_TIMEOUT",
    "MAX_QUERY_LENGTH",
    "SqlResult",
    "run_sql",
    "unique_columns",
]
