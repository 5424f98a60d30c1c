"""Market data and article search for execute_python: snapshot, live Finnhub, the data pipe."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import pytest

from webapp.tools.python.market import (
    MARKET_DIR,
    FinnhubLive,
    MarketDataError,
    SnapshotMarket,
    check_candle_args,
    default_market,
    normalise_symbol,
)
from webapp.tools.python.run import run_python
from webapp.tools.python.service import MAX_REQUEST_BYTES, DataService
from webapp.tools.web_index import LocalWebIndex, WebPage

TICKERS = ["AAPL", "VTI", "MSFT", "SPY", "GOOGL", "NVDA"]
QUOTE_KEYS = {"c", "d", "dp", "h", "l", "o", "pc", "t"}
PROFILE_KEYS = {
    "country", "currency", "exchange", "ipo", "marketCapitalization", "name",
    "shareOutstanding", "ticker", "weburl", "logo", "finnhubIndustry",
}  # fmt: skip
PAGES = [
    WebPage(
        "https://www.example.gov/index-funds",
        "Index funds",
        "Index funds track a market index.",
        "2024-01-02",
    ),
    WebPage("https://www.example.gov/bonds", "Savings bonds", "I bonds follow inflation."),
]


@pytest.fixture
def snapshot() -> SnapshotMarket:
    return SnapshotMarket()


@pytest.mark.parametrize("ticker", TICKERS, ids=TICKERS)
def test_the_snapshot_has_finnhub_shapes_that_agree(snapshot: SnapshotMarket, ticker: str) -> None:
    quote = cast(dict[str, Any], snapshot.quote(ticker))
    profile = snapshot.profile(ticker)
    candles = snapshot.candles(ticker, "D", 0, 2**32)
    assert set(quote) == QUOTE_KEYS and set(profile) == PROFILE_KEYS
    assert profile["ticker"] == ticker and candles["s"] == "ok"
    series: dict[str, Any] = {k: candles[k] for k in "chlotv"}
    assert all(isinstance(v, list) and len(v) == 30 for v in series.values())
    assert series["t"] == sorted(series["t"]) and len(set(series["t"])) == 30
    for o, h, low, c in zip(series["o"], series["h"], series["l"], series["c"], strict=True):
        assert low <= min(o, c) <= max(o, c) <= h
    assert quote["c"] == series["c"][-1] and quote["pc"] == series["c"][-2]
    assert quote["d"] == pytest.approx(quote["c"] - quote["pc"], abs=0.011)


def test_candles_are_cut_to_the_asked_range(snapshot: SnapshotMarket) -> None:
    full = snapshot.candles("AAPL", "D", 0, 2**32)
    times = full["t"]
    assert isinstance(times, list)
    part = snapshot.candles("AAPL", "D", times[10], times[19])
    assert part["t"] == times[10:20] and part["s"] == "ok"
    assert snapshot.candles("AAPL", "D", 0, times[0] - 1) == {"s": "no_data"}
    assert snapshot.candles("AAPL", "W", 0, 2**32) == {"s": "no_data"}


def test_an_unknown_symbol_gets_finnhubs_empty_shapes(snapshot: SnapshotMarket) -> None:
    assert snapshot.quote("ZZZZ") == {
        "c": 0,
        "d": None,
        "dp": None,
        "h": 0,
        "l": 0,
        "o": 0,
        "pc": 0,
        "t": 0,
    }
    assert snapshot.profile("ZZZZ") == {}
    assert snapshot.candles("ZZZZ", "D", 0, 2**32) == {"s": "no_data"}
    assert set(TICKERS) <= set(snapshot.symbols)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [(" aapl ", "AAPL"), ("BRK.B", "BRK.B"), ("BINANCE:BTCUSDT", "BINANCE:BTCUSDT")],
    ids=["lower", "class", "crypto"],
)
def test_symbols_are_normalised(raw: str, clean: str) -> None:
    assert normalise_symbol(raw) == clean


@pytest.mark.parametrize(
    "raw",
    ["", "../../etc/passwd", "AAPL/..", "A" * 21, "AAPL;rm", ".HIDDEN", None, 7],
    ids=["empty", "traversal", "slash", "long", "semicolon", "dot", "none", "int"],
)
def test_bad_symbols_are_refused(raw: object) -> None:
    with pytest.raises(MarketDataError, match="symbol"):
        normalise_symbol(raw)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("H", 0, 1), "resolution"),
        (("D", -1, 1), "timestamps"),
        (("D", 0, 1.5), "timestamps"),
        (("D", True, 1), "timestamps"),
        (("D", 0, 2**41), "timestamps"),
    ],
    ids=["resolution", "negative", "float", "bool", "huge"],
)
def test_bad_candle_arguments_are_refused(
    args: tuple[object, object, object], message: str
) -> None:
    with pytest.raises(MarketDataError, match=message):
        check_candle_args(*args)


@dataclass
class FakeFinnhub:
    status: int = 200
    body: bytes = b"{}"
    seen: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def finnhub_api() -> Iterator[FakeFinnhub]:
    fake = FakeFinnhub()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            fake.seen.append(
                {
                    "path": parts.path,
                    "query": parse_qs(parts.query),
                    "token": self.headers.get("X-Finnhub-Token"),
                }
            )
            self.send_response(fake.status)
            self.end_headers()
            self.wfile.write(fake.body)

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/api/v1"
    yield fake
    server.shutdown()
    server.server_close()


def test_live_finnhub_sends_the_key_in_a_header(finnhub_api: FakeFinnhub) -> None:
    finnhub_api.body = b'{"c": 101.5, "pc": 100}'
    live = FinnhubLive("fh-key", base_url=finnhub_api.url)
    assert live.quote("AAPL") == {"c": 101.5, "pc": 100}
    live.profile("MSFT")
    live.candles("SPY", "D", 10, 20)
    quote, profile, candles = finnhub_api.seen
    assert (quote["path"], quote["query"], quote["token"]) == (
        "/api/v1/quote",
        {"symbol": ["AAPL"]},
        "fh-key",
    )
    assert profile["path"] == "/api/v1/stock/profile2" and profile["query"] == {"symbol": ["MSFT"]}
    assert candles["path"] == "/api/v1/stock/candle"
    assert candles["query"] == {
        "symbol": ["SPY"],
        "resolution": ["D"],
        "from": ["10"],
        "to": ["20"],
    }
    assert all("fh-key" not in json.dumps(seen["query"]) for seen in finnhub_api.seen)


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [(429, b"{}", "HTTP 429"), (200, b"nope", "unreadable"), (200, b"[1]", "unreadable")],
    ids=["rate-limited", "not-json", "not-object"],
)
def test_live_finnhub_failures_are_clear(
    finnhub_api: FakeFinnhub, status: int, body: bytes, message: str
) -> None:
    finnhub_api.status, finnhub_api.body = status, body
    with pytest.raises(MarketDataError, match=message) as info:
        FinnhubLive("fh-key", base_url=finnhub_api.url).quote("AAPL")
    assert "fh-key" not in str(info.value)


@pytest.mark.parametrize(
    ("environ", "kind"),
    [
        ({}, SnapshotMarket),
        ({"FINNHUB_API_KEY": " "}, SnapshotMarket),
        ({"FINNHUB_API_KEY": "k"}, FinnhubLive),
    ],
    ids=["unset", "blank", "set"],
)
def test_the_default_market_follows_the_environment(environ: dict[str, str], kind: type) -> None:
    assert isinstance(default_market(environ), kind)


SANDBOX_CODE = """
import finnhub, exa
from exa_py import Exa
q = finnhub.quote("aapl")
p = finnhub.Client(api_key="ignored").company_profile2(symbol="VTI")
c = finnhub.candles("MSFT", "D", 0, 2**31)
print(q["c"], p["name"], len(c["c"]), c["s"])
r = exa.search_and_contents("index funds", num_results=1)
print(r["results"][0]["url"], r.results[0].title)
print(len(Exa("k").search_and_contents("bonds").results))
try:
    finnhub.quote("../etc")
