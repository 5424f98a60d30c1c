"""The tools the model calls: each is real code over real data with an offline default."""

from __future__ import annotations

from .python import (
    Article,
    FinnhubCall,
    FinnhubLive,
    MarketData,
    MarketDataError,
    PythonResult,
    SandboxError,
    SnapshotMarket,
    default_market,
    run_python,
)
from .readers import (
    READER_TOOLS,
    CorpusName,
    DocumentRead,
    FolderEntry,
    FolderListing,
    ReaderError,
    read_document,
)
from .sql import SqlResult, run_sql
from .web_index import LocalWebIndex, WebPage, WebResult, WebSearchError, default_index
from .web_search import ExaSearch, WebSearchProvider, default_provider, search_web

__all__ = [
    "READER_TOOLS",
    "Article",
    "CorpusName",
    "DocumentRead",
    "ExaSearch",
    "FinnhubCall",
    "FinnhubLive",
    "FolderEntry",
    "FolderListing",
    "LocalWebIndex",
    "MarketData",
    "MarketDataError",
    "PythonResult",
    "ReaderError",
    "SandboxError",
    "SnapshotMarket",
    "WebPage",
    "WebResult",
    "WebSearchError",
    "WebSearchProvider",
    "default_index",
    "default_market",
    "default_provider",
    "read_document",
    "run_python",
    "search_web",
    "SqlResult",
    "run_sql",
]
