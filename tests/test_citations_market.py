"""Finnhub payloads described in words, and dated by their own timestamps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from webapp.citations.market import as_of, describe

DAY = 1751054400  # 2025-06-27 20:00 UTC


@pytest.mark.parametrize(
    ("endpoint", "payload", "text"),
    [
        (
            "quote",
            {
                "c": 192.78,
                "d": 0.09,
                "dp": 0.0467,
                "h": 194.04,
                "l": 191.8,
                "o": 192.64,
                "pc": 192.69,
                "t": DAY,
            },
            "AAPL last traded at 192.78, +0.09 (+0.05%) on the day, open 192.64, high 194.04, "
            "low 191.80, previous close 192.69 as of 2025-06-27.",
        ),
        ("quote", {"c": 10}, "AAPL last traded at 10.00."),
        (
            "stock/profile2",
            {
                "name": "Apple Inc",
                "exchange": "NASDAQ",
                "currency": "USD",
                "finnhubIndustry": "Technology",
                "marketCapitalization": 2879329.31,
            },
            "Apple Inc (AAPL) trades on NASDAQ; industry: Technology; market capitalization "
            "2,879.3 billion USD.",
        ),
        (
            "stock/candle",
            {"s": "ok", "c": [1, 2, 3], "t": [DAY - 172800, DAY - 86400, DAY]},
            "AAPL closed at 1.00, then 3.00, over 3 sessions from 2025-06-25 to 2025-06-27; "
            "low 1.00, high 3.00.",
        ),
        ("stock/candle", {"s": "no_data"}, 'stock/candle AAPL: {"s": "no_data"}'),
        ("quote", {"c": "oops", "t": "never"}, 'quote AAPL: {"c": "oops", "t": "never"}'),
        ("news", {"x": 1}, 'news AAPL: {"x": 1}'),
    ],
    ids=["quote", "bare-quote", "profile", "candles", "no-data", "malformed", "unknown"],
)
def test_describe(endpoint: str, payload: dict[str, Any], text: str) -> None:
    assert describe(endpoint, "AAPL", payload) == text


@pytest.mark.parametrize(
    ("endpoint", "payload", "moment"),
    [
        ("quote", {"t": DAY}, datetime(2025, 6, 27, 20, tzinfo=UTC)),
        ("stock/candle", {"t": [1, DAY]}, datetime(2025, 6, 27, 20, tzinfo=UTC)),
        ("quote", {"t": True}, None),
        ("quote", {"t": 10**20}, None),
        ("quote", {"t": float("nan")}, None),
        ("stock/profile2", {}, None),
    ],
    ids=["quote", "last-candle", "bool", "overflow", "nan", "none"],
)
def test_as_of(endpoint: str, payload: dict[str, Any], moment: datetime | None) -> None:
    assert as_of(endpoint, payload) == moment
