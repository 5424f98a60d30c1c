"""`execute_python`: sandboxed code with Finnhub-shaped market data and Exa-shaped search."""

from __future__ import annotations

from .claim import sweep_leftovers
from .market import (
    FinnhubLive,
    MarketData,
    MarketDataError,
    SnapshotMarket,
    default_market,
)
from .results import Article, FinnhubCall, FinnhubEndpoint, PythonResult, SandboxError
from .run import run_python

__all__ = [
    "Article",
    "FinnhubCall",
    "FinnhubEndpoint",
    "FinnhubLive",
    "MarketData",
    "MarketDataError",
    "PythonResult",
    "SandboxError",
    "SnapshotMarket",
    "default_market",
    "run_python",
    "sweep_leftovers",
]
