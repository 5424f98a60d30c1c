"""One kind of investment asked about alone (`markets.kind_asked`, `markets.of_kind`): the
holdings of that kind with their share of all holdings, cited to the rows they came from,
and the S&P 500 named without its number."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.markets import kind_asked


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
