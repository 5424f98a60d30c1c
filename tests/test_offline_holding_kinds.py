"""One kind of investment asked about alone (`markets.kind_asked`, `markets.of_kind`): the
holdings of that kind with their share of all holdings, cited to the rows they came from,
and the S&P 500 named without its number. Two kinds set against each other (`kinds_compared.py`):
each one's value and share; a sector asked (`sectors.py`): not in the data, said beside the shares."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.kinds_compared import compared_kinds
from webapp.llm.offline.markets import kind_asked
from webapp.llm.offline.sectors import read_sectors


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("which equities have I got?", "stocks"),
        ("list the stock I hold", "stocks"),
        ("any index funds in there?", "funds"),
        ("how many coins do I have", "crypto"),
        ("what about cryptocurrencies", "crypto"),
        ("stocks or crypto, which is bigger?", None),  # two kinds: a comparison, not one kind
        ("what's my balance", None),
    ],
)
def test_the_one_kind_a_question_names_is_read(text: str, kind: str | None) -> None:
    assert kind_asked(text) == kind


def test_the_stocks_leave_out_the_crypto_and_say_their_share(app: Flask) -> None:
    text, cites = answer_in_new_chat(app, api_client(app, "demo"), "Which shares do I own?")
    assert "AAPL" in text and "VTI" in text and "ETH" not in text
    assert "$17,296.50" in text and "76.7%" in text
    assert {c["source"] for c in cites} == {"silvia://your-account/individual"}


def test_the_crypto_alone_is_listed(app: Flask) -> None:
    text, _ = answer_in_new_chat(app, api_client(app, "demo"), "what cryptocurrency have I got")
    assert "ETH" in text and "AAPL" not in text and "23.3%" in text
    assert "crypto is worth" in text


def test_a_kind_not_held_is_said_plainly(app: Flask) -> None:
    text, cites = answer_in_new_chat(app, api_client(app, "demo"), "What crypto coins do I own?")
    assert "ETH" in text  # demo holds ether
    text, cites = answer_in_new_chat(app, api_client(app, "alex"), "What stocks do I hold?")
    assert "no" in text.lower() and not cites


def test_the_sp_500_is_quoted_by_its_etf(app: Flask) -> None:
    text, cites = answer_in_new_chat(app, api_client(app, "demo"), "where's the S&P right now?")
    assert "SPY" in text
    assert [c["target"] for c in cites] == [{"kind": "market_data", "ticker": "SPY"}]


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("whats the crypto to stock ratio in my portfolio", ("crypto", "stocks")),
        ("how do my funds stack up against my individual stocks?", ("funds", "stocks")),
        ("my equities / crypto mix?", ("stocks", "crypto")),
    ],
)
def test_kinds_set_against_each_other_are_read(text: str, kinds: tuple[str, ...]) -> None:
    assert compared_kinds(text) == kinds


@pytest.mark.parametrize(
    "text",
    [
        "what's the difference between an ETF and a stock",
        "total value of my stocks plus my crypto",
        "how much of my net worth is stocks vs cash",
        "should I move my crypto into index funds",
    ],
)
def test_rules_sums_and_whole_splits_are_not_kinds_compared(text: str) -> None:
    assert compared_kinds(text) == ()


def test_kinds_compared_give_each_kinds_value_and_share(app: Flask) -> None:
    text, cites = answer_in_new_chat(
        app, api_client(app, "demo"), "what's my crypto to stock ratio in my portfolio?"
    )
    assert "stocks $17,296.50 (76.7%)" in text and "crypto $5,250.00 (23.3%)" in text
    assert "more than" not in text
    assert {c["target"]["kind"] for c in cites} == {"portfolio"}


def test_a_fund_goes_with_funds_when_funds_are_asked_too(app: Flask) -> None:
    text, _ = answer_in_new_chat(
        app, api_client(app, "demo"), "how do my funds stack up against my individual stocks?"
    )
    assert "funds $11,584.00 (51.4%)" in text and "stocks $5,712.50 (25.3%)" in text
    assert "- The rest: $5,250.00" in text


@pytest.mark.parametrize(
    "text",
    [
        "am I overweight in technology?",
        "what's my exposure to energy stocks",
        "which industries are my investments in",
    ],
)
def test_a_sector_asked_says_the_data_has_none_beside_the_shares(app: Flask, text: str) -> None:
    answer, cites = answer_in_new_chat(app, api_client(app, "demo"), text)
    assert "not the sector or industry" in answer
    assert "VTI is a fund" in answer and "AAPL 25.3%" in answer
    assert {c["target"]["kind"] for c in cites} == {"portfolio"}


def test_sector_news_or_a_trade_is_not_a_sector_split() -> None:
    assert read_sectors("should I sell my tech stocks") is None
    assert read_sectors("what's the tech sector doing") is None
