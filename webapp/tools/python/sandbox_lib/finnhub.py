"""Market data in Finnhub's shapes: `quote`, `profile` and `candles` (or a finnhub-python `Client`).

    import finnhub
    finnhub.quote("AAPL")        # {"c", "d", "dp", "h", "l", "o", "pc", "t"}
    finnhub.profile("AAPL")      # {"country", "currency", "exchange", "ipo", "name", ...}
    finnhub.candles("AAPL", "D", from_ts, to_ts)  # {"c": [...], ..., "s": "ok"} or {"s": "no_data"}

Without a live key the data is a bundled snapshot; the quote's "t" says when it was taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import _sandbox_rpc as rpc
else:  # in the sandbox this folder is on sys.path, so the module is top-level
    import _sandbox_rpc as rpc


class FinnhubAPIException(rpc.DataError):  # finnhub-python's own name
    """A market-data request that was refused or could not be served."""


__all__ = ["Client", "FinnhubAPIException", "candles", "profile", "quote"]

_E = FinnhubAPIException


def quote(symbol: str) -> dict[str, Any]:
    """Return the latest quote: current, change, % change, high, low, open, previous close, time."""
    return dict(rpc.call({"op": "finnhub", "endpoint": "quote", "symbol": symbol}, _E))


def profile(symbol: str) -> dict[str, Any]:
    """Return the company profile (Finnhub's profile2); {} for an unknown symbol."""
    return dict(rpc.call({"op": "finnhub", "endpoint": "stock/profile2", "symbol": symbol}, _E))


def candles(symbol: str, resolution: str, from_ts: int, to_ts: int) -> dict[str, Any]:
    """Return OHLCV candles between two UNIX times (seconds); resolution "D" for daily."""
    request = {
        "op": "finnhub",
        "endpoint": "stock/candle",
        "symbol": symbol,
        "resolution": resolution,
        "from": int(from_ts),
        "to": int(to_ts),
    }
    return dict(rpc.call(request, _E))


class Client:
    """finnhub-python's client surface over the same data; the api_key is ignored here."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key

    def quote(self, symbol: str) -> dict[str, Any]:
        return quote(symbol)

    def company_profile2(self, symbol: str) -> dict[str, Any]:
        return profile(symbol)

    def stock_candles(self, symbol: str, resolution: str, _from: int, to: int) -> dict[str, Any]:
        return candles(symbol, resolution, _from, to)
