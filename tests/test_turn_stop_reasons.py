"""Every stop reason and error, from the strict fake Claude on loopback to the stored answer.

https://docs.claude.com/en/api/handling-stop-reasons; README.md, "The model in
production" (every stop reason; a model unavailable).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.support.apps import api_client, idle_after, make_app
from tests.support.fake_claude import (
    Dropped,
    FakeClaude,
    HttpError,
    cut_mid_tool_input,
    message_end,
    stopped,
    text_reply,
    thinking_block,
    tool_reply,
    with_blocks_first,
)
from tests.support.turns import CannedTools, MemorySink
from webapp.llm.base import OPERATOR_TOLD, OUR_FAULT
from webapp.llm.claude import ClaudeModel
from webapp.turn.runner import (
    CONTINUE,
    CUT_SHORT,
    MAX_CONTINUATIONS,
    REFUSAL,
    TOO_LONG,
    TurnResult,
    run_turn,
    start_checkpoint,
)

QUERY = "SELECT source, source_account_id, account_name FROM account_details"
TOOLS = CannedTools(
    {QUERY: [{"source": "plaid", "source_account_id": "A" * 20, "account_name": "Checking"}]}
)
HISTORY = [
    {"role": "user", "content": "Earlier question"},
    {"role": "assistant", "content": "Earlier answer"},
]


def turn(
    fake: FakeClaude, history: list[dict[str, Any]] | None = None, max_tokens: int = 1000
) -> tuple[TurnResult, MemorySink]:
    sink = MemorySink()
    engine = ClaudeModel("sk-test", base_url=fake.url, sleep=lambda _: None)
    checkpoint = start_checkpoint(history or [], "What is my balance?")
    return run_turn(engine, TOOLS, sink, checkpoint, max_tokens), sink


def test_a_reply_cut_at_max_tokens_is_continued_in_the_same_answer() -> None:
    first = stopped(text_reply(("Your checking account holds", [])), "max_tokens")
    with FakeClaude([first, text_reply((" $1,200 today.", []))]) as fake:
        result, sink = turn(fake)
    assert result.status == "complete" and result.stop_reason is None
    assert result.content == "Your checking account holds $1,200 today."
    assert sink.streamed_text() == result.content
    again = fake.requests[1]["messages"]
    # No prefill (current models refuse it): what was written, then the user's "go on".
    assert again[-2] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Your checking account holds"}],
    }
    assert again[-1]["role"] == "user" and again[-1]["content"][0]["text"] == CONTINUE


def test_an_answer_still_cut_after_its_continuations_says_it_was_cut_short() -> None:
    cut = [stopped(text_reply((f"part {i} ", [])), "max_tokens") for i in range(4)]
    with FakeClaude(cut) as fake:
        result, sink = turn(fake)
    assert len(fake.requests) == MAX_CONTINUATIONS + 1
    assert result.status == "complete" and result.stop_reason == "max_tokens"
    assert result.content.endswith(CUT_SHORT) and "part 0 part 1 part 2" in result.content
    assert sink.streamed_text().endswith(CUT_SHORT)


def test_a_tool_call_cut_mid_input_is_asked_again_with_room() -> None:
    replies = [
        cut_mid_tool_input("Let me look.", "execute_sql", {"query": QUERY}),
        tool_reply(("tu_1", "execute_sql", {"query": QUERY})),
        text_reply((" Checking holds $1,200.", [])),
    ]
    with FakeClaude(replies) as fake:
        result, _ = turn(fake, max_tokens=1000)
    assert result.status == "complete", result.error
    assert [r["max_tokens"] for r in fake.requests] == [1000, 2000, 2000]
    assert result.content.startswith("Let me look.")  # what had streamed is kept
    assert TOOLS.calls[-1] == ("execute_sql", {"query": QUERY})
    # The cut call never went back to the API: only the text before it did.
    assert fake.requests[1]["messages"][-2]["content"] == [{"type": "text", "text": "Let me look."}]


def test_a_paused_server_tool_turn_is_sent_back_whole_to_continue() -> None:
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    paused = [
        text_reply(("Searching.", []))[0],
        {"type": "content_block_start", "index": 0, "content_block": call},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "rates"}'},
        },
        {"type": "content_block_stop", "index": 0},
        *message_end("pause_turn"),
    ]
    with FakeClaude([paused, text_reply(("Rates are 4%.", []))]) as fake:
        result, _ = turn(fake)
    assert result.status == "complete" and result.content == "Rates are 4%."
    last = fake.requests[1]["messages"][-1]
    assert last["role"] == "assistant"
    assert [_uncached(b) for b in last["content"]] == [{**call, "input": {"query": "rates"}}]


def _uncached(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def test_a_refusal_stores_the_apps_own_words_and_withdraws_the_partial_text() -> None:
    refused = stopped(
        text_reply(("Here is how to", [])),
        "refusal",
        stop_details={"type": "refusal", "category": None, "explanation": None},
    )
    with FakeClaude([refused]) as fake:
        result, sink = turn(fake)
    assert (result.status, result.content, result.stop_reason) == ("complete", REFUSAL, "refusal")
    assert result.citations == [] and "Here is how to" not in result.content
    names = [event for event, _ in sink.events]
    reset = names.index("reset")
    assert sink.events[reset][1] == {"after": 0}  # readers drop all they were sent
    after = [d["obj"] for e, d in sink.events[reset:] if e == "packet"]
    assert "".join(o.get("content", "") for o in after if o["type"] == "message_delta") == REFUSAL


def test_thinking_blocks_go_back_intact_with_the_tool_results() -> None:
    thought = with_blocks_first(
        thinking_block(0, "Which table holds balances?", "sig-xyz"),
        tool_reply(("tu_1", "execute_sql", {"query": QUERY})),
    )
    with FakeClaude([thought, text_reply(("Checking holds $1,200.", []))]) as fake:
        result, _ = turn(fake)
    assert result.status == "complete"
    sent = fake.requests[1]["messages"][-2]["content"]
    assert sent[0] == {
        "type": "thinking",
        "thinking": "Which table holds balances?",
        "signature": "sig-xyz",
    }
    assert sent[1]["type"] == "tool_use"


def test_a_full_context_window_leaves_older_history_out_and_carries_on() -> None:
    full = stopped(text_reply(("Your balance is", [])), "model_context_window_exceeded")
    with FakeClaude([full, text_reply((" $1,200.", []))]) as fake:
        result, _ = turn(fake, history=HISTORY)
    assert result.status == "complete" and result.content == "Your balance is $1,200."
    assert fake.requests[0]["messages"][0]["content"] == "Earlier question"
    texts = [str(m["content"]) for m in fake.requests[1]["messages"]]
    assert not any("Earlier" in t for t in texts)


def test_a_prompt_too_long_is_asked_again_without_older_history() -> None:
    too_long = HttpError(
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 1 > 0"},
        },
    )
    with FakeClaude([too_long, text_reply(("$1,200.", []))]) as fake:
        result, _ = turn(fake, history=HISTORY)
    assert result.status == "complete" and len(fake.requests[1]["messages"]) == 1
    with FakeClaude([too_long, too_long]) as fake:
        result, _ = turn(fake, history=HISTORY)
    assert result.error == TOO_LONG


def test_a_connection_dropped_mid_answer_continues_from_what_was_received() -> None:
    half = text_reply(("Your checking account holds", []))
    dropped = Dropped(half[: len(half) - 3])  # the block never stopped; no message_stop
    with FakeClaude([dropped, text_reply((" $1,200.", []))]) as fake:
        result, _ = turn(fake)
    assert result.status == "complete"
    assert result.content == "Your checking account holds $1,200."


def test_an_overload_after_content_continues_the_answer() -> None:
    partial = text_reply(("Your balance", []))[:4]
    partial.append({"type": "error", "error": {"type": "overloaded_error", "message": "x"}})
    with FakeClaude([partial, text_reply((" is $1,200.", []))]) as fake:
        result, _ = turn(fake)
    assert result.status == "complete" and result.content == "Your balance is $1,200."


@pytest.mark.parametrize(
    ("status", "kind", "setting"),
    [
        (401, "authentication_error", "ANTHROPIC_API_KEY"),
        (402, "billing_error", "ANTHROPIC_API_KEY"),
        (403, "permission_error", "ANTHROPIC_API_KEY"),
        (404, "not_found_error", "ANTHROPIC_MODEL"),
    ],
)
def test_an_operators_error_says_unavailable_and_names_the_setting_once(
    status: int, kind: str, setting: str, caplog: pytest.LogCaptureFixture
) -> None:
    failed = HttpError(status, {"type": "error", "error": {"type": kind, "message": "no"}})
    caplog.set_level(logging.ERROR, "webapp.llm.claude")
    with FakeClaude([failed, failed]) as fake:
        engine = ClaudeModel("sk-test", base_url=fake.url, model=f"model-{status}")
        results = [
            run_turn(engine, TOOLS, MemorySink(), start_checkpoint([], "q")) for _ in range(2)
        ]
    assert [r.error for r in results] == [OPERATOR_TOLD, OPERATOR_TOLD]
    assert "rephras" not in OPERATOR_TOLD.lower() and "other words" not in OPERATOR_TOLD
    told = [r.getMessage() for r in caplog.records if setting in r.getMessage()]
    assert len(told) == 1 and "req_fake0001" in told[0]  # once per cause, with the request id


def test_a_request_the_api_refuses_is_our_fault_and_logged_to_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = HttpError(
        400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    )
    caplog.set_level(logging.ERROR, "webapp.llm.claude")
    with FakeClaude([bad]) as fake:
        result, _ = turn(fake)
    assert result.error == OUR_FAULT
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "invalid_request_error" in logged and "user[text]" in logged and "req_fake" in logged
    assert "What is my balance" not in logged  # the shape of the request, never its words


@pytest.mark.parametrize(
    ("status", "said", "tries"),
    [(501, None, 2), (500, "false", 1), (400, "true", 2), (529, None, 2)],
    ids=["any-5xx-retried", "told-not-to", "told-to", "overloaded"],
)
def test_retries_cover_every_5xx_and_obey_x_should_retry(
    status: int, said: str | None, tries: int
) -> None:
    headers = {"x-should-retry": said} if said else {}
    failed = HttpError(status, {"type": "error", "error": {"type": "api_error", "m": ""}}, headers)
    with FakeClaude([failed, text_reply(("ok", []))]) as fake:
        result, _ = turn(fake)
    assert len(fake.requests) == tries
    assert (result.status == "complete") == (tries == 2)


def test_nothing_is_retried_once_the_turn_is_over() -> None:
    failed = HttpError(529, {"type": "error", "error": {"type": "overloaded_error"}})
    with FakeClaude([failed, text_reply(("late", []))]) as fake:
        engine = ClaudeModel("sk-test", base_url=fake.url, backoff=30.0)

        def sleep_then_stop(seconds: float) -> None:
            engine.close()  # the turn is cancelled while the engine waits to retry

        engine._sleep = sleep_then_stop
        result = run_turn(engine, TOOLS, MemorySink(), start_checkpoint([], "q"))
    assert len(fake.requests) == 1 and result.status == "error"


def test_a_refused_exchange_stays_out_of_the_next_turns_history(tmp_path: Path) -> None:
    refused = stopped(
        text_reply(("Partial words", [])),
        "refusal",
        stop_details={"type": "refusal", "category": "cyber", "explanation": "declined"},
    )
    with FakeClaude(
        [text_reply(("First answer.", [])), refused, text_reply(("Third.", []))]
    ) as fake:
        app = make_app(tmp_path, ANTHROPIC_API_KEY="sk-test", ANTHROPIC_BASE_URL=fake.url)
        demo = api_client(app)
        with idle_after(app):
            session = demo.new_session()
            for question in ("First question", "Refused question", "Third question"):
                demo.ask(session, question)
                messages = demo.wait_done(session)["messages"]
    stored = messages[3]
    assert (stored["content"], stored["status"], stored["stop_reason"]) == (
        REFUSAL,
        "complete",
        "refusal",
    )
    sent = [m["content"] for m in fake.requests[2]["messages"]]
    assert sent[:2] == ["First question", "First answer."]
    assert not any("Refused question" in str(c) or "Partial words" in str(c) for c in sent)
