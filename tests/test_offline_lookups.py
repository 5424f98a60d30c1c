"""Plain look-ups in new wordings (issue 19's fifth development set): an institution by its
first word ("the wells account"), what is "sitting in" an account, the banks linked here,
a breakdown of investments that counts their uninvested cash, and a card named by the
issuer's name for it ("the Double Cash")."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.ask import understand
from webapp.llm.offline.library import library
from webapp.llm.offline.plan import UNINVESTED_QUERY, plan


@pytest.mark.parametrize(
    "text",
    [
        "what's parked in the wells account?",
        "how much is in wells rn",
        "what do I have at wells",
        "whats held in the chase account right now",
    ],
)
def test_an_account_named_by_its_bank_is_looked_up(text: str) -> None:
    question = understand(text)
    assert question.own and "balances" in question.intents
    assert question.institutions and question.institutions[0] in ("wells fargo", "chase")


def test_a_full_name_is_not_spelled_out_twice() -> None:
    assert understand("my wells fargo balance").institutions == ("wells fargo",)


@pytest.mark.parametrize(
    "text",
    [
        "which banks are linked?",
        "what institutions have I got connected",
        "which accounts did I hook up... I mean which are synced",
        "what banks am i with",
    ],
)
def test_the_banks_linked_here_are_the_users_own(text: str) -> None:
    question = understand(text)
    assert question.own and question.intents == ("balances",)


def test_which_banks_in_general_is_no_look_up() -> None:
    assert not understand("which banks offer the best savings rates?").own


@pytest.mark.parametrize(
    "text",
    [
        "can you break down my portfolio",
        "how are my stocks divvied up",
        "how is what I've invested spread across my holdings",
    ],
)
def test_a_breakdown_of_investments_is_their_allocation_with_uninvested_cash(text: str) -> None:
    question = understand(text)
    assert question.intents == ("allocation",)
    queries = [call.input.get("query") for call in plan(question, [], library())]
    assert UNINVESTED_QUERY in queries


@pytest.mark.parametrize(
    "text",
    ["break down my debts", "how should I split up my paycheck between savings and checking"],
)
def test_a_breakdown_of_something_else_is_not_an_allocation(text: str) -> None:
    assert "allocation" not in understand(text).intents


def test_an_allocation_asked_as_such_stays_the_shares_alone() -> None:
    queries = [
        call.input.get("query") for call in plan(understand("How is my portfolio allocated?"), [])
    ]
    assert UNINVESTED_QUERY not in queries


@pytest.mark.parametrize(
    "text",
    [
        "how much is on my double cash card",
        "balance on the citi double cash pls",
        "whats my double cash balance",
    ],
)
def test_a_card_named_by_its_issuers_name_is_that_card_not_cash(app: Flask, text: str) -> None:
    said, cited = answer_in_new_chat(app, api_client(app, "demo"), text)
    assert "$624.50" in said and "$25,175.09" not in said
    assert len(cited) == 1


def test_cash_and_debt_together_count_only_the_banks_as_cash(app: Flask) -> None:
    said, _ = answer_in_new_chat(app, api_client(app, "demo"), "how much cash and debt do i have")
    assert "owe $4,782.07" in said and "$25,175.09 in cash" in said
    assert "$4,782.07 in cash" not in said
