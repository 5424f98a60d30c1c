"""The local web index: ranking sanity, safe FTS5 queries from hostile text, and limits."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from webapp.tools.web_index import (
    MAX_LIMIT,
    WEB_PAGES_DIR,
    LocalWebIndex,
    WebPage,
    WebSearchError,
    default_index,
    fts_query,
    load_pages,
)
from webapp.tools.web_search import search_web

RANKING = [
    ("roth ira income limit 2025", "amount-of-roth-ira-contributions"),
    ("What is an index fund?", "glossary/index-fund"),
    ("credit card APR interest", "credit-card-interest-rate"),
    ("how much should my emergency fund be", "emergency-fund"),
    ("mortgage interest rate vs APR", "mortgage-interest-rate-and-an-apr"),
    ("private mortgage insurance PMI cancel", "private-mortgage-insurance"),
    ("my credit score", "what-is-a-credit-score"),
    ("FDIC insured deposits $250,000", "understanding-deposit-insurance"),
    ("I bonds inflation savings bond", "i-bonds"),
    ("capital gain selling my home exclusion", "tc701"),
    ("401(k) contribution limit", "401k-limit"),
    ("budgeting: track spending", "money-as-you-grow"),
    ("rebalancing asset allocation", "asset-allocation"),
    ("social security claim at 62", "agereduction"),
    ("fund's", "index-fund"),  # stemming: "fund" pages, apostrophe harmless
]


@pytest.mark.parametrize(("query", "expected"), RANKING, ids=[q for q, _ in RANKING])
def test_the_best_page_ranks_first(query: str, expected: str) -> None:
    results = search_web(query, limit=3)
    assert results, query
    if expected == "index-fund":
        assert any(expected in r.url for r in results)
    else:
        assert expected in results[0].url


HOSTILE = [
    '"',
    '""""',
    "*",
    "NEAR(",
    "NEAR(a b, 3)",
    "OR OR",
    "AND",
    "NOT NOT",
    "title:roth",
    "roth*",
    "^roth",
    "(roth",
    "roth)",
    "{title text}: roth",
    "'; DROP TABLE pages; --",
    "roth\x00ira",
    "\\",
    "💸 ira",
    "index " * 5000,
    "x" * 100_000,
]


@pytest.mark.parametrize("query", HOSTILE, ids=[repr(q[:20]) for q in HOSTILE])
def test_hostile_queries_never_raise_or_inject(query: str) -> None:
    results = search_web(query)
    assert len(results) <= 5
    expression = fts_query(query)
    if expression is not None:
        for term in expression.split(" OR "):
            assert term.startswith('"') and term.endswith('"') and '"' not in term[1:-1]
    assert len(default_index()) == len(load_pages())  # the table is still there


@pytest.mark.parametrize("query", ["", "   ", "\n\t"], ids=["empty", "spaces", "whitespace"])
def test_an_empty_query_is_a_clear_error(query: str) -> None:
    with pytest.raises(WebSearchError, match="empty"):
        search_web(query)


@pytest.mark.parametrize("query", ['"', "*", "(((", "—"], ids=["quote", "star", "parens", "dash"])
def test_a_query_without_words_finds_nothing(query: str) -> None:
    assert fts_query(query) is None
    assert search_web(query) == []


@pytest.mark.parametrize("query", [None, 5, b"roth"], ids=["none", "int", "bytes"])
def test_a_query_that_is_not_text_is_refused(query: object) -> None:
    with pytest.raises(WebSearchError, match="text"):
        search_web(query)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "limit", [0, -1, MAX_LIMIT + 1, 2.5, True, "3"], ids=["0", "neg", "big", "float", "bool", "str"]
)
def test_a_bad_limit_is_refused(limit: object) -> None:
    with pytest.raises(WebSearchError, match="limit"):
        search_web("roth ira", limit=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("limit", [1, 2, 7], ids=["1", "2", "7"])
def test_the_limit_caps_the_results(limit: int) -> None:
    assert len(search_web("the fund rate credit tax", limit=limit)) == limit


def test_stopwords_are_dropped_unless_nothing_else_is_left() -> None:
    assert fts_query("what is an index fund") == '"index" OR "fund"'
    assert fts_query("OR OR") == '"or"'
    assert fts_query("Roth ROTH roth") == '"roth"'


def test_a_result_carries_the_whole_page_and_a_snippet() -> None:
    (result,) = search_web("private mortgage insurance", limit=1)
    page = json.loads((WEB_PAGES_DIR / "cfpb-pmi.json").read_text())
    assert result.url == page["url"]
    assert result.title == page["title"]
    assert result.text == page["text"]
    assert result.published_date == page["published_date"]
    assert result.snippet and result.snippet.replace("…", "") in result.text.replace("\n", " ")


def test_the_bundled_pages_are_many_real_https_pages() -> None:
    pages = load_pages()
    assert 15 <= len(pages) <= 25
    assert len({p.url for p in pages}) == len(pages)
    hosts = {p.url.split("/")[2] for p in pages}
    assert all(p.url.startswith("https://") for p in pages)
    assert {"www.irs.gov", "www.consumerfinance.gov", "www.investor.gov"} <= hosts


def test_the_default_index_is_built_once_even_under_concurrency() -> None:
    seen: list[LocalWebIndex] = []
    threads = [threading.Thread(target=lambda: seen.append(default_index())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(index) for index in seen}) == 1


def test_an_index_can_be_built_into_a_file(tmp_path: Path) -> None:
    db = tmp_path / "web.sqlite"
    pages = [
        WebPage("https://example.org/a", "Alpha budgets", "How to budget month by month."),
        WebPage("https://example.org/b", "Beta bonds", "Savings bonds and budgets.", "2024-01-01"),
    ]
    index = LocalWebIndex(pages, path=db)
    assert db.exists() and len(index) == 2
    assert [r.url for r in index.search("bonds")] == ["https://example.org/b"]
    assert [r.url for r in index.search("budget")][
        0
    ] == "https://example.org/a"  # title weighs more
    rebuilt = LocalWebIndex(pages[:1], path=db)
    assert len(rebuilt) == 1


def test_pages_load_from_any_folder(tmp_path: Path) -> None:
    (tmp_path / "one.json").write_text(
        json.dumps({"url": "https://example.org/x", "title": "X", "text": "Zebra finance"})
    )
    index = LocalWebIndex.from_directory(tmp_path)
    (hit,) = index.search("zebra")
    assert (hit.url, hit.published_date) == ("https://example.org/x", None)
