"""The offline engine's money decisions of issue 19's fifth set, in wordings of no set: a sum
come in and what to do with it, pay against the rent or mortgage and what could be put
aside, saving for retirement with no target by age, a home sale's gain from the price paid,
when to claim Social Security, a judgement of the last answer's figure, paying off cards with
an emergency fund in mind, index funds or the bank, and one holding's share of its account."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.support.apps import ApiClient, answer_in_new_chat, api_client
from webapp.llm.offline.dispatch import Context, Framed, Opened, tasks
from webapp.llm.offline.guidance import Guided, topics_of
from webapp.llm.offline.library import library
from webapp.llm.offline.windfall import Windfall, read_windfall


def _ask(app: Flask, client: ApiClient, *questions: str) -> tuple[str, set[str]]:
    """Ask in one chat; return the last answer's text and the sources it cites."""
    text, cited = answer_in_new_chat(app, client, *questions)
    return text, {str(c["source"]) for c in cited}


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("my aunt left me $12,000, what's the smartest use of it?", 12000.0),
        ("got a 1500 tax refund, what should i do with it", 1500.0),
        ("a $5k bonus landed today. save it, invest it or pay down debt?", 5000.0),
        ("got a small bonus coming. which of my credit cards should i throw it at first?", None),
        ("I got a $2,000 bonus, which card should it go to first?", None),  # the payoff order
        ("what's my checking balance?", None),
        ("Got $5k from selling my old car. What's the best use of it?", 5000.0),
        ("my grandma gave me 2000 dollars, should i invest it or pay off my card?", 2000.0),
        ("I get $2,850 every other week, should I buy a $400 phone?", None),  # pay, not a sum
    ],
)
def test_a_sum_come_in_is_read_with_its_amount(text: str, amount: float | None) -> None:
    assert read_windfall(text) == amount


def test_a_windfall_is_one_task_before_the_message_is_split() -> None:
    (task,) = tasks(
        "Inherited about $8,000. Should I clear the cards, or invest it?",
        Context(library(), None),
    )
    assert isinstance(task, Windfall) and task.amount == 8000.0


def test_a_windfall_goes_to_the_debt_then_the_emergency_fund(app: Flask) -> None:
    text, sources = _ask(
        app, api_client(app, "alex"), "my aunt left me $2,000, how best to use it?"
    )
    assert "you owe $410.09 on your Bank of America credit card" in text
    assert "would leave $1,589.91" in text  # $2,000 - $410.09
    assert "putting $1,589.91 there would bring it to $4,710.35" in text  # + $3,120.44
    assert "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/" in (
        sources
    )


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("what percentage of my paycheck does rent eat up?", "pay and housing"),
        ("with my salary, how much could I save each month after the mortgage?", "pay and housing"),
        ("how much should i be saving for retirement", "retirement saving"),
        ("am I on track saving for retirement?", "retirement saving"),
        ("born 1985, is waiting till 70 to claim social security worth it?", "Social Security"),
    ],
)
def test_pay_retirement_and_claiming_are_guided_topics(text: str, topic: str) -> None:
    assert topic in {t.name for t, _ in topics_of(text)}


@pytest.mark.parametrize(
    "text",
    [
        "wht did i pay oakwood for rent last mnth",  # pay, the verb: a spending question
        "Should I pay down my mortgage or invest?",
        "can I put more in my IRA for retirement this year?",  # the IRA topic alone
    ],
)
def test_pay_as_a_verb_or_a_named_plan_is_not_the_general_topic(text: str) -> None:
    names = {t.name for t, _ in topics_of(text)}
    assert "pay and housing" not in names and "retirement saving" not in names


def test_rent_against_the_paychecks_and_what_could_be_put_aside(app: Flask) -> None:
    text, _ = _ask(
        app, api_client(app, "alex"), "paid every other week; after rent what can i save a month?"
    )
    assert "$2,210.00 every two weeks" in text and "Oakwood Apartments $1,875.00" in text
    assert "$2,545.00 of those two paychecks is left" in text  # 2 x 2,210 - 1,875
    assert "take-home pay" in text


