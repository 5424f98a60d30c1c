"""The offline engine routes questions to the right tools and cites what they return."""

from __future__ import annotations

import json
from typing import Any

import pytest

from webapp.engines import MessageAccumulator, ModelRequest, OfflineEngine
from webapp.engines._offline_plan import best_entries, plan, stems, tickers_in
from webapp.engines._offline_write import Result, write_answer


@pytest.mark.parametrize(
    ("question", "tools"),
    [
        ("What do I owe on my credit cards?", ["execute_sql"]),
        ("What is my checking balance?", ["execute_sql"]),
        ("What are my holdings?", ["execute_sql"]),
        ("What is my portfolio worth?", ["execute_sql"]),
        ("How is Apple stock doing?", ["execute_python"]),
        ("How are my Apple shares doing?", ["execute_sql", "execute_python"]),
        ("Price of $NVDA?", ["execute_python"]),
        ("Can I deduct charitable gifts on my taxes?", ["read_tax_authority"]),
        ("Does my card have purchase protection benefits?", ["read_credit_card_document"]),
        ("What goes into escrow on a mortgage?", ["read_mortgage_authority"]),
        ("What is a good credit score?", ["search_web"]),
    ],
)
def test_plan_routes_questions(question: str, tools: list[str]) -> None:
    assert [call.name for call in plan(question)] == tools


def test_account_queries_select_the_ids_the_citations_need() -> None:
    (call,) = plan("What do I owe on my credit cards?")
    query = call.input["query"]
    assert "source, source_account_id" in query and "account_type = 'credit'" in query


@pytest.mark.parametrize(
    ("question", "tickers"),
    [("AAPL vs MSFT", ["AAPL", "MSFT"]), ("apple and Google", ["AAPL", "GOOGL"]),
     ("I OWE TAX", []), ("$SPY", ["SPY"])],
)
def test_tickers_in(question: str, tickers: list[str]) -> None:
    assert tickers_in(question) == tickers


def run(messages: list[dict[str, Any]]) -> dict[str, Any]:
    acc = MessageAccumulator()
    for event in OfflineEngine().stream(ModelRequest("", messages, [])):
        acc.feed(event)
    assert acc.done
    return acc.final_message()


def test_first_round_calls_tools() -> None:
    message = run([{"role": "user", "content": "What is a good credit score?"}])
    assert message["stop_reason"] == "tool_use"
    (call,) = message["content"]
    assert call["name"] == "search_web" and call["input"] == {"query": "What is a good credit score?"}


def test_answer_cites_search_results_by_their_request_index() -> None:
    result = {"type": "search_result", "source": "https://b.example/", "title": "Credit scores",
              "content": [{"type": "text", "text": "Intro."},
                          {"type": "text", "text": "A good credit score is above 700."}],
              "citations": {"enabled": True}}
    earlier = dict(result, source="https://a.example/")
    messages = [
        {"role": "user", "content": [earlier, {"type": "text", "text": "context"}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "What is a good credit score?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "search_web",
                                           "input": {"query": "x"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                      "content": [result]}]},
    ]
    message = run(messages)
    assert message["stop_reason"] == "end_turn"
    (block,) = message["content"]
    (citation,) = block["citations"]
    assert citation["search_result_index"] == 1  # the earlier block is index 0
    assert citation["source"] == "https://b.example/"
    assert citation["cited_text"] == "A good credit score is above 700."
    assert (citation["start_block_index"], citation["end_block_index"]) == (1, 2)
    assert "above 700" in block["text"]


def test_a_tool_error_is_reported_plainly() -> None:
    messages = [
        {"role": "user", "content": "What is my checking balance?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "execute_sql",
                                           "input": {"query": "SELECT 1"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": True,
                                      "content": [{"type": "text", "text": "no such view"}]}]},
    ]
    (block,) = run(messages)["content"]
    assert block["text"] == "I couldn't get that information: no such view"
    assert json.dumps(block).count("citations") == 0


def test_best_entries_keeps_a_runner_up_only_when_it_matches() -> None:
    entries = [("a.md", "Roth IRAs"), ("b.md", "Contributions to IRAs"), ("c.md", "Escrow")]
    assert best_entries("How much can I put in a Roth IRA?", entries) == ["a.md", "b.md"]
    assert best_entries("Escrow?", entries) == ["c.md"]
    assert best_entries("nothing matches", entries) == ["a.md"]


def document(source: str, title: str, *texts: str) -> Result:
    return Result("read_tax_authority", 0, {"source": source, "title": title,
                                            "content": [{"type": "text", "text": t}
                                                        for t in texts]})


def test_lists_are_quoted_whole_and_notes_are_not_quoted() -> None:
    doc = document("https://x.gov/a", "Guide", "*A note about this summary.*",
                   "Limits:\n- $7,000 a year\n- $8,000 at 50 or older")
    ((text, (citation,)),) = write_answer("What are the limits?", [doc], stems)
    assert text == "According to Guide:\n\nLimits:\n- $7,000 a year\n- $8,000 at 50 or older"
    assert (citation["start_block_index"], citation["end_block_index"]) == (1, 2)


def test_a_weak_runner_up_document_is_not_cited() -> None:
    strong = document("https://x.gov/a", "Rental car benefits", "Rental car collision cover.")
    weak = document("https://x.gov/b", "Disputes", "Call the issuer.")
    blocks = write_answer("What does the rental car benefit cover?", [weak, strong], stems)
    assert [c["source"] for _, cites in blocks for c in cites] == ["https://x.gov/a"]
