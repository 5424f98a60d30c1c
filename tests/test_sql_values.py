"""Result values are JSON-safe and column names unique, the same on every backend."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest

from webapp.store.values import json_safe
from webapp.tools.sql.result import SqlResult, build_result, unique_columns


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        (True, True),
        (7, 7),
        ("text", "text"),
        (1.5, 1.5),
        (float("inf"), "inf"),
        (float("nan"), "nan"),
        (Decimal("1842.17"), 1842.17),
        (Decimal("25.00000000"), 25.0),
        (Decimal("0.1234567890123456789"), "0.1234567890123456789"),
        (Decimal("NaN"), "NaN"),
        (dt.date(2024, 5, 1), "2024-05-01"),
        (dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC), "2024-05-01T12:30:00+00:00"),
        (dt.time(9, 15), "09:15:00"),
        (dt.timedelta(days=1, seconds=30), 86430.0),
        (b"\x00\xff", "00ff"),
        (memoryview(b"\x01"), "01"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        ([Decimal("1.5"), dt.date(2024, 1, 2)], [1.5, "2024-01-02"]),
        ({"a": Decimal("2")}, {"a": 2.0}),
        (object, "<class 'object'>"),
    ],
    ids=[
        "none",
        "bool",
        "int",
        "str",
        "float",
        "inf",
        "nan",
        "money",
        "quantity",
        "fine-decimal",
        "decimal-nan",
        "date",
        "datetime",
        "time",
        "interval",
        "bytes",
        "memoryview",
        "uuid",
        "list",
        "mapping",
        "other",
    ],
)
def test_values_become_json_safe(value: object, expected: object) -> None:
    converted = json_safe(value)
    assert converted == expected
    assert json.loads(json.dumps(converted, allow_nan=False)) == expected


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["a", "b"], ("a", "b")),
        (["a", "a", "a"], ("a", "a_2", "a_3")),
        (["a", "a_2", "a"], ("a", "a_2", "a_3")),
        ([], ()),
    ],
    ids=["distinct", "repeated", "clash-with-renamed", "none"],
)
def test_repeated_column_names_are_made_unique(names: list[str], expected: tuple[str, ...]) -> None:
    assert unique_columns(names) == expected


@pytest.mark.parametrize(("fetched", "truncated"), [(3, False), (4, True)], ids=["fits", "over"])
def test_results_are_capped_and_flagged(fetched: int, truncated: bool) -> None:
    result = build_result(["n", "n"], [(i, Decimal(i)) for i in range(fetched)], max_rows=3)
    assert result == SqlResult(
        ("n", "n_2"), tuple({"n": i, "n_2": float(i)} for i in range(3)), truncated, None
    )
