"""`execute_python`: sandboxed code with Finnhub-shaped market data and Exa-shaped search."""

from __future__ import annotations

from ._claim import sweep_leftovers
from ._market import (
    FinnhubLive,
    MarketData,
    MarketDataError,
    SnapshotMarket,
    default_market,
)
from ._results import Article, FinnhubCall, FinnhubEndpoint, PythonResult, SandboxError
from ._run import run_python

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
