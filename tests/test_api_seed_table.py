"""Every row of seed 000's tool / source / target table, end to end through the JSON API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, api_client, idle_after, make_app
from tests.support.fake_claude import FakeClaude, HttpError, text_reply, tool_reply
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate


def answer(app: Flask, client: ApiClient, question: str) -> dict[str, Any]:
    with idle_after(app):
        session_id = client.new_session()
        events = client.stream(client.ask(session_id, question)["stream_url"])
    assert events[-1].event == "done"
    message = dict(client.session(session_id)["messages"][1])
    assert message["status"] == "complete", message["error"]
    return message


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Flask:
    return make_app(tmp_path_factory.mktemp("offline"))


OFFLINE_ROWS = [
    ("What is my portfolio worth?", "silvia://your-portfolio", {"kind": "portfolio"}),
    (
        "What is the price of AAPL?",
        "silvia://market-data/finnhub/AAPL",
        {"kind": "market_data", "ticker": "AAPL"},
    ),
    (
        "How does the home sale gain exclusion work?",
        "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121",
        {
            "kind": "tax_reference",
            "url": "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121",
        },
    ),
    (
        "What does my card's rental car benefit cover?",
        "https://cardbenefits.chase.com/chase-sapphire-preferred",
        {"kind": "card_document", "url": "https://cardbenefits.chase.com/chase-sapphire-preferred"},
    ),
    (
        "How do you dispute a billing error on a credit card?",
        "silvia://credit-card-corpus/guides/disputing-a-card-charge.md",
        {"kind": "card_document", "url": None},
    ),
    (
        "What is the ability to repay rule for a mortgage?",
        "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.43",
        {
            "kind": "mortgage_reference",
            "url": "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.43",
        },
    ),
    (
        "How big should an emergency fund be?",
        "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/",
        {
            "kind": "web",
            "url": "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/",
        },
    ),
]


@pytest.mark.parametrize(
    ("question", "source", "target"),
    OFFLINE_ROWS,
    ids=[
        "portfolio",
        "market-data",
        "tax-uscode",
        "card-web",
        "card-no-url",
        "mortgage-ecfr",
        "web",
    ],
)
def test_offline_engine_row(
    offline: Flask, question: str, source: str, target: dict[str, Any]
) -> None:
    message = answer(offline, api_client(offline), question)
    assert {c["source"]: c["target"] for c in message["citations"]}[source] == target


def test_offline_holdings_cite_the_brokerage_and_leave_the_wallet_untyped(offline: Flask) -> None:
    message = answer(offline, api_client(offline), "What are my holdings?")
    targets = {c["source"]: c["target"] for c in message["citations"]}
    assert targets["silvia://your-account/crypto-wallet"] is None
    individual = targets["silvia://your-account/individual"]
    assert individual["kind"] == "account" and individual["provider"] == "snaptrade"


def cite(source: str, title: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": "…",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def account_ids(app: Flask, institution: str) -> list[str]:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    return [
        str(a["source_account_id"])
        for a in list_accounts(get_engine(app), user.id)
        if a["institution_name"] == institution and a["account_name"] == "Credit card"
    ]


SQL = (
    "SELECT source, source_account_id, account_name, current_balance FROM account_details "
    "WHERE institution_name = '{}' AND account_name = 'Credit card'"
)


def test_claude_pools_accounts_across_two_tool_calls(
    claude_app: tuple[Flask, FakeClaude],
) -> None:
    app, fake = claude_app
    credit = "silvia://your-account/credit-card"
    fake.replies += [
        tool_reply(("a", "execute_sql", {"query": SQL.format("American Express")})),
        tool_reply(("b", "execute_sql", {"query": SQL.format("Citi")})),
        text_reply(("You owe on both cards.", [cite(credit, "Credit card")])),
    ]
    message = answer(app, api_client(app), "What do I owe on my credit cards?")
    (citation,) = message["citations"]
    assert citation["target"] == {
        "kind": "accounts",
        "accounts": [
            {"accountId": account_ids(app, "American Express")[0], "provider": "plaid"},
            {"accountId": account_ids(app, "Citi")[0], "provider": "plaid"},
        ],
    }
    # The model was told how to cite, and saw search results with citations enabled.
    assert "source_account_id" in fake.requests[0]["system"][0]["text"]
    assert {t["name"] for t in fake.requests[0]["tools"]} == {
        "execute_sql",
        "execute_python",
        "read_tax_authority",
        "read_credit_card_document",
        "read_mortgage_authority",
        "search_web",
    }
    result = fake.requests[1]["messages"][-1]["content"][0]
    assert result["content"][0]["type"] == "search_result"
    assert result["content"][0]["citations"] == {"enabled": True}


PYTHON_ROWS = [
    ("print(6 * 7)", "silvia://analysis", "Analysis", {"kind": "analysis"}),
    (
        "import finnhub\nprint(finnhub.quote('AAPL')['c'], finnhub.quote('MSFT')['c'])",
        "silvia://market-data/finnhub",
        "Live data",
        {"kind": "analysis"},
    ),
    (
        "import finnhub\nprint(finnhub.quote('NVDA')['c'])",
        "silvia://market-data/finnhub/NVDA",
        "NVDA market data",
        {"kind": "market_data", "ticker": "NVDA"},
    ),
    (
        "import exa\nr = exa.search_and_contents('emergency fund', num_results=1)\n"
        "print(r['results'][0]['title'])",
        "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/",
        "An essential guide to building an emergency fund",
        {
            "kind": "web",
            "url": "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/",
        },
    ),
]


@pytest.mark.parametrize(
    ("code", "source", "title", "target"),
    PYTHON_ROWS,
    ids=["analysis", "live-data", "ticker", "exa-article"],
)
def test_claude_execute_python_rows(
    claude_app: tuple[Flask, FakeClaude], code: str, source: str, title: str, target: dict[str, Any]
) -> None:
    app, fake = claude_app
    fake.replies += [
        tool_reply(("p", "execute_python", {"code": code})),
        text_reply(("Here it is.", [cite(source, title)])),
    ]
    message = answer(app, api_client(app), "Compute it")
    blocks = fake.requests[1]["messages"][-1]["content"][0]["content"]
    assert source in [b.get("source") for b in blocks]
    assert message["citations"][0]["target"] == target


def test_claude_529_then_success(claude_app: tuple[Flask, FakeClaude]) -> None:
    app, fake = claude_app
    overloaded = HttpError(
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"retry-after": "0"},
    )
    fake.replies += [overloaded, text_reply(("Hello.", []))]
    message = answer(app, api_client(app), "Hi")
    assert message["content"] == "Hello."
    assert len(fake.requests) == 2


def test_a_failed_turn_stores_the_error_and_ends_its_stream(
    claude_app: tuple[Flask, FakeClaude],
) -> None:
    app, fake = claude_app
    fake.replies += [
        HttpError(
            400,
            {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "messages.0: bad"},
            },
        )
    ]
    client = api_client(app)
    with idle_after(app):
        session_id = client.new_session()
        events = client.stream(client.ask(session_id, "Hi")["stream_url"])
    packets = [json.loads(e.data)["obj"] for e in events if e.event == "packet"]
    assert [p["type"] for p in packets][-2:] == ["error", "stop"]
    # What a person reads is plain words and what to do: no vendor, status or exception.
    shown = packets[-2]["error"]
    # A request the API refused is the service's fault, never the person's: no "rephrase".
    assert "our side" in shown and "other words" not in shown
    assert not any(w in shown for w in ("Claude", "HTTP", "400"))
    assert json.loads(events[-1].data) == {"status": "error"}
    row = client.session(session_id)["messages"][1]
    assert row["status"] == "error" and row["error"] == shown
    assert row["content"] == "" and row["citations"] == [] and row["inline_citations"] == []
