"""The parent's end of the data pipe: serve each request, record what the code read.

Requests are JSON lines from the sandbox (`sandbox_lib/_sandbox_rpc.py`); every answer is
one JSON line back. A hostile or broken request gets an error reply, never an exception.
"""

from __future__ import annotations

import json
import logging
from types import MappingProxyType
from typing import Any

from ..offload import open_pipe
from ..web_index import WebSearchError
from ..web_search import WebSearchProvider
from .market import MarketData, MarketDataError, check_candle_args, normalise_symbol
from .results import Article, FinnhubCall, FinnhubEndpoint

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 1024
MAX_CALLS = 100
MAX_ARTICLES = 10
_ENDPOINTS: dict[str, FinnhubEndpoint] = {
    "quote": "quote",
    "stock/profile2": "stock/profile2",
    "stock/candle": "stock/candle",
}


class _Refused(Exception):
    """A request answered with an error line."""


class DataService:
    """Answers one run's data requests and keeps the record of them."""

    def __init__(
        self, market: MarketData, search: WebSearchProvider, *, max_calls: int = MAX_CALLS
    ) -> None:
        self._market = market
        self._search = search
        self._max_calls = max_calls
        self._calls = 0
        self.finnhub: list[FinnhubCall] = []
        self.articles: list[Article] = []
        self.exited = False
        self.exit_error: str | None = None

    def _finnhub(self, request: dict[str, Any]) -> dict[str, object]:
        endpoint = _ENDPOINTS.get(str(request.get("endpoint")))
        if endpoint is None:
            raise _Refused("unknown market data endpoint")
        symbol = normalise_symbol(request.get("symbol"))
        if endpoint == "quote":
            payload = self._market.quote(symbol)
        elif endpoint == "stock/profile2":
            payload = self._market.profile(symbol)
        else:
            args = check_candle_args(
                request.get("resolution"), request.get("from"), request.get("to")
            )
            payload = self._market.candles(symbol, *args)
        self.finnhub.append(FinnhubCall(endpoint, symbol, MappingProxyType(dict(payload))))
        return payload

    def _exa(self, request: dict[str, Any]) -> dict[str, object]:
        query, count = request.get("query"), request.get("num_results", 5)
        if not isinstance(query, str):
            raise _Refused("query must be text")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_ARTICLES:
            raise _Refused(f"num_results must be a whole number from 1 to {MAX_ARTICLES}")
        results = []
        for hit in self._search.search(query, limit=count):
            self.articles.append(Article(hit.url, hit.title, hit.text, hit.published_date))
            results.append(
                {
                    "id": hit.url,
                    "url": hit.url,
                    "title": hit.title,
                    "publishedDate": hit.published_date,
                    "author": None,
                    "text": hit.text,
                }
            )
        return {"results": results}

    def handle(self, request: object) -> dict[str, object] | None:
        """Answer one decoded request; None for the end-of-run report, which needs no reply."""
        if not isinstance(request, dict):
            return {"ok": False, "error": "malformed request"}
        op = request.get("op")
        if op == "exit":
            error = request.get("error")
            self.exited = True
            self.exit_error = error[:1000] if isinstance(error, str) else None
            return None
        if op not in ("finnhub", "exa"):
            return {"ok": False, "error": "unknown request"}
        if self._calls >= self._max_calls:
            return {"ok": False, "error": f"too many data requests (at most {self._max_calls})"}
        self._calls += 1
        try:
            data = self._finnhub(request) if op == "finnhub" else self._exa(request)
        except (_Refused, MarketDataError, WebSearchError) as exc:
            return {"ok": False, "error": str(exc)}
        except Exception as exc:  # a provider bug must not end the run's bookkeeping
            log.warning("sandbox data request failed: %s", type(exc).__name__)
            return {"ok": False, "error": "the data service failed"}
        return {"ok": True, "data": data}

    def serve(self, requests_fd: int, replies_fd: int) -> None:
        """Answer requests until the child closes its end; closes both fds."""
        with open_pipe(requests_fd, "rb") as requests, open_pipe(replies_fd, "wb") as replies:
            while True:
                line = requests.readline(MAX_REQUEST_BYTES + 1)
                if not line:
                    return
                if not line.endswith(b"\n"):
                    reply: dict[str, object] | None = {"ok": False, "error": "request too long"}
                    while line and not line.endswith(b"\n"):  # skip the rest of it
                        line = requests.readline(MAX_REQUEST_BYTES)
                else:
                    try:
                        reply = self.handle(json.loads(line))
                    except ValueError:
                        reply = {"ok": False, "error": "malformed request"}
                if reply is None:
                    continue
                try:
                    replies.write(json.dumps(reply).encode() + b"\n")
                    replies.flush()
                except OSError:
                    return  # the child is gone
