"""How much of what the user owns sits in one place (weight.py): the place the question names
(else the largest), its share of all their linked accounts hold, the rest, and the page on
diversifying, each cited. In wordings no evaluation set holds."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.advice import advice_kind
from webapp.llm.offline.ask import understand
from webapp.llm.offline.scope import padded

DIVERSIFY = (
    "https://www.investor.gov/introduction-investing/investing-basics/save-and-invest/"
    "asset-allocation-diversification-and-rebalancing"
)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("most of our net worth is the house, should that worry us?", "weight"),
        ("is it dumb to have most of my money tied up in my robinhood account?", "weight"),
        ("what is my house worth?", None),
    ],
)
def test_a_share_of_everything_in_one_place_is_weighed(text: str, kind: str | None) -> None:
    assert advice_kind(padded(text), understand(text)) == kind


def test_the_place_named_is_set_against_everything_owned(app: Flask) -> None:
    said, cited = answer_in_new_chat(
        app, api_client(app, "demo"), "most of our net worth is the house, should that worry us?"
    )
    assert "Home is worth $485,000.00: 91.0% of the $533,034.14" in said, said
    assert "Diversification means" in said
    sources = {c["source"] for c in cited}
    assert "silvia://your-account/home" in sources and DIVERSIFY in sources


def test_an_account_named_by_its_bank_is_the_one_weighed(app: Flask) -> None:
    said, _ = answer_in_new_chat(
        app,
        api_client(app, "demo"),
        "is it dumb to have most of my money tied up in my robinhood account?",
    )
    assert "Robinhood individual account is worth $17,609.05: 3.3%" in said, said
