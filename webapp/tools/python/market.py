"""Market data for the sandbox, in Finnhub's payload shapes: a bundled snapshot or live Finnhub.

Only the parent process uses this module: the sandboxed code asks for data over a pipe and
never holds the API key (docs/specs.md#tools-and-data; https://finnhub.io/docs/api).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import requests

from ...settings import FINNHUB_BASE_URL

MARKET_DIR = Path(__file__).resolve().parent.parent.parent / "data" / "market"
RESOLUTIONS = frozenset({"1", "5", "15", "30", "60", "D", "W", "M"})

_SYMBOL = re.compile(r"[A-Z0-9][A-Z0-9.\-:^=]{0,19}", re.ASCII)
_EMPTY_QUOTE: Mapping[str, object] = {
    "c": 0, "d": None, "dp": None, "h": 0, "l": 0, "o": 0, "pc": 0, "t": 0,
}  # fmt: skip


class MarketDataError(ValueError):
    """A request the market data refuses or could not serve; safe to show the code's author."""


def normalise_symbol(symbol: object) -> str:
    """Return `symbol` upper-cased when it looks like a ticker, else raise MarketDataError."""
    if not isinstance(symbol, str) or not _SYMBOL.fullmatch(symbol.strip().upper()):
        raise MarketDataError("A symbol is 1-20 letters, digits or . - : ^ =, such as 'AAPL'.")
    return symbol.strip().upper()


def _timestamp(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**40:
        raise MarketDataError("from and to must be UNIX timestamps in seconds.")
    return value


def check_candle_args(resolution: object, start: object, end: object) -> tuple[str, int, int]:
    """Return the candle arguments validated, or raise MarketDataError."""
    if not isinstance(resolution, str) or resolution not in RESOLUTIONS:
        raise MarketDataError(f"resolution must be one of {', '.join(sorted(RESOLUTIONS))}.")
    return resolution, _timestamp(start), _timestamp(end)


class MarketData(Protocol):
    """Finnhub's quote, profile2 and candle endpoints, with symbols already normalised."""

    def quote(self, symbol: str) -> dict[str, object]: ...

    def profile(self, symbol: str) -> dict[str, object]: ...

    def candles(self, symbol: str, resolution: str, start: int, end: int) -> dict[str, object]: ...


class SnapshotMarket:
    """The bundled snapshot (`<SYMBOL>.json` files); unknown symbols get Finnhub's empty shapes."""

    def __init__(self, directory: Path = MARKET_DIR) -> None:
        self._files = {path.stem.upper(): path for path in directory.glob("*.json")}
        self._cache: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @property
    def symbols(self) -> tuple[str, ...]:
        """Return the symbols the snapshot holds."""
        return tuple(sorted(self._files))

    def _load(self, symbol: str) -> dict[str, Any] | None:
        path = self._files.get(symbol)  # only files listed at start: a symbol never builds a path
        if path is None:
            return None
        with self._lock:
            if symbol not in self._cache:
                self._cache[symbol] = json.loads(path.read_text(encoding="utf-8"))
            return self._cache[symbol]

    def quote(self, symbol: str) -> dict[str, object]:
        data = self._load(symbol)
        return dict(data["quote"]) if data else dict(_EMPTY_QUOTE)

    def profile(self, symbol: str) -> dict[str, object]:
        data = self._load(symbol)
        return dict(data["profile"]) if data else {}

    def candles(self, symbol: str, resolution: str, start: int, end: int) -> dict[str, object]:
        data = self._load(symbol)
        series = data["candles"].get(resolution) if data else None
        if not series:
            return {"s": "no_data"}
        keep = [i for i, t in enumerate(series["t"]) if start <= t <= end]
        if not keep:
            return {"s": "no_data"}
        out: dict[str, object] = {k: [series[k][i] for i in keep] for k in "chlotv"}
        out["s"] = "ok"
        return out


class FinnhubLive:
    """Finnhub's REST API through requests; the key travels in a header, never in the URL."""

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = FINNHUB_BASE_URL,
        timeout_s: float = 10.0,
        session: requests.Session | None = None,
    ) -> None:
        self._key = api_key
        self._base = base_url.rstrip("/")
        self._timeout = timeout_s
        self._session = session or requests.Session()

    def _get(self, path: str, params: Mapping[str, str | int]) -> dict[str, object]:
        try:
            response = self._session.get(
                f"{self._base}/{path}",
                params=dict(params),
                headers={"X-Finnhub-Token": self._key},
                timeout=self._timeout,
            )
        except requests.RequestException:
            raise MarketDataError("Market data could not be reached.") from None
        if response.status_code != 200:
            raise MarketDataError(f"Market data answered with HTTP {response.status_code}.")
        try:
            payload = response.json()
        except ValueError:
            raise MarketDataError("Market data sent an unreadable answer.") from None
        if not isinstance(payload, dict):
            raise MarketDataError("Market data sent an unreadable answer.")
        return payload

    def quote(self, symbol: str) -> dict[str, object]:
        return self._get("quote", {"symbol": symbol})

    def profile(self, symbol: str) -> dict[str, object]:
        return self._get("stock/profile2", {"symbol": symbol})

    def candles(self, symbol: str, resolution: str, start: int, end: int) -> dict[str, object]:
        params: dict[str, str | int] = {
            "symbol": symbol,
            "resolution": resolution,
            "from": start,
            "to": end,
        }
        return self._get("stock/candle", params)


def default_market(config: Mapping[str, object] | None = None) -> MarketData:
    """Return live Finnhub when the app's config (`webapp.settings`) sets `FINNHUB_API_KEY`,
    else the bundled snapshot (also with no config at all)."""
    given = config or {}
    key = str(given.get("FINNHUB_API_KEY") or "").strip()
    if key:
        base = str(given.get("FINNHUB_BASE_URL") or "").strip() or FINNHUB_BASE_URL
        return FinnhubLive(key, base_url=base)
    return SnapshotMarket()
