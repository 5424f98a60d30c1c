"""The offline engine's money advice from the user's own figures (issue 19's fourth set): the
question read by meaning (can I afford it, how long would my cash last, a budget, the whole
picture, one holding against the mix), the regular bills read from the transactions, and
each answer citing its rows and the bundled guide it quotes. Wordings here are in no set."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask

from tests.support.apps import ApiClient, answer_in_new_chat, api_client
from webapp.llm.offline.advice import advice_kind
from webapp.llm.offline.ask import understand
from webapp.llm.offline.bills import bills_queries, months, stated_pay
from webapp.llm.offline.dispatch import Context, Opened, tasks
from webapp.llm.offline.fuzzy import correct
from webapp.llm.offline.library import library
from webapp.llm.offline.overview import asks_budget, asks_overview, read_open
from webapp.llm.offline.scope import padded
from webapp.tools.sql.service import run_sql

if TYPE_CHECKING:
    from tests.conftest import SqlBackend


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("would it be stupid to spend $3,000 of my savings on a holiday?", "afford"),
        ("how many months could my savings carry me if I lost my job?", "cushion"),
        ("how long would the cash in my checking last me?", "cushion"),
        ("is it daft to pay my amex off before the citi?", "payoff"),
        ("is it silly to pay the sapphire card off early?", "payoff"),
        ("would it be crazy to drop $9,000 on a boat using my savings?", "afford"),
        ("got a $1,000 tax refund - which card should it go on?", "payoff"),
        ("am I too heavy in VTI?", "sell"),
        ("is it dumb to leave my emergency money sitting in checking", "cushion"),
        # the rule in general, no figures of one's own: the documents answer
        ("How many months of expenses should an emergency fund cover?", None),
        # "worth" as a value asks no judgement; "worth doing" does
        ("rank my investments from biggest to smallest by what theyre worth", None),
        ("list what my holdings are worth", None),
        ("is it worth paying my amex off early?", "payoff"),
        ("are index funds worth it for me?", "allocate"),
    ],
)
def test_money_advice_is_read_by_its_words(text: str, kind: str | None) -> None:
    assert advice_kind(padded(text), understand(text)) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("give me a quick summary of my finances", "overview"),
        ("what shape is my money in?", "overview"),
        ("run me through where I stand", "overview"),
        ("quick financial check-up please", "overview"),
        ("where is all my money going every month?", "budget"),
        ("can you help me set up a budget?", "budget"),
        ("I need a spending plan, my money keeps leaking away", "budget"),
        ("I hold no investments - is an index fund a good place to start?", "allocate"),
        ("how much money is in checking", None),
        ("what is a budget?", None),
        ("what's my overall credit utilization?", None),
    ],
)
def test_open_questions_are_read_by_meaning(text: str, kind: str | None) -> None:
    found = read_open(padded(text), understand(text))
    assert (found[0] if found else None) == kind


def test_budget_and_overview_readings_need_their_own_words() -> None:
    assert asks_budget(" help me budget ")
    assert not asks_budget(" whats the 50 30 20 budget rule ")  # no one's own money
    assert asks_overview(" sum up my money ")
    assert not asks_overview(" i cant stand my bank ")


def test_plain_words_are_not_taken_for_typos() -> None:
    assert correct("a proper plan, with the cash sitting in checking") == (
        "a proper plan, with the cash sitting in checking"
    )
    assert correct("a boat, not boa") == "a boat, not boa"  # no abbreviation's typo
    assert correct("my irra") == "my ira"  # but a letter doubled is


@pytest.mark.parametrize(
    "text",
    [
        "is it dumb to spend $500 on a tv? that's most of my checking",
        "should i sell my apple? feels like a lot in one company",
        "how long would my savings last? and is that enough for emergencies?",
    ],
)
def test_a_remark_or_the_same_question_again_goes_with_the_open_question(text: str) -> None:
    (task,) = tasks(text, Context(library(), None))
    assert isinstance(task, Opened)
    assert text.split("? ")[1].removeprefix("and ") in task.question.text


def test_pay_and_months_as_a_person_says_them() -> None:
    assert stated_pay("i get paid 1200 every other week") == (2600.0, "$1,200.00 every two weeks")
    assert stated_pay("i earn 3,000 a month") == (3000.0, "$3,000.00 a month")
    assert stated_pay("i spend 300 a week") is None  # spending, not pay
    assert months(18250.0, 2140.0) == "about 8.5 months"
    assert months(100000.0, 1000.0) == "about 8.3 years"


def test_the_bills_queries_run_on_both_databases(sql_backend: SqlBackend) -> None:
    today = datetime.now(UTC).date()  # the backends were seeded today
    for query in bills_queries(today):
        result = run_sql(sql_backend.engine, sql_backend.users["demo"].id, query)
        assert result.error is None, (query, result.error)
        assert result.rows, query


@pytest.fixture
def demo(app: Flask) -> ApiClient:
    return api_client(app, "demo")


def _ask(app: Flask, client: ApiClient, question: str) -> tuple[str, list[dict[str, Any]]]:
    text, cited = answer_in_new_chat(app, client, question)
    return text, cited


def test_how_long_savings_last_counts_the_bills_from_the_transactions(
    app: Flask, demo: ApiClient
) -> None:
    text, citations = _ask(app, demo, "if I lost my job how long would my savings last me?")
    assert "$18,250.00 in your Chase savings account" in text
    assert "Rocket Mortgage: $2,140.00 a month" in text
    assert "about 8.0 months" in text  # $18,250.00 over $2,275.45 of fixed bills
    assert "$4,820.33" not in text  # the checking balance: not the cash asked about
    sources = {c["source"] for c in citations}
    assert "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/" in (
        sources
    )


def test_affording_with_a_bill_still_to_come_out(app: Flask, demo: ApiClient) -> None:
    text, _ = _ask(app, demo, "can i afford a $3,000 sofa with the mortgage still to pay?")
    assert "$25,175.09 across three bank accounts" in text
    assert "your mortgage as still to come out" in text
    assert "you would have $20,035.09 left" in text  # 25,175.09 - 3,000 - 2,140


def test_one_holding_against_the_mix_shows_the_mix_and_the_rule(
    app: Flask, demo: ApiClient
) -> None:
    text, citations = _ask(app, demo, "is it risky to keep so much riding on apple alone?")
    assert "25 shares of AAPL worth $5,712.50" in text
    assert "40 shares of VTI" in text  # the rest of the mix
    assert "you should sell" not in text.lower()
    assert any("diversification" in c["source"] for c in citations)


def test_where_to_keep_the_cushion_quotes_the_guide_on_keeping_it_apart(app: Flask) -> None:
    said, _ = answer_in_new_chat(
        app, api_client(app, "alex"), "am i ok leaving all my cash in checking?"
    )
    assert "$3,120.44" in said and "three to six months" in said
    assert "separate from your everyday checking" in said


def test_one_holding_against_the_whole_mix_cites_the_portfolio_for_its_share(
    app: Flask, demo: ApiClient
) -> None:
    text, citations = _ask(
        app, demo, "my apple and vti are basically all i have, too concentrated?"
    )
    assert "25.3% of your holdings" in text
    assert "silvia://your-portfolio" in {c["source"] for c in citations}
