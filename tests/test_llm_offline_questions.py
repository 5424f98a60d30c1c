"""The offline engine's model of a question: typos, scope, parts, follow-ups, computations,
open questions, and how one message's questions share a round of tool calls."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.llm.base import ModelRequest
from webapp.llm.offline.cite import Result
from webapp.llm.offline.compute import read_computation, write_computation
from webapp.llm.offline.conversation import (
    earlier_questions,
    follow_up,
    previous_question,
    split_parts,
    standing,
)
from webapp.llm.offline.dispatch import Context, Reply, tasks
from webapp.llm.offline.figures import rows_of
from webapp.llm.offline.fuzzy import correct
from webapp.llm.offline.library import library
from webapp.llm.offline.model import OfflineModel
from webapp.llm.offline.overview import overview
from webapp.llm.offline.prose import document_answer
from webapp.llm.offline.quotable import Source, units_of
from webapp.llm.offline.scope import missing_document, scope_reply
from webapp.llm.offline.task import answer, merged_calls
from webapp.llm.stream import MessageAccumulator


def account(
    name: str, place: str | None, kind: str, subtype: str, balance: float, **more: Any
) -> dict[str, Any]:
    return {
        "source": "plaid",
        "source_account_id": f"acct_{name}_{place}".replace(" ", "_").ljust(20, "x"),
        "account_name": name,
        "institution_name": place,
        "account_type": kind,
        "account_subtype": subtype,
        "current_balance": balance,
        "currency": "USD",
        **more,
    }


ROWS = [
    account("Checking", "Chase", "depository", "checking", 1000.0),
    account("Savings", "Chase", "depository", "savings", 5000.0),
    account("Credit card", "American Express", "credit", "credit card", 300.0, credit_limit=1000.0),
    account("Credit card", "Citi", "credit", "credit card", 100.0, credit_limit=2000.0),
    account("Home", None, "property", "home", 200000.0),
]


def sql_result(rows: list[dict[str, Any]], index: int = 0, call: int = 0) -> Result:
    texts = ["\n".join(f"{k}: {'null' if v is None else v}" for k, v in r.items()) for r in rows]
    return Result(
        "execute_sql",
        index,
        {
            "type": "search_result",
            "source": "silvia://your-account/rows",
            "title": "rows",
            "content": [{"type": "text", "text": t} for t in texts],
        },
        call,
    )


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("how much is in my wels fargo acount", "how much is in my wells fargo account"),
        ("whats my saphire prefered balnce", "whats my sapphire preferred balance"),
        ("can I afford a vacation?", "can I afford a vacation?"),  # a real word stays
        ("Can you recommend a pizza place?", "Can you recommend a pizza place?"),
        ("how long do i have to dispuet a charge", "how long do i have to dispute a charge"),
        ("wat is an index fund", "what is an index fund"),
    ],
)
def test_typos_are_read_as_the_words_they_stand_for(typed: str, meant: str) -> None:
    assert correct(typed) == meant


@pytest.mark.parametrize(
    ("question", "says"),
    [
        ("Transfer $500 from savings to checking", "can't move money"),
        ("buy 10 shares of VTI for me", "can't place trades"),
        ("pay my amex bill", "can't make payments"),
        ("Will AAPL go up next week?", "can't predict"),
        ("What's my credit score?", "don't have your credit score"),
        ("what's the APR on my sapphire preferred", "interest rate"),
        ("What's the weather like?", "can't help"),
        ("Please open a new savings account for me", "can't open"),
        ("What will my net worth be in 5 years?", "can't project"),
    ],
)
def test_what_the_product_cannot_do_gets_a_plain_reply(question: str, says: str) -> None:
    reply = scope_reply(question)
    assert reply is not None and says in reply


@pytest.mark.parametrize(
    "question",
    [
        "What is AAPL trading at?",
        "Does my Sapphire Preferred cover rental car damage?",
        "What is a credit score?",
        "which card should I pay off first?",
        "Does my card cover a trip cancelled for bad weather?",
        "How do I improve my credit score?",
    ],
)
def test_questions_the_product_answers_are_not_refused(question: str) -> None:
    assert scope_reply(question) is None


def test_a_document_the_library_lacks_is_named_as_missing() -> None:
    books = library()
    reply = missing_document("What does IRS publication 17 say about filing status?", books)
    assert reply is not None and "Publication 17" in reply
    assert "526" not in reply  # charitable contributions: not about filing status
    listed = missing_document("what's in irs publication 17?", books)  # no topic: all held
    assert listed is not None and "526" in listed
    assert missing_document("What does publication 526 say about donations?", books) is None
    code = missing_document("US Code section on the mortgage interest deduction", books)
    assert code is not None and "mortgage interest deduction" in code
    assert missing_document("What does the US code say about selling my home?", books) is None


def test_a_message_splits_into_its_questions() -> None:
    assert split_parts("401k limit for 2025 and what is my checking balance?") == [
        "401k limit for 2025",
        "what is my checking balance?",
    ]
    assert split_parts("What's my Amex balance? And how much is in savings?") == [
        "What's my Amex balance?",
        "how much is in savings?",
    ]
    assert split_parts("Compare my savings to my credit card debt") == [
        "Compare my savings to my credit card debt"
    ]


def test_a_follow_up_inherits_the_measure_and_says_what_it_assumed() -> None:
    found = follow_up("What about Citi?", standing("how much do i owe on my amex"))
    assert found is not None
    question, note = found
    assert question.intents == ("debts",) and question.institutions == ("citi",)
    assert "what you owe" in note and "Citi" in note
    other = follow_up("and the other card?", standing("What's my Amex balance?"))
    assert other is not None
    assert other[0].kinds == ("credit",) and other[0].excluded == ("american", "express")
    assert follow_up("What is an index fund?", standing("What's my Amex balance?")) is None
    assert follow_up("What about Citi?", None) is None
    # "and without the house?": the same question, the home left out
    without = follow_up("and without the house?", standing("What is my net worth?"))
    assert without is not None
    assert without[0].intents == ("net_worth",) and without[0].excluded_kinds == ("property",)
    # A follow-up of a follow-up keeps the first question's measure.
    chain = previous_question(["how much do i owe on my amex", "and citi?"])
    assert chain is not None and chain.intents == ("debts",) and chain.institutions == ("citi",)
    held = follow_up("and Apple?", standing("How many shares of VTI do I have?"))
    assert held is not None and held[0].tickers == ("AAPL",) and "holdings" in held[0].intents
    cash = follow_up("how about just cash?", standing("what's my net worth?"))
    assert cash is not None and cash[0].intents == ("cash",) and "your cash" in cash[1]


def test_earlier_questions_come_from_the_requests_history() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "how much do i owe on my amex"},
        {"role": "assistant", "content": [{"type": "text", "text": "You owe $1."}]},
        {"role": "user", "content": [{"type": "text", "text": "What about Citi?"}]},
    ]
    assert earlier_questions(messages) == ["how much do i owe on my amex"]


def test_computations_over_the_users_rows_cite_what_they_used() -> None:
    rows = rows_of([sql_result(ROWS)])
    difference = read_computation("How much more is in my savings than in my checking?")
    assert difference is not None and difference.op == "difference"
    blocks = write_computation(difference, rows)
    text = "".join(t for t, _ in blocks)
    assert "$4,000.00 more" in text
    assert {c["start_block_index"] for c in blocks[0][1]} == {0, 1}  # savings, checking
    share = read_computation("What share of my net worth is my home?")
    assert share is not None
    (sentence, cites) = write_computation(share, rows)[0]
    # 200,000 of 206,000 - 400 owed = 205,600
    assert "97.3%" in sentence and len(cites) == 1 + len(ROWS)
    lowest = read_computation("which of my cards has the lowest balance")
    assert lowest is not None and lowest.op == "lowest"
    top, top_cites = write_computation(lowest, rows)[0]
    assert "Citi" in top and "$100.00" in top and top_cites[0]["start_block_index"] == 3
    count = read_computation("how many credit cards do i have")
    assert count is not None
    assert "two credit cards" in write_computation(count, rows)[0][0]
    assert read_computation("Compare Microsoft and Google stock prices") is None
    assert read_computation("what's the difference between an ETF and a mutual fund?") is None
    bigger = read_computation("Which is bigger, my checking or my savings?")
    assert bigger is not None and bigger.op == "difference"


def test_an_overview_cites_each_figure() -> None:
    blocks = overview(rows_of([sql_result(ROWS)]))
    text = "".join(t for t, _ in blocks)
    assert "$205,600.00" in text and "$6,000.00" in text and "13.3%" in text
    assert all(cites for t, cites in blocks if "$" in t)


def test_questions_of_one_message_share_calls_and_each_reads_its_own_results() -> None:
    context = Context(library(), None)
    found = tasks(
        "What's my Amex balance? And what's my Citi balance? Transfer $5 to savings", context
    )
    assert isinstance(found[2], Reply)
    calls, positions = merged_calls(found)
    assert len(calls) == 2 and positions == [[0], [1], []]
    amex = [account("Credit card", "American Express", "credit", "credit card", 300.0)]
    citi = [account("Credit card", "Citi", "credit", "credit card", 100.0)]
    parts = answer(found, [sql_result(amex, 0, 0), sql_result(citi, 1, 1)])
    assert "$300.00" in parts[0][0][0] and "$100.00" not in parts[0][0][0]
    assert "$100.00" in parts[1][0][0]
    assert "can't move money" in parts[2][0][0]


def test_a_follow_up_asks_the_tools_about_the_new_entity() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "how much do i owe on my amex"},
        {"role": "assistant", "content": [{"type": "text", "text": "You owe $1,842.17."}]},
        {"role": "user", "content": "What about Citi?"},
    ]
    acc = MessageAccumulator()
    for event in OfflineModel().stream(ModelRequest("", messages, [])):
        acc.feed(event)
    (call,) = acc.final_message()["content"]
    assert call["name"] == "execute_sql"
    assert "citi" in call["input"]["query"] and "american" not in call["input"]["query"]


def test_list_items_keep_their_words_and_step_titles_do_not_open_sentences() -> None:
    books = library()
    doc = next(d for d in books.docs if d.path.endswith("disputing-a-card-charge.md"))
    text = (
        "1. **Note the dates.** A notice has to reach the issuer within 60 days.\n\n"
        "- a computational error;\n- a charge you did not make; or\n- a late statement."
    )
    result = Result(
        doc.tool or "",
        0,
        {
            "source": "s",
            "title": doc.title,
            "content": [{"type": "text", "text": t} for t in text.split("\n\n")],
        },
    )
    units = [u.text for u in units_of(Source(result, 0))]
    assert units[0] == "A notice has to reach the issuer within 60 days."
    assert "computational error;" in units[1] and "err;" not in units[1].replace("error;", "")
    answer_text = " ".join(
        t for t, _ in document_answer("How long to dispute?", [Source(result, 0)], books.rarity)
    )
    assert not answer_text.startswith("Note the dates")
