"""The offline engine: what it understands, what it asks the tools, how it writes and cites."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from webapp.llm.base import ModelRequest
from webapp.llm.offline.ask import is_small_talk, tickers_in, understand
from webapp.llm.offline.cite import Result
from webapp.llm.offline.figures import balances, debts, net_worth, rows_of, utilization
from webapp.llm.offline.library import Library, LibraryDoc, library
from webapp.llm.offline.markets import quote
from webapp.llm.offline.model import OfflineModel
from webapp.llm.offline.plan import account_query, plan
from webapp.llm.offline.prose import document_answer
from webapp.llm.offline.quotable import Source, units_of
from webapp.llm.offline.words import amounts, money, years
from webapp.llm.stream import MessageAccumulator
from webapp.tools.python.market import FinnhubLive
from webapp.tools.web_index import LocalWebIndex
from webapp.tools.web_search import search_web

# --- understanding -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "intents"),
    [
        ("What do I owe on my credit cards?", ("debts",)),
        ("What is my net worth?", ("net_worth",)),
        ("Add up what I own minus what I owe", ("net_worth",)),
        ("What's my credit utilization?", ("utilization",)),
        ("How much cash do I have?", ("cash",)),
        ("What do I have at Chase?", ("balances",)),
        ("What are my holdings?", ("holdings",)),
        ("How is my portfolio allocated?", ("allocation",)),
        ("How are my Apple shares doing?", ("holdings", "quote")),
        ("How many shares of VTI do I own?", ("holdings",)),
        ("Price of $NVDA?", ("quote",)),
        ("What is Tesla trading at?", ("quote",)),
        ("Do I owe tax when I sell my home?", ()),
        ("What does Regulation Z require lenders to disclose on a mortgage?", ()),
        ("How much ETH do I have?", ("holdings",)),
        ("Is my Citi card maxed out?", ("utilization",)),
        ("What's my biggest expense?", ("spending",)),
        ("Hi", ("small_talk",)),
        ("thanks so much!", ("small_talk",)),
    ],
)
def test_intents(question: str, intents: tuple[str, ...]) -> None:
    assert understand(question).intents == intents


def test_entities_come_from_the_words_and_the_names_people_use() -> None:
    asked = understand("What's my Amex balance at the end of 2025, above $2,000?")
    assert asked.institutions == ("american express",)
    assert asked.names == ("american", "express", "end")  # the data decides which are names
    assert asked.years == (2025,) and asked.amounts == (2000.0,)
    checking = understand("What is my Chase checking balance?")
    assert checking.kinds == ("checking",) and checking.names == ("chase",)
    assert understand("Which card has the lowest balance?").extreme == "least"
    assert understand("Do I have accounts at Fidelity?").institutions == ("fidelity",)


def test_a_question_that_only_names_an_account_asks_for_it() -> None:
    assert understand("my chase checking?").names_account
    assert not understand("When does the lender have to give me a Loan Estimate?").names_account
    assert not understand("Is trip delay covered on my Sapphire card?").names_account


@pytest.mark.parametrize(
    ("question", "tickers"),
    [
        ("AAPL vs MSFT", ["AAPL", "MSFT"]),
        ("apple and Google", ["AAPL", "GOOGL"]),
        ("I OWE TAX", []),
        ("$SPY", ["SPY"]),
        ("What is the IRA limit?", []),
        ("TSLA stock price", ["TSLA"]),
        ("is spy up", ["SPY"]),
    ],
)
def test_tickers_in(question: str, tickers: list[str]) -> None:
    assert tickers_in(question) == tickers


@pytest.mark.parametrize(
    ("text", "small"),
    [
        ("Hello there!", True),
        ("What can you do?", True),
        ("Thanks", True),
        ("Hello, what is my net worth?", False),
        ("What's the weather?", False),
    ],
)
def test_small_talk(text: str, small: bool) -> None:
    assert is_small_talk(text) is small


def test_amounts_and_years() -> None:
    assert amounts("Can I spend $2,500.50 or $3k or 40 dollars?") == [2500.5, 3000.0, 40.0]
    assert years("limits for 2025 and 1999, not 12025") == [2025, 1999]
    assert money(-20) == "-$20.00" and money(1234.5) == "$1,234.50"
    assert money(10, "EUR") == "10.00 EUR"


# --- the tool calls ----------------------------------------------------------------------------


def names(question: str) -> list[str]:
    asked = understand(question)
    return [call.name for call in plan(asked, [] if asked.intents else library().rank(question))]


def test_a_ticker_the_snapshot_lacks_is_quoted_when_the_market_data_is_live() -> None:
    asked = understand("What is TSLA trading at?")
    # The bundled snapshot has no TSLA: the answer says so, with no tool call.
    assert plan(asked, []) == []
    # Live market data (FINNHUB_API_KEY set) covers it: the quote tool is asked.
    live = FinnhubLive("finnhub-key", base_url="http://127.0.0.1:9")
    (call,) = plan(asked, [], market=live)
    assert call.name == "execute_python" and "TSLA" in call.input["code"]


@pytest.mark.parametrize(
    ("question", "tools"),
    [
        ("What do I owe on my credit cards?", ["execute_sql"]),
        ("What is my checking balance?", ["execute_sql"]),
        ("What are my holdings?", ["execute_sql"]),
        ("How are my Apple shares doing?", ["execute_sql", "execute_python"]),
        ("Price of $NVDA?", ["execute_python"]),
        ("Can I deduct charitable gifts on my taxes?", ["read_tax_authority", "search_web"]),
        ("Does my card have purchase protection benefits?", ["read_credit_card_document"]),
        ("What goes into escrow on a mortgage?", ["read_mortgage_authority"]),
        ("What is a good credit score?", ["search_web"]),
        ("Hi", []),
        ("What's the weather in Paris?", []),
        ("What is TSLA trading at?", []),  # the bundled market data has no TSLA
    ],
)
def test_plan_calls_the_tools_the_question_needs(question: str, tools: list[str]) -> None:
    assert names(question) == tools


def test_pages_no_search_words_can_tell_apart_are_fetched_one_each() -> None:
    twins = [
        (
            LibraryDoc(None, f"https://x.example/{n}", f"Budget guide {n}"),
            "",
            "Make a budget and keep it.",
        )
        for n in (1, 2)
    ]
    books = Library(
        [*twins, (LibraryDoc(None, "https://x.example/3", "Other"), "", "Budget help.")]
    )
    hits = books.rank("How do I keep a budget guide?")
    assert [h.doc.path for h in hits][:2] == ["https://x.example/1", "https://x.example/2"]
    assert books.web_query("How do I keep a budget guide?", hits[:1]) is None
    (call,) = plan(understand("How do I keep a budget guide?"), hits[:1], books)
    assert call.name == "execute_python"
    assert "exa.search_and_contents(title, num_results=1)" in call.input["code"]
    assert '"Budget guide 1"' in call.input["code"]


def _shelf(*texts: str) -> Library:
    return Library(
        [
            (LibraryDoc(None, f"https://x.example/{n}", f"Page {n}"), "", t)
            for n, t in enumerate(texts)
        ]
    )


SHELF = (
    "Claiming early: the monthly benefit is permanently reduced if you claim before full age.",
    "Taxes on wages are withheld by your employer from each paycheck.",
    "Capital gains taxes apply when you sell an investment for more than you paid.",
    "Property taxes and homeowners insurance are paid from the escrow account each year.",
    "An annual fee is charged on the card every year, whatever you spend.",
    "A grace period lets you pay the statement balance without interest.",
    "Keep receipts for charitable gifts of $250 or more.",
)


def test_a_passage_sharing_one_generic_word_with_a_question_is_not_cited() -> None:
    # The first page shares only "reduced" with the question and says nothing of taxes, which
    # the other pages show to be a common word: a rarer word alone made it look relevant.
    assert _shelf(*SHELF).rank("How can I reduce my taxes?") == []


def test_a_passage_holding_several_of_the_questions_words_still_answers() -> None:
    hits = _shelf(*SHELF).rank("Is my benefit reduced when I claim early?")
    assert [h.doc.path for h in hits][:1] == ["https://x.example/0"]


def test_account_queries_select_the_ids_the_citations_need() -> None:
    query = account_query(understand("What do I owe on my credit cards?"))
    assert "source, source_account_id" in query and "account_type = 'credit'" in query
    assert "named" not in query  # no name to look for: every card


def test_a_named_account_is_looked_for_in_the_users_own_names() -> None:
    query = account_query(understand("What is my Chase checking balance?"))
    assert "LIKE '% chase %'" in query and "account_subtype = 'checking'" in query
    sapphire = account_query(understand("What is my Sapphire Preferred balance?"))
    assert "LIKE '% sapphire %'" in sapphire and "LIKE '% preferred %'" in sapphire
    assert "WHERE named = best\n" in sapphire  # when nothing matches, every account
    at = account_query(understand("What do I have at Vanguard?"))
    assert "named = best AND best > 0" in at  # an institution named: none is none


def test_the_library_reads_the_relevant_documents_only() -> None:
    ranked = library().rank("What does Regulation Z require lenders to disclose on a mortgage?")
    assert ranked[0].doc.path == "regulation-z/1026.19.md"
    assert "guides/escrow-basics.md" not in [hit.doc.path for hit in ranked]
    (fund,) = library().rank("How big should my emergency fund be?")
    assert fund.doc.tool is None and "emergency-fund" in fund.doc.path
    assert library().rank("What's the weather in Paris?") == []


# --- the engine's protocol ---------------------------------------------------------------------


def run(messages: list[dict[str, Any]]) -> dict[str, Any]:
    acc = MessageAccumulator()
    for event in OfflineModel().stream(ModelRequest("", messages, [])):
        acc.feed(event)
    assert acc.done
    return acc.final_message()


def test_first_round_calls_tools() -> None:
    message = run([{"role": "user", "content": "What is a good credit score?"}])
    assert message["stop_reason"] == "tool_use"
    (call,) = message["content"]
    assert call["name"] == "search_web" and call["input"] == {"query": "score"}


@pytest.mark.parametrize(
    "question",
    [
        "How big should my emergency fund be?",
        "What's the 2025 Roth IRA contribution limit?",
        "What is an index fund?",
        "Can I deduct charitable donations?",
        "Are I bonds taxable?",
    ],
)
def test_the_web_search_brings_back_the_relevant_pages_and_no_others(question: str) -> None:
    pages = [hit for hit in library().rank(question) if hit.doc.tool is None]
    query = library().web_query(question, pages)
    assert pages and query is not None
    found = search_web(query, provider=LocalWebIndex.from_directory())
    assert sorted(r.url for r in found) == sorted(hit.doc.path for hit in pages)


@pytest.mark.parametrize("question", ["Hello!", "Who won the Super Bowl?"])
def test_small_talk_and_the_out_of_scope_are_answered_at_once_without_sources(
    question: str,
) -> None:
    message = run([{"role": "user", "content": question}])
    assert message["stop_reason"] == "end_turn"
    (block,) = message["content"]
    assert block["type"] == "text" and "citations" not in block
    assert "accounts" in block["text"]


def row_result(index: int, source: str, *rows: dict[str, object]) -> Result:
    texts = [
        "\n".join(f"{k}: {'null' if v is None else v}" for k, v in row.items()) for row in rows
    ]
    return Result(
        "execute_sql",
        index,
        {
            "type": "search_result",
            "source": source,
            "title": source.rsplit("/", 1)[-1],
            "content": [{"type": "text", "text": t} for t in texts],
        },
    )


def card(name: str, place: str, owed: float, limit: float | None = None) -> dict[str, object]:
    return {
        "account_name": name,
        "institution_name": place,
        "account_type": "credit",
        "account_subtype": "credit card",
        "current_balance": owed,
        "currency": "USD",
        "credit_limit": limit,
    }


def test_answer_cites_search_results_by_their_request_index() -> None:
    earlier = {
        "type": "search_result",
        "source": "https://a.example/",
        "title": "Earlier",
        "content": [{"type": "text", "text": "Old."}],
        "citations": {"enabled": True},
    }
    rows = row_result(
        1,
        "silvia://your-account/checking",
        {
            "account_name": "Checking",
            "institution_name": "Chase",
            "account_type": "depository",
            "account_subtype": "checking",
            "current_balance": 12.5,
            "currency": "USD",
        },
    )
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [earlier, {"type": "text", "text": "context"}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "What is my checking balance?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t", "name": "execute_sql", "input": {"query": "x"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "content": [rows.block]}],
        },
    ]
    message = run(messages)
    assert message["stop_reason"] == "end_turn"
    (block,) = message["content"]
    assert block["text"] == "Your Chase checking account has a balance of $12.50."
    (citation,) = block["citations"]
    assert citation["search_result_index"] == 1  # the earlier block is index 0
    assert citation["source"] == "silvia://your-account/checking"
    assert (citation["start_block_index"], citation["end_block_index"]) == (0, 1)


def test_a_tool_error_is_reported_plainly() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "What is my checking balance?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "t",
                    "name": "execute_sql",
                    "input": {"query": "SELECT 1"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "is_error": True,
                    "content": [{"type": "text", "text": "no such view"}],
                }
            ],
        },
    ]
    (block,) = run(messages)["content"]
    assert block["text"] == "I couldn't get that information: no such view"
    assert json.dumps(block).count("citations") == 0


# --- figures -----------------------------------------------------------------------------------


def test_debts_total_then_each_card_citing_its_row() -> None:
    cards = row_result(
        0,
        "silvia://your-account/credit-card",
        card("Credit card", "Amex", 100.5),
        card("Credit card", "Citi", 20),
    )
    blocks = debts(understand("What do I owe?"), rows_of([cards]))
    assert blocks[0][0] == "In total you owe $120.50 across two credit cards.\n"
    assert [c["start_block_index"] for c in blocks[0][1]] == [0, 1]
    # One line per cited label: "Credit card" is both cards, each figure citing its own row.
    assert blocks[1][0] == "- Credit card: $100.50 at Amex and $20.00 at Citi\n"
    assert [(c["start_block_index"], c["end_block_index"]) for c in blocks[1][1]] == [
        (0, 1),
        (1, 2),
    ]


def test_net_worth_says_what_it_counts_and_never_prints_null() -> None:
    home = row_result(
        0,
        "silvia://your-account/home",
        {
            "account_name": "Home",
            "institution_name": None,
            "account_type": "property",
            "account_subtype": "home",
            "current_balance": 300000,
            "currency": "USD",
        },
    )
    unknown = row_result(
        1,
        "silvia://your-account/old",
        {
            "account_name": "Old",
            "institution_name": "Bank",
            "account_type": "depository",
            "account_subtype": "checking",
            "current_balance": None,
            "currency": "USD",
        },
    )
    cards = row_result(2, "silvia://your-account/credit-card", card("Credit card", "Citi", 1000))
    text = "".join(
        t
        for t, _ in net_worth(understand("What is my net worth?"), rows_of([home, unknown, cards]))
    )
    assert text.startswith(
        "Your net worth is $299,000.00: $300,000.00 in assets minus $1,000.00 in debts."
    )
    assert "- Property: $300,000.00 (Home)" in text
    assert "Not counted, with no balance on record: Old at Bank." in text
    assert "null" not in text and "None" not in text


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        (
            "What do I have at Vanguard?",
            "You have no accounts at Vanguard among your linked accounts.",
        ),
        ("What's my mortgage balance?", "You have no mortgage among your linked accounts."),
        (
            "What are my balances?",
            "You have no accounts linked yet, so there are no balances to show.",
        ),
    ],
)
def test_no_rows_is_said_plainly(question: str, answer: str) -> None:
    assert balances(understand(question), []) == [(answer, [])]


def test_an_amount_in_the_question_is_set_against_the_figure() -> None:
    savings = row_result(
        0,
        "silvia://your-account/savings",
        {
            "account_name": "Savings",
            "institution_name": "Chase",
            "account_type": "depository",
            "account_subtype": "savings",
            "current_balance": 18250,
            "currency": "USD",
        },
    )
    (lead, versus) = balances(understand("Do I have $20,000 in savings?"), rows_of([savings]))
    assert lead[0] == "Your Chase savings account has a balance of $18,250.00."
    assert versus[0] == "That is $1,750.00 short of the $20,000.00 you asked about."
    assert versus[1] == lead[1]  # the comparison cites the same row


def test_utilization_divides_what_is_owed_by_the_limits() -> None:
    cards = [
        row_result(i, f"silvia://your-account/{name.lower()}", card(name, place, owed, cap))
        for i, (name, place, owed, cap) in enumerate(
            [("A", "X", 250, 1000), ("B", "Y", 250, 4000), ("C", "Z", 80, None)]
        )
    ]
    text = "".join(t for t, _ in utilization(understand("What's my utilization?"), rows_of(cards)))
    assert "Your credit utilization is 10.0%: you owe $500.00 against $5,000.00" in text
    assert "- A at X: $250.00 of $1,000.00 (25.0%)" in text
    assert "- C at Z: $80.00 owed, no credit limit on record" in text


def market(*texts: str) -> Result:
    return Result(
        "execute_python",
        3,
        {
            "source": "silvia://market-data/finnhub/AAPL",
            "title": "AAPL market data",
            "content": [{"type": "text", "text": t} for t in texts],
        },
    )


QUOTE = (
    "AAPL last traded at 192.78, +0.09 (+0.05%) on the day, open 192.64, high 194.04, "
    "low 191.80, previous close 192.69 as of 2025-06-27."
)


def test_a_quote_says_when_it_is_from_and_whether_it_is_live() -> None:
    profile = "Apple Inc (AAPL) trades on NASDAQ; industry: Technology."
    old, cites = quote(market(QUOTE, profile), today=date(2025, 9, 1))
    assert old == (
        "Apple Inc (AAPL) last traded at $192.78, up $0.09 (+0.05%) on the day. "
        "That price is from June 27, 2025: a snapshot in my market data, not a live "
        "quote."
    )
    assert [(c["start_block_index"], c["end_block_index"]) for c in cites] == [(0, 1)]
    fresh, _ = quote(market(QUOTE), today=date(2025, 6, 28))
    assert fresh.endswith("on the day, as of June 27, 2025.") and "snapshot" not in fresh
    empty, none = quote(market("AAPL last traded at 0.00, open 0.00."))
    assert empty == "I have no market data for AAPL." and none == []


# --- documents ---------------------------------------------------------------------------------


def document(*texts: str, title: str = "Guide") -> Source:
    return Source(
        Result(
            "read_tax_authority",
            0,
            {
                "source": "https://x.gov/a",
                "title": title,
                "content": [{"type": "text", "text": t} for t in texts],
            },
        ),
        0,
    )


def test_lists_tables_and_lead_ins_become_sentences_and_notes_are_skipped() -> None:
    source = document(
        "# Guide",
        "*A note about this summary.*",
        "- **Limit.** The most is $7,000 a year.\n- $8,000 at 50 or older",
        "| Case | Keep for |\n|---|---|\n| Usual | 3 years |",
    )
    assert [u.text for u in units_of(source)] == [
        "Limit: The most is $7,000 a year.",
        "$8,000 at 50 or older.",
        "Usual: keep for 3 years.",
    ]


def test_the_answer_leads_with_the_figure_asked_for_and_cites_its_passage() -> None:
    source = document(
        "Saving is good for you and your family.",
        "Aim for a fund of three to six months of expenses.",
        title="Emergency funds",
    )
    blocks = document_answer("How big should my emergency fund be?", [source], library().rarity)
    text, (citation, *_) = blocks[0]
    assert text.startswith("Aim for a fund of three to six months of expenses.")
    assert (citation["start_block_index"], citation["end_block_index"]) == (1, 2)


def test_abbreviations_do_not_end_a_sentence() -> None:
    source = document("Series I bonds are U.S. Treasury bonds. Apple Inc. sells phones.")
    assert [u.text for u in units_of(source)] == [
        "Series I bonds are U.S. Treasury bonds.",
        "Apple Inc. sells phones.",
    ]


def test_a_sentence_opening_with_it_keeps_the_one_before() -> None:
    source = document("Send a written notice to the issuer. It must arrive within 60 days.")
    ((text, _),) = document_answer("When must the notice arrive?", [source], library().rarity)
    assert text == "Send a written notice to the issuer. It must arrive within 60 days."
