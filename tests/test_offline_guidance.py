"""The offline engine's guided answers: a bundled page's rule set against the user's own
figures. A question is read for its topic and for the figures of theirs that bear on it, in
wordings of no evaluation set; a question about the rule alone stays with the documents; the
queries run on both databases; and each figure cites exactly the accounts it came from."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, answer_in_new_chat, api_client, idle_after
from webapp.llm.offline.dispatch import Context, Reply, tasks
from webapp.llm.offline.guidance import Guided, read_guided, topics_of
from webapp.llm.offline.library import library
from webapp.store.accounts import list_accounts
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.tool_registry import EXECUTE_SQL
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend


@pytest.mark.parametrize(
    ("text", "topic", "figures"),
    [
        ("would I lose my money if Wells Fargo went under?", "deposit insurance", {"deposits"}),
        (
            "are my bitcoin and my brokerage shares fdic insured?",
            "deposit insurance",
            {"not_deposits"},
        ),
        ("can I afford to max out my Roth from checking?", "IRA contributions", {"source"}),
        (
            "how much of every paycheck would max my 403(b) for 2025?",
            "401(k) contributions",
            {"pay"},
        ),
        ("what's left in my savings if I buy the max in savings bonds?", "I bonds", {"source"}),
        ("we'd sell our house for what it's worth, any tax to pay?", "selling a home", {"home"}),
        ("does my sapphire balance hurt my fico?", "credit scores", {"cards"}),
        ("my home's value is up, can I get PMI dropped?", "private mortgage insurance", {"home"}),
        ("is now a good time to refi my mortgage?", "refinancing", {"mortgage"}),
        (
            "giving $400 to the red cross from my savings, deductible?",
            "charitable deductions",
            {"amount", "source"},
        ),
        (
            "I was born in 1965; should I claim social security at 62?",
            "Social Security",
            {"born"},
        ),
        ("if citi went bankrupt what happens to my money", "deposit insurance", {"deposits"}),
        ("my house: how close am i to ditching pmi?", "private mortgage insurance", {"home"}),
        (
            "born 1968, when do i get full social security, and my savings?",
            "Social Security",
            {"born", "named"},
        ),
    ],
)
def test_a_topic_is_read_with_the_figures_that_bear_on_it(
    text: str, topic: str, figures: set[str]
) -> None:
    found = {t.name: set(bearing) for t, bearing in topics_of(text)}
    assert topic in found, found
    assert figures <= found[topic]


@pytest.mark.parametrize(
    "text",
    [
        "What's the 2025 Roth IRA contribution limit?",
        "How much can I put in my 401(k) this year?",
        "When can I get rid of PMI?",
        "How is the gain on selling my home taxed?",
        "Can I deduct donations to charity?",
        "when can I claim social security",
        "How do I improve my credit score?",
        "Is there a cap on how many electronic I bonds one person can buy in a calendar year?",
        "is rental car insurance included with my sapphire preferred",
        # a card named as where it happens, no figure of it asked: the rule, in the documents
        "flying next month, i'll put the tickets on my sapphire. what if the flight is delayed?",
        "if i put a rental on my sapphire next month will it be covered",
        "What's my checking balance?",
    ],
)
def test_a_question_about_the_rule_alone_stays_with_the_documents(text: str) -> None:
    assert read_guided(text) is None


@pytest.mark.parametrize(
    ("text", "bearing"),
    [
        (
            "booked the whole trip on my sapphire and the flight got delayed 15 hours, what can "
            "i claim?",
            ("cards", "card_used"),
        ),
        # a purchase told on the card only names it: the card used, never its balance
        (
            "i put the hotel on my sapphire and the trip got cut short, is any of it covered?",
            ("card_used",),
        ),
        ("if i pay my card off in full do i still pay interest?", ("cards",)),
    ],
)
def test_a_card_rule_brings_in_the_cards_figures_only_when_asked_of_them(
    text: str, bearing: tuple[str, ...]
) -> None:
    guided = read_guided(text)
    assert guided is not None
    assert [b for _, b in guided.topics] == [bearing]


def test_a_card_rule_asked_alone_cites_the_rule_and_not_the_card(app: Flask) -> None:
    client = api_client(app, "alex")
    text, cited = answer_in_new_chat(
        app,
        client,
        "my jacket return got credited to my card, how long does the bank have to post it?",
    )
    assert "seven business days" in text and "$410.09" not in text
    assert all("your-account" not in c["source"] for c in cited)


def test_a_sum_of_pay_and_rent_is_answered_without_the_budgeting_page(app: Flask) -> None:
    client = api_client(app, "alex")
    text, cited = answer_in_new_chat(app, client, "what's left of two paychecks once rent is paid?")
    assert "$2,545.00" in text and "rule of thumb" not in text
    assert all("consumerfinance" not in c["source"] for c in cited)


@pytest.mark.parametrize(
    "text",
    [
        "is all my money at chase fdic insured?",
        "are my robinhood shares and my ether fdic insured, or only my bank accounts?",
        "could I put the max in a roth from my wells fargo checking?",
        "how much per paycheck to max my 401k for 2025?",
        "is it worth refinancing my mortgage?",
        "does my citi balance hurt my credit score?",
        "born in 1970, should I claim social security at 62 and leave my robinhood alone?",
        "what did marriott charge my sapphire, and how long do i have to dispute it?",
    ],
)
def test_every_query_runs_on_both_databases(sql_backend: SqlBackend, text: str) -> None:
    task = read_guided(text)
    assert task is not None
    queries = [c.input["query"] for c in task.calls() if c.name == EXECUTE_SQL]
    found = 0
    for query in queries:
        result = run_sql(sql_backend.engine, sql_backend.users["demo"].id, query)
        assert result.error is None, (query, result.error)
        assert {"source", "source_account_id"} <= set(result.columns)
        found += len(result.rows)
    assert found, queries  # the demo has no mortgage account, but pays one from checking


def _ask(app: Flask, client: ApiClient, question: str) -> tuple[str, list[dict[str, Any]]]:
    text, cited = answer_in_new_chat(app, client, question)
    return text, [c["target"] for c in cited]


def _accounts(app: Flask, username: str) -> dict[str, str]:
    """The user's accounts: "Institution / Name" (or the name alone) to its account id."""
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    found: dict[str, str] = {}
    for account in list_accounts(get_engine(app), user.id):
        name, place = str(account["account_name"]), account["institution_name"]
        found[f"{place} / {name}" if place else name] = str(account["source_account_id"])
    return found


