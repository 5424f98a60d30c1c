"""Turn database values into plain JSON-safe ones, the same on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Mapping
from decimal import Decimal

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


def _decimal(value: Decimal) -> float | str:
    if not value.is_finite():
        return str(value)
    as_float = float(value)
    # Money fits a float exactly enough to print the same; anything finer stays a string.
    return as_float if Decimal(repr(as_float)) == value else str(value)


def json_safe(value: object) -> JsonValue:
    """Return `value` as something `json.dumps` writes as standard JSON."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return str(value)