def test_the_mortgage_share_of_pay_is_not_called_too_big(app: Flask) -> None:
    text, _ = _ask(app, api_client(app, "demo"), "is my mortgage too much of my income?")
    assert "Rocket Mortgage $2,140.00" in text and "34.7% of your average month's pay" in text
    assert "can't call it too big" in text


def test_retirement_saving_says_what_the_person_says_is_put_by(app: Flask) -> None:
    text, _ = _ask(app, api_client(app, "alex"), "I'm 45 and only have 20k saved for retirement")
    assert "You say you have $20,000.00 put by for it elsewhere" in text


def test_retirement_saving_gives_the_limits_and_no_target_by_age(app: Flask) -> None:
    text, _ = _ask(
        app, api_client(app, "alex"), "I'm 31 with nothing saved for retirement, how bad is that?"
    )
    assert "no savings target by age" in text and "$23,500" in text and "$7,000" in text
    assert "$269.23 a paycheck" in text  # the IRA's $7,000 over 26 paychecks


def test_a_home_sale_gain_from_the_price_paid(app: Flask) -> None:
    text, _ = _ask(
        app, api_client(app, "demo"), "we paid 150k for our home in 2012; tax if we sell it?"
    )
    assert "a gain of about $335,000.00" in text  # $485,000 - $150,000
    assert "$500,000 you may exclude on a joint return" in text
    text, _ = _ask(
        app, api_client(app, "demo"), "single, bought my house for $200k, selling for $520k: tax?"
    )
    assert "a gain of about $320,000.00" in text and "$70,000.00 above the $250,000" in text


def test_claiming_later_works_out_the_delayed_credits(app: Flask) -> None:
    text, _ = _ask(
        app, api_client(app, "alex"), "born in 1991: claim social security early or wait?"
    )
    assert "full retirement age is 67" in text and "until age 70" in text
    assert "Waiting until 70, in 2061, would add 3 years of credits, about 24 percent" in text


def test_a_judgement_of_the_last_figure_says_there_is_no_benchmark() -> None:
    (task,) = tasks(
        "is that normal for a 40 year old?", Context(library(), None, ("how much cash do i have",))
    )
    assert isinstance(task, Framed) and "by age" in task.closing


def test_paying_off_the_cards_with_an_emergency_fund_in_mind(app: Flask) -> None:
    text, _ = _ask(
        app, api_client(app, "demo"), "if i wipe out the card balances, is my emergency fund ok?"
    )
    assert "Owed in all: $4,782.07" in text and "would leave $20,393.02" in text
    assert "about 9.0 months of your fixed bills" in text  # $20,393.02 over $2,275.45


@pytest.mark.parametrize(
    "text",
    [
        "would index funds be smarter than my bank account?",
        "is it a good idea to start investing yet?",
    ],
)
def test_whether_to_invest_is_the_allocation_answer(text: str) -> None:
    (task,) = tasks(text, Context(library(), None))
    assert isinstance(task, Opened) and task.kind == "allocate"


def test_one_holding_is_set_against_its_account(app: Flask) -> None:
    text, _ = _ask(app, api_client(app, "demo"), "too much riding on VTI, should I rebalance?")
    assert "worth $17,609.05 in all, $312.55 of it uninvested cash" in text
    assert "VTI is 65.8% of it" in text and "Rebalancing brings it back" in text


def test_a_long_advice_question_finds_the_card_benefit() -> None:
    (task,) = tasks(
        "Driving a hire car round Portugal soon. Can I rely on my Sapphire Preferred?",
        Context(library(), None),
    )
    assert not isinstance(task, Guided)
    hits = getattr(task, "hits", [])
    assert hits and hits[0].doc.path.endswith("chase-sapphire-preferred-benefits.md")


@pytest.mark.parametrize(
    "text",
    [
        "is my emergency fund big enough, and how close am I to six months?",
        "should my emergency fund be bigger? how far short am I of three months?",
    ],
)
def test_how_far_from_the_target_goes_with_the_open_question(text: str) -> None:
    (task,) = tasks(text, Context(library(), None))
    assert isinstance(task, Opened) and task.kind == "cushion"


def test_the_cushion_answer_says_how_short_of_three_months(app: Flask) -> None:
    text, _ = _ask(app, api_client(app, "alex"), "is my rainy day money enough?")
    assert "$2,558.53 short of three months" in text  # 3 x $1,892.99 - $3,120.44
