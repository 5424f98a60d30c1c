"""The turn against a fake Claude API: rounds, citations, targets on every channel."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.claude_replies import cite_then_call
from tests.support.fake_claude import FakeClaude, HttpError, text_reply, tool_reply
from tests.support.turns import CannedTools, MemorySink
from webapp.llm.claude import ClaudeModel
from webapp.turn.emit import SinkClosed
from webapp.turn.runner import run_turn, start_checkpoint

AMEX = "AmexCardAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
CITI = "CitiCardBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
SAPPHIRE = "SapphireCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
Q1 = "SELECT source, source_account_id, account_name FROM account_details WHERE x = 1"
Q2 = "SELECT source, source_account_id, account_name FROM account_details WHERE x = 2"
CARD = "silvia://your-account/credit-card"
SAPPHIRE_SRC = "silvia://your-account/sapphire-preferred"


def card(name: str, account: str, balance: float, **extra: object) -> dict[str, object]:
    return {
        "source": "plaid",
        "source_account_id": account,
        "account_name": name,
        "current_balance": balance,
        **extra,
    }


def cite(source: str, title: str, index: int, text: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": text,
        "search_result_index": index,
        "start_block_index": 0,
        "end_block_index": 1,
    }


def claude(fake: FakeClaude) -> ClaudeModel:
    return ClaudeModel("sk-test", base_url=fake.url, sleep=lambda _: None)


TOOLS = CannedTools(
    {
        Q1: [card("Credit card", AMEX, 1200.0), card("Sapphire Preferred", SAPPHIRE, 80.0)],
        Q2: [card("Credit card", CITI, 300.0)],
    }
)


def multi_round_replies() -> list[Any]:
    return [
        tool_reply(("tu_1", "execute_sql", {"query": Q1}), preface="Let me check your cards."),
        tool_reply(("tu_2", "execute_sql", {"query": Q2})),
        text_reply(
            ("You owe $1,500 on the cards named Credit card.", [cite(CARD, "Credit card", 0, "x")]),
            (" Sapphire Preferred has $80.", [cite(SAPPHIRE_SRC, "Sapphire Preferred", 1, "y")]),
            (" Again, Credit card.", [cite(CARD, "Credit card", 2, "z")]),
        ),
    ]


def test_multi_round_tool_use_with_pooled_accounts() -> None:
    sink = MemorySink()
    with FakeClaude(multi_round_replies()) as fake:
        result = run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "What do I owe?"))
    assert result.status == "complete", result.error
    pooled = {
        "kind": "accounts",
        "accounts": [
            {"accountId": AMEX, "provider": "plaid"},
            {"accountId": CITI, "provider": "plaid"},
        ],
    }
    one = {"kind": "account", "accountId": SAPPHIRE, "provider": "plaid"}

    # The model saw search_result blocks with citations enabled in its tool results.
    second = fake.requests[1]["messages"][-1]["content"][0]
    assert second["type"] == "tool_result" and second["tool_use_id"] == "tu_1"
    blocks = second["content"]
    assert [b["source"] for b in blocks] == [CARD, SAPPHIRE_SRC]
    assert all(b["citations"] == {"enabled": True} for b in blocks)
    assert "plaid" not in str(blocks) and AMEX not in str(blocks)

    # Numbers in first-cite order, one per document however often it is cited.
    assert [c["number"] for c in result.citations] == [1, 2]
    assert [c["target"] for c in result.citations] == [pooled, one]
    assert [(c["number"], c["target"]) for c in result.inline_citations] == [
        (1, pooled),
        (2, one),
        (1, pooled),
    ]
    first = result.inline_citations[0]
    assert result.content[first["start"] : first["end"]] == first["text"]
    assert first["text"] == "You owe $1,500 on the cards named Credit card."

    # SSE events: citation (at the end, settled), citations_summary, and a raw message
    # without targets.
    assert [c["citation"]["number"] for c in sink.named("citation")] == [1, 2, 1]
    assert [c["citation"]["target"] for c in sink.named("citation")] == [pooled, one, pooled]
    assert sink.named("citations_summary")[0]["citations"][0]["target"] == pooled
    assert "target" not in str(sink.named("message")[0])

    # Packets: the Onyx wire shape, markers in the text, citation_info once per document.
    types = sink.packet_types()
    assert types.count("search_tool_start") == 2 and types[-1] == "stop"
    infos = [p["obj"] for p in sink.packets() if p["obj"]["type"] == "citation_info"]
    assert infos == [
        {"type": "citation_info", "citation_number": 1, "document_id": CARD},
        {"type": "citation_info", "citation_number": 2, "document_id": SAPPHIRE_SRC},
    ]
    text = sink.streamed_text()
    assert text.startswith("Let me check your cards.\n\nYou owe")
    assert "Credit card. [[1]]() Sapphire Preferred has $80. [[2]]() Again" in text
    assert sink.packets()[-1]["obj"] == {"type": "stop", "stop_reason": None}
    # The message started in turn 0 (text before the first tool call): it ends there too.
    message_turns = {
        p["placement"]["turn_index"]
        for p in sink.packets()
        if p["obj"]["type"]
        in ("message_start", "message_delta", "citation_info", "open_url_documents", "stop")
    }
    assert message_turns == {0}
    assert len(sink.checkpoints) == 2
    assert sink.checkpoints[-1]["citationTargets"][CARD] == pooled


def test_a_source_written_with_and_without_ids_is_poisoned() -> None:
    tools = CannedTools(
        {
            Q1: [card("Credit card", AMEX, 1.0)],
            Q2: [{"account_name": "Credit card", "current_balance": 2.0}],
        }
    )
    replies = [
        tool_reply(("a", "execute_sql", {"query": Q1})),
        tool_reply(("b", "execute_sql", {"query": Q2})),
        text_reply(("Cards.", [cite(CARD, "Credit card", 0, "x")])),
    ]
    sink = MemorySink()
    with FakeClaude(replies) as fake:
        result = run_turn(claude(fake), tools, sink, start_checkpoint([], "q"))
    assert result.citations[0]["target"] is None
    assert sink.named("citation")[0]["citation"]["target"] is None


def test_resume_from_checkpoint_keeps_targets() -> None:
    sink = MemorySink()
    with FakeClaude(multi_round_replies()[:1] + [HttpError(400, {})]) as fake:
        first = run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    assert first.status == "error"
    checkpoint = sink.checkpoints[-1]
    resumed = MemorySink()
    with FakeClaude(multi_round_replies()[1:]) as fake:
        result = run_turn(claude(fake), TOOLS, resumed, checkpoint)
    assert result.status == "complete"
    assert result.citations[0]["target"]["kind"] == "accounts"
    assert result.content.startswith("Let me check your cards.\n\nYou owe")


def test_resume_from_an_old_checkpoint_streams_untyped() -> None:
    sink = MemorySink()
    with FakeClaude(multi_round_replies()[:1] + [HttpError(400, {})]) as fake:
        run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    old = {k: v for k, v in sink.checkpoints[-1].items() if k != "citationTargets"}
    resumed = MemorySink()
    with FakeClaude(multi_round_replies()[1:]) as fake:
        result = run_turn(claude(fake), TOOLS, resumed, old)
    # Credit card was written again after the resume (Citi only); Sapphire only before it.
    by_source = {c["source"]: c["target"] for c in result.citations}
    assert by_source[SAPPHIRE_SRC] is None
    assert by_source[CARD] is None  # Written before the resume untyped: poisoned, not pooled.


@pytest.mark.parametrize(
    "reply",
    [
        HttpError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
        ),
        text_reply(("cut", []))[:-2],
    ],
    ids=["http-400", "stream-cut"],
)
def test_a_failed_turn_ends_with_error_and_stop(reply: Any) -> None:
    sink = MemorySink()
    with FakeClaude([reply]) as fake:
        result = run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    assert result.status == "error" and result.error
    assert result.content == "" and result.citations == []
    assert sink.packet_types()[-2:] == ["error", "stop"]
    assert sink.packets()[-2]["obj"]["error"] == result.error


def test_too_many_tool_rounds_is_an_error() -> None:
    replies = [tool_reply((f"t{i}", "execute_sql", {"query": Q1})) for i in range(9)]
    sink = MemorySink()
    with FakeClaude(replies) as fake:
        result = run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    # Plain words for people (the detail, "more than 8 tool rounds", goes to the log).
    assert result.status == "error" and "more lookups than one answer" in (result.error or "")


def test_a_closed_sink_stops_the_turn_without_writing_an_error() -> None:
    class ClosingSink(MemorySink):
        def emit(self, event: str, data: dict[str, Any]) -> None:
            if len(self.events) >= 3:
                raise SinkClosed
            super().emit(event, data)

    sink = ClosingSink()
    with FakeClaude(multi_round_replies()) as fake, pytest.raises(SinkClosed):
        run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    assert len(sink.events) == 3 and "error" not in sink.packet_types()


CITE_THEN_POOL = [
    tool_reply(("a", "execute_sql", {"query": Q1})),
    cite_then_call(
        "Amex's Credit card has $1,200.",
        [cite(CARD, "Credit card", 0, "x")],
        ("b", "execute_sql", {"query": Q2}),
    ),
]


def test_citation_events_wait_for_the_end_of_the_turn_and_say_its_settled_target() -> None:
    sink = MemorySink()
    with FakeClaude([*CITE_THEN_POOL, text_reply(("Done.", []))]) as fake:
        result = run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    assert result.status == "complete", result.error
    names = [event for event, _ in sink.events]
    # Cited before the second read pooled Citi's card in: announced only once settled.
    assert names[-5:] == ["packet", "citation", "citations_summary", "message", "packet"]
    (citation,) = [c["citation"] for c in sink.named("citation")]
    assert citation["target"]["kind"] == "accounts"
    assert citation == {
        k: v for k, v in result.inline_citations[0].items() if k not in ("start", "end", "text")
    }
    assert citation["target"] == result.citations[0]["target"]


def test_a_resumed_turn_announces_the_citations_made_before_its_checkpoint() -> None:
    sink = MemorySink()
    with FakeClaude([*CITE_THEN_POOL, HttpError(400, {})]) as fake:
        first = run_turn(claude(fake), TOOLS, sink, start_checkpoint([], "q"))
    assert first.status == "error"
    assert sink.named("citation") == []  # a turn that did not end announces no meaning
    resumed = MemorySink()
    with FakeClaude([text_reply(("And Citi's.", [cite(CARD, "Credit card", 0, "y")]))]) as fake:
        result = run_turn(claude(fake), TOOLS, resumed, sink.checkpoints[-1])
    assert result.status == "complete", result.error
    live = [
        (c["citation"]["cited_text"], c["citation"]["target"]) for c in resumed.named("citation")
    ]
    pooled = result.citations[0]["target"]
    assert pooled["kind"] == "accounts" and live == [("x", pooled), ("y", pooled)]
