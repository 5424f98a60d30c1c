"""Tool results become search_result blocks with the seed's sources and targets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from tests.support.turns import Rows
from webapp.citations import citable as citable_module
from webapp.citations.citable import (
    MAX_BLOCKS,
    chunks,
    from_document,
    from_python,
    from_sql,
    from_web_results,
)
from webapp.citations.targets import (
    AccountTarget,
    AnalysisTarget,
    MarketDataTarget,
    TaxReferenceTarget,
)

PLAID = "AmexCardAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"


@dataclass(frozen=True)
class Call:
    endpoint: str
    ticker: str | None
    payload: object


@dataclass(frozen=True)
class Page:
    url: str
    title: str
    text: str
    published_date: str | None = None


@dataclass(frozen=True)
class Doc:
    corpus: str
    path: str
    title: str
    text: str
    source_url: str | None
    section: str | None


def test_sql_blocks_hide_providers_and_ids_but_keep_the_target() -> None:
    rows = (
        {
            "source": "plaid",
            "source_account_id": PLAID,
            "account_name": "Credit card",
            "current_balance": 12.5,
            "user_id": 3,
        },
    )
    (citable,) = from_sql(Rows(rows), "2026-11-29T00:00:00Z")
    block = citable.search_result()
    assert block == {
        "type": "search_result",
        "source": "silvia://your-account/credit-card",
        "title": "Credit card",
        "citations": {"enabled": True},
        "content": [{"type": "text", "text": "account_name: Credit card\ncurrent_balance: 12.5"}],
    }
    assert citable.target == AccountTarget(PLAID, "plaid")
    assert citable.link is None and citable.source_type == "account"


@pytest.mark.parametrize(
    ("calls", "stdout", "sources"),
    [
        ([Call("quote", "AAPL", {"c": 1})], "1", {"silvia://market-data/finnhub/AAPL"}),
        (
            [Call("quote", "AAPL", {"c": 1}), Call("quote", "MSFT", {"c": 2})],
            "1 2",
            {
                "silvia://market-data/finnhub/AAPL",
                "silvia://market-data/finnhub/MSFT",
                "silvia://market-data/finnhub",
            },
        ),
        ([Call("quote", None, {"c": 1})], "", {"silvia://market-data/finnhub"}),
        ([], "42", {"silvia://analysis"}),
        ([], "", set()),
    ],
    ids=["one-ticker", "two-tickers-printed", "no-ticker", "no-finnhub", "nothing"],
)
def test_python_sources(calls: list[Call], stdout: str, sources: set[str]) -> None:
    citables = from_python(stdout, calls, [], "now")
    assert {c.source for c in citables} == sources
    for citable in citables:
        if citable.source.startswith("silvia://market-data/finnhub/"):
            assert citable.target == MarketDataTarget(citable.source.rsplit("/", 1)[1])
        else:
            assert citable.target == AnalysisTarget()


def test_market_data_is_described_in_words_and_dated_by_the_quote() -> None:
    from types import MappingProxyType

    quote = MappingProxyType({"c": 1.5, "d": 0.25, "dp": 20.0, "t": 1751054400})
    (citable,) = from_python("", [Call("quote", "AAPL", quote)], [], "2026-11-29T00:00:00Z")
    assert citable.texts == (
        "AAPL last traded at 1.50, +0.25 (+20.00%) on the day as of 2025-06-27.",
    )
    assert citable.updated_at == "2025-06-27T20:00:00+00:00"


def test_documents_cite_the_readable_page_or_their_path() -> None:
    usc = Doc(
        "tax-authority",
        "usc/title-26/section-121.md",
        "26 U.S.C. 121",
        "A.\n\nB.",
        "https://uscode.house.gov/download/releasepoints/us/pl/119/36/xml_usc26@119-36.zip",
        "121",
    )
    citable = from_document("read_tax_authority", usc)
    page = "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121"
    assert (citable.source, citable.link, citable.texts) == (page, page, ("A.", "B."))
    assert citable.target == TaxReferenceTarget(page)
    local = from_document(
        "read_tax_authority", Doc("tax-authority", "notes/x.md", "X", "t", None, None)
    )
    assert local.source == "silvia://tax-authority/notes/x.md"
    assert local.target == TaxReferenceTarget(None) and local.link is None


def test_web_results_without_a_url_are_cited_as_the_search() -> None:
    ok, bad = from_web_results(
        [Page("https://a.example/x", "A", "text"), Page("javascript:alert(1)", "B", "text")]
    )
    assert (ok.source, ok.link, ok.is_internet) == (
        "https://a.example/x",
        "https://a.example/x",
        True,
    )
    assert (bad.source, bad.target, bad.link) == ("silvia://search/search_web", None, None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ()),
        ("one", ("one",)),
        ("a\n\n\n b \n\nc", ("a", "b", "c")),
        ("x" * 3100, ("x" * 1500, "x" * 1500, "x" * 100)),
    ],
    ids=["empty", "one", "paragraphs", "long"],
)
def test_chunks_are_bounded_and_never_empty(text: str, expected: tuple[str, ...]) -> None:
    assert chunks(text) == expected


def test_sql_blocks_write_out_only_the_rows_they_show(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[object] = []
    row_text = citable_module._row_text

    def counting_row_text(row: Mapping[str, object]) -> str:
        written.append(row["n"])
        return row_text(row)

    monkeypatch.setattr(citable_module, "_row_text", counting_row_text)
    rows = tuple(
        {"source": "plaid", "source_account_id": PLAID, "account_name": "Credit card", "n": n}
        for n in range(1000)
    )
    (citable,) = from_sql(Rows(rows), "2026-11-29T00:00:00Z")
    assert written == list(range(MAX_BLOCKS))
    assert citable.texts == tuple(f"account_name: Credit card\nn: {n}" for n in range(MAX_BLOCKS))
    assert citable.target == AccountTarget(PLAID, "plaid")


def test_a_row_past_the_last_block_still_decides_the_target() -> None:
    rows = tuple(
        {"source": "plaid", "source_account_id": PLAID, "account_name": "Credit card"}
        for _ in range(MAX_BLOCKS + 5)
    ) + ({"account_name": "Credit card"},)
    (citable,) = from_sql(Rows(rows), "2026-11-29T00:00:00Z")
    assert len(citable.texts) == MAX_BLOCKS
    assert citable.target is None