def _cited_accounts(targets: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for target in targets:
        if target["kind"] == "account":
            found.add(target["accountId"])
        elif target["kind"] == "accounts":
            found |= {ref["accountId"] for ref in target["accounts"]}
    return found


def _pages(targets: list[dict[str, Any]]) -> set[str]:
    return {t["url"] for t in targets if t["kind"] == "web"}


@pytest.mark.parametrize(
    ("text", "page"),
    [
        (
            "dropped $400 in the church collection plate, do i need it in writing to deduct it?",
            "Publication 526: Charitable Contributions",
        ),
        (
            "giving $400 to the red cross from my savings, deductible?",
            "Charitable contribution deductions",
        ),
    ],
)
def test_a_topic_answers_from_its_page_ranked_best_for_the_question(text: str, page: str) -> None:
    assert [topic.page for topic, _ in topics_of(text)] == [page]


def test_deposit_insurance_cites_the_bank_named_and_no_other(app: Flask) -> None:
    text, targets = _ask(
        app, api_client(app, "demo"), "would i lose my money if wells fargo failed?"
    )
    accounts = _accounts(app, "demo")
    assert "$250,000" in text and "$2,104.76" in text and "$247,895.24 under" in text
    assert "$4,820.33" not in text
    assert _cited_accounts(targets) == {accounts["Wells Fargo / Checking"]}
    assert _pages(targets) == {
        "https://www.fdic.gov/resources/deposit-insurance/understanding-deposit-insurance"
    }


def test_a_payroll_limit_is_worked_out_per_paycheck_from_the_deposits(app: Flask) -> None:
    text, targets = _ask(
        app,
        api_client(app, "alex"),
        "how much of each of my paychecks would it take to max a 401k?",
    )
    # $23,500 over 26 paychecks of $2,210.00 every two weeks.
    assert "$23,500" in text and "$2,210.00 every two weeks" in text
    assert "$903.85 from each paycheck" in text and "40.9%" in text
    assert "gross pay" in text  # the deposits are take-home pay: said, not assumed away
    assert _cited_accounts(targets) == {_accounts(app, "alex")["Bank of America / Checking"]}


def test_a_home_sale_sets_the_home_value_against_the_joint_exclusion(app: Flask) -> None:
    text, targets = _ask(
        app, api_client(app, "demo"), "if my wife and I sold our house at what it's worth, tax?"
    )
    assert "$485,000.00" in text and "$500,000 you may exclude on a joint return" in text
    assert "don't have" in text  # what they paid for it
    assert _cited_accounts(targets) == {_accounts(app, "demo")["Home"]}
    assert _pages(targets) == {"https://www.irs.gov/taxtopics/tc701"}


def test_a_yearly_limit_from_one_account_says_what_it_leaves(app: Flask) -> None:
    text, targets = _ask(
        app, api_client(app, "demo"), "what would maxing out i bonds leave in my chase savings?"
    )
    assert "$10,000" in text and "$18,250.00" in text and "$8,250.00" in text
    assert _cited_accounts(targets) == {_accounts(app, "demo")["Chase / Savings"]}


def test_a_yearly_limit_spread_over_the_paychecks(app: Flask) -> None:
    text, targets = _ask(app, api_client(app, "alex"), "could my paychecks cover a full roth?")
    # $7,000 over 26 paychecks of $2,210.00.
    assert "$7,000" in text and "$269.23 a paycheck" in text and "modified AGI" in text
    assert _cited_accounts(targets) == {_accounts(app, "alex")["Bank of America / Checking"]}


def test_a_follow_up_keeps_the_topic_of_the_accounts_it_names(app: Flask) -> None:
    client = api_client(app, "demo")
    with idle_after(app):
        session_id = client.new_session()
        client.stream(client.ask(session_id, "is my chase money fdic insured?")["stream_url"])
        events = client.stream(client.ask(session_id, "and at wells fargo?")["stream_url"])
    parsed = [(e.event, json.loads(e.data)) for e in events]
    (message,) = [data for name, data in parsed if name == "message"]
    text = "".join(block.get("text", "") for block in message["message"]["content"])
    (summary,) = [data for name, data in parsed if name == "citations_summary"]
    targets = [c["target"] for c in summary["citations"]]
    assert text.startswith("Taking that as the same question, about deposit insurance")
    assert "$2,104.76" in text and "$250,000" in text and "$4,820.33" not in text
    assert _cited_accounts(targets) == {_accounts(app, "demo")["Wells Fargo / Checking"]}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("put $1000 into my roth ira", "can't move money"),
        ("whats my credit score", "don't have your credit score"),
    ],
)
def test_a_request_or_data_not_held_is_still_said_so(text: str, says: str) -> None:
    (task,) = tasks(text, Context(library(), None))
    assert isinstance(task, Reply) and says in task.text