except finnhub.FinnhubAPIException as e:
    print("refused:", e)
"""


def test_market_data_and_articles_work_inside_and_are_recorded(snapshot: SnapshotMarket) -> None:
    result = run_python(SANDBOX_CODE, timeout_s=5, market=snapshot, search=LocalWebIndex(PAGES))
    assert result.error is None, result.stderr
    quote_line, article_line, count_line, refused_line = result.stdout.splitlines()
    assert quote_line == f"{snapshot.quote('AAPL')['c']} Vanguard Total Stock Market ETF 30 ok"
    assert article_line == "https://www.example.gov/index-funds Index funds"
    assert count_line == "1"
    assert refused_line.startswith("refused: A symbol is")
    assert [(c.endpoint, c.ticker) for c in result.finnhub] == [
        ("quote", "AAPL"),
        ("stock/profile2", "VTI"),
        ("stock/candle", "MSFT"),
    ]
    assert dict(result.finnhub[0].payload) == snapshot.quote("AAPL")
    assert [(a.url, a.published_date) for a in result.articles] == [
        ("https://www.example.gov/index-funds", "2024-01-02"),
        ("https://www.example.gov/bonds", None),
    ]
    assert result.articles[0].text == PAGES[0].text


def test_live_mode_is_served_by_the_parent_not_the_sandbox(finnhub_api: FakeFinnhub) -> None:
    finnhub_api.body = (
        b'{"c": 321.0, "d": 1, "dp": 0.3, "h": 322, "l": 319, "o": 320, "pc": 320, "t": 1}'
    )
    live = FinnhubLive("fh-key", base_url=finnhub_api.url)
    code = (
        "import finnhub, os\nprint(finnhub.quote('NVDA')['c'], os.environ.get('FINNHUB_API_KEY'))"
    )
    result = run_python(code, timeout_s=5, market=live, search=LocalWebIndex([]))
    assert result.stdout == "321.0 None\n"
    assert finnhub_api.seen[0]["token"] == "fh-key"
    assert result.finnhub[0].ticker == "NVDA" and result.finnhub[0].payload["c"] == 321.0


def test_the_bundled_snapshot_files_are_the_six_tickers() -> None:
    assert {p.stem for p in MARKET_DIR.glob("*.json")} >= set(TICKERS)


@pytest.fixture
def service(snapshot: SnapshotMarket) -> DataService:
    return DataService(snapshot, LocalWebIndex(PAGES), max_calls=3)


HOSTILE_REQUESTS = [
    ("not a dict", "malformed"),
    ({"op": "rm -rf"}, "unknown request"),
    ({"op": "finnhub", "endpoint": "../quote", "symbol": "AAPL"}, "unknown market data endpoint"),
    ({"op": "finnhub", "endpoint": "quote", "symbol": {"$ne": 1}}, "symbol"),
    (
        {"op": "finnhub", "endpoint": "stock/candle", "symbol": "AAPL", "resolution": "D"},
        "timestamps",
    ),
    ({"op": "exa", "query": 5}, "text"),
    ({"op": "exa", "query": "x", "num_results": 500}, "num_results"),
    ({"op": "exa", "query": "   "}, "empty"),
]


@pytest.mark.parametrize(
    ("request_", "message"), HOSTILE_REQUESTS, ids=[m for _, m in HOSTILE_REQUESTS]
)
def test_hostile_requests_get_error_replies(
    service: DataService, request_: object, message: str
) -> None:
    reply = service.handle(request_)
    assert reply is not None and reply["ok"] is False
    assert message in str(reply["error"])
    assert service.finnhub == [] and service.articles == []


def test_the_number_of_calls_is_capped(service: DataService) -> None:
    replies = [
        service.handle({"op": "finnhub", "endpoint": "quote", "symbol": "AAPL"}) for _ in range(4)
    ]
    assert [r["ok"] for r in replies if r] == [True, True, True, False]
    assert "too many" in str(replies[-1]["error"])
    assert len(service.finnhub) == 3


def test_the_exit_report_needs_no_reply(service: DataService) -> None:
    assert service.handle({"op": "exit", "error": "ValueError: x" * 500}) is None
    assert service.exited and service.exit_error is not None and len(service.exit_error) == 1000


def test_the_pipe_survives_garbage_and_overlong_lines(service: DataService) -> None:
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    thread = threading.Thread(target=service.serve, args=(requests_r, replies_w))
    thread.start()
    with os.fdopen(requests_w, "wb") as out, os.fdopen(replies_r, "rb") as back:
        out.write(b"{not json\n" + b"x" * (MAX_REQUEST_BYTES * 2) + b"\n")
        out.write(
            json.dumps({"op": "finnhub", "endpoint": "quote", "symbol": "VTI"}).encode() + b"\n"
        )
        out.flush()
        replies = [json.loads(back.readline()) for _ in range(3)]
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert [r.get("error") for r in replies[:2]] == ["malformed request", "request too long"]
    assert replies[2]["ok"] and replies[2]["data"]["c"] == SnapshotMarket().quote("VTI")["c"]
