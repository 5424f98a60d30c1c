"""Finnhub payloads in words, and when their data is from (for "Updated ..." in the sheet).

Shapes: quote {c, d, dp, h, l, o, pc, t}; stock/profile2 {name, ticker, exchange, currency,
marketCapitalization (millions), finnhubIndustry, ...}; stock/candle {c, h, l, o, s, t, v}.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _moment(value: object) -> datetime | None:
    seconds = _number(value)
    if seconds is None or seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _day(moment: datetime | None) -> str:
    return f" as of {moment:%Y-%m-%d}" if moment else ""


def _quote(ticker: str, payload: Mapping[str, Any]) -> str | None:
    last = _number(payload.get("c"))
    if last is None:
        return None
    parts = [f"{ticker} last traded at {last:,.2f}"]
    change, percent = _number(payload.get("d")), _number(payload.get("dp"))
    if change is not None and percent is not None:
        parts.append(f"{change:+,.2f} ({percent:+.2f}%) on the day")
    for key, label in (("o", "open"), ("h", "high"), ("l", "low"), ("pc", "previous close")):
        value = _number(payload.get(key))
        if value is not None:
            parts.append(f"{label} {value:,.2f}")
    return ", ".join(parts) + _day(_moment(payload.get("t"))) + "."


def _profile(ticker: str, payload: Mapping[str, Any]) -> str | None:
    name = payload.get("name")
    if not isinstance(name, str) or not name:
        return None
    text = f"{name} ({ticker})"
    if isinstance(payload.get("exchange"), str):
        text += f" trades on {payload['exchange']}"
    if isinstance(payload.get("finnhubIndustry"), str):
        text += f"; industry: {payload['finnhubIndustry']}"
    cap = _number(payload.get("marketCapitalization"))
    if cap is not None:
        text += f"; market capitalization {cap / 1000:,.1f} billion {payload.get('currency', '')}"
    return text.rstrip() + "."


def _candles(ticker: str, payload: Mapping[str, Any]) -> str | None:
    closes, times = payload.get("c"), payload.get("t")
    if payload.get("s") != "ok" or not isinstance(closes, Sequence) or not closes:
        return None
    numbers = [n for n in (_number(c) for c in closes) if n is not None]
    if not numbers or not isinstance(times, Sequence) or not times:
        return None
    first, last = _moment(times[0]), _moment(times[-1])
    span = f" from {first:%Y-%m-%d} to {last:%Y-%m-%d}" if first and last else ""
    return (
        f"{ticker} closed at {numbers[0]:,.2f}, then {numbers[-1]:,.2f}, over "
        f"{len(numbers)} sessions{span}; low {min(numbers):,.2f}, high {max(numbers):,.2f}."
    )


def describe(endpoint: str, ticker: str | None, payload: Mapping[str, Any]) -> str:
    """Return a payload as a sentence; unknown shapes fall back to compact JSON."""
    label = ticker or "the market"
    writers = {"quote": _quote, "stock/profile2": _profile, "stock/candle": _candles}
    writer = writers.get(endpoint)
    text = writer(label, payload) if writer else None
    return text or f"{endpoint} {ticker or ''}".strip() + ": " + json.dumps(
        payload, sort_keys=True, default=str
    )


def as_of(endpoint: str, payload: Mapping[str, Any]) -> datetime | None:
    """Return when a payload's data is from, if it says."""
    stamp: object = payload.get("t")
    if endpoint == "stock/candle" and isinstance(stamp, Sequence) and stamp:
        stamp = stamp[-1]
    return _moment(stamp)