def test_a_message_part_of_its_own_is_answered_on_its_own() -> None:
    # "what is my net worth" is a question of its own; "how much would that leave me" and
    # "tell me about my mortgage" belong to the guided question before them.
    books = library()
    apart = tasks("is my chase money fdic insured and what is my net worth?", Context(books, None))
    assert len(apart) == 2 and not isinstance(apart[1], Reply)
    (one,) = tasks(
        "how many i bonds can i buy, and how much would that leave in my savings?",
        Context(books, None),
    )
    (other,) = tasks(
        "is it worth it for me to refinance? tell me what you see about my mortgage",
        Context(books, None),
    )
    assert isinstance(one, Guided) and isinstance(other, Guided)


def test_a_part_that_speaks_of_a_figure_the_topic_reads_belongs_to_it() -> None:
    # "could I handle 10% of each paycheck" asks about pay, a figure a 401(k) limit reads.
    (task,) = tasks(
        "my employer offers a 401k. what's the 2025 max, and could i manage 8% of each paycheck?",
        Context(library(), None),
    )
    assert isinstance(task, Guided)


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("i put the shoes on my visa and returned them, when does the refund show up?", True),
        ("bought a lamp with my card, sent it back. how soon is the refund due?", True),
        (
            "the airline says they refunded me. when must my card company put the refund on it?",
            False,
        ),
        ("the store put the money back on my card? when should it show up", False),
    ],
)
def test_a_refund_shows_the_card_only_for_a_purchase_told(text: str, told: bool) -> None:
    # "put the shoes on my visa" tells of a purchase; "put the refund on it" is money put back
    bearing = {
        b for topic, found in topics_of(text) for b in found if topic.name.startswith("a refund")
    }
    assert ("cards" in bearing) is told


@pytest.mark.parametrize(
    "text",
    [
        "we'll put down under 20% on our first condo. does the pmi last for good?",
        "buying soon with less than 20 percent down. am i paying pmi for the life of the loan?",
    ],
)
def test_a_share_down_said_to_be_under_the_line_pays_pmi_until_it_ends(
    app: Flask, text: str
) -> None:
    text, targets = _ask(app, api_client(app, "alex"), text)
    assert "under the 20 percent" in text and "78 percent" in text, text
    assert all(t["kind"] == "web" for t in targets), targets
