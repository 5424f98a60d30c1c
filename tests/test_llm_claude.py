"""The Claude engine against a fake Claude API on loopback: parsing, retries, errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.fake_claude import (
    FakeClaude,
    HttpError,
    Paced,
    message_start,
    text_reply,
    tool_reply,
)
from webapp.llm.base import ModelError, ModelRequest
from webapp.llm.claude import ClaudeModel
from webapp.llm.stream import MessageAccumulator

REQUEST = ModelRequest(system="sys", messages=[{"role": "user", "content": "hi"}], tools=[])
CITE = {
    "type": "search_result_location",
    "source": "silvia://analysis",
    "title": "Analysis",
    "cited_text": "42",
    "search_result_index": 0,
    "start_block_index": 0,
    "end_block_index": 1,
}


def run(fake: FakeClaude, **kwargs: Any) -> tuple[dict[str, Any], list[float]]:
    slept: list[float] = []
    engine = ClaudeModel(
        "sk-test", base_url=fake.url, model="claude-test", sleep=slept.append, **kwargs
    )
    acc = MessageAccumulator()
    for event in engine.stream(REQUEST):
        acc.feed(event)
    return acc.final_message(), slept


@pytest.mark.parametrize("citations_first", [False, True], ids=["text-first", "citations-first"])
def test_text_with_citations_in_either_order(citations_first: bool) -> None:
    reply = text_reply(
        ("The answer is 42 — ünïcode ✓.", [CITE]), ("Plain.", []), citations_first=citations_first
    )
    with FakeClaude([reply]) as fake:
        message, _ = run(fake)
    assert message["content"] == [
        {"type": "text", "text": "The answer is 42 — ünïcode ✓.", "citations": [CITE]},
        {"type": "text", "text": "Plain."},
    ]
    assert message["stop_reason"] == "end_turn"
    sent = fake.requests[0]
    assert sent["stream"] is True and sent["model"] == "claude-test"
    assert sent["system"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}
    ]
    assert fake.headers[0]["x-api-key"] == "sk-test"
    assert fake.headers[0]["anthropic-version"] == "2026-10-21"


def test_tool_use_input_is_joined_and_parsed() -> None:
    reply = tool_reply(
        ("tu_1", "execute_sql", {"query": 'SELECT 1 -- "quoted"'}), preface="Let me look."
    )
    with FakeClaude([reply]) as fake:
        message, _ = run(fake)
    assert message["stop_reason"] == "tool_use"
    assert message["content"][1] == {
        "type": "tool_use",
        "id": "tu_1",
        "name": "execute_sql",
        "input": {"query": 'SELECT 1 -- "quoted"'},
    }


def test_unknown_events_are_ignored() -> None:
    reply = text_reply(("ok", []))
    reply.insert(1, {"type": "brand_new_event", "x": 1})
    with FakeClaude([reply]) as fake:
        message, _ = run(fake)
    assert message["content"] == [{"type": "text", "text": "ok"}]


def test_529_then_success_retries_with_backoff() -> None:
    overloaded = HttpError(
        529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    with FakeClaude([overloaded, overloaded, text_reply(("ok", []))]) as fake:
        message, slept = run(fake, backoff=0.5)
    assert message["content"][0]["text"] == "ok"
    # Exponential, with jitter of ±50 %: 0.5 s then 1 s, each scaled by 0.5 to 1.5.
    assert len(slept) == 2 and 0.25 <= slept[0] <= 0.75 and 0.5 <= slept[1] <= 1.5
    assert len(fake.requests) == 3


def test_429_honours_retry_after() -> None:
    limited = HttpError(
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        {"retry-after": "7"},
    )
    with FakeClaude([limited, text_reply(("ok", []))]) as fake:
        _, slept = run(fake)
    assert slept == [7.0]


def test_overloaded_error_event_before_content_is_retried() -> None:
    stream_error = [
        message_start(),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    with FakeClaude([stream_error, text_reply(("ok", []))]) as fake:
        message, slept = run(fake, backoff=0.1)
    assert message["content"][0]["text"] == "ok"
    assert len(slept) == 1 and 0.05 <= slept[0] <= 0.15


def test_error_event_after_content_is_a_clear_error() -> None:
    reply = text_reply(("partial", []))[:4]
    reply.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    with FakeClaude([reply]) as fake, pytest.raises(ModelError, match="overloaded_error"):
        run(fake)


def test_retries_give_up() -> None:
    overloaded = HttpError(
        529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    with FakeClaude([overloaded] * 3) as fake, pytest.raises(ModelError, match="unavailable"):
        run(fake, max_retries=2)
    assert len(fake.requests) == 3


def test_other_http_errors_are_not_retried() -> None:
    bad = HttpError(
        400,
        {"type": "error", "error": {"type": "invalid_request_error", "message": "messages: bad"}},
    )
    with FakeClaude([bad]) as fake, pytest.raises(ModelError, match="HTTP 400.*messages: bad"):
        run(fake)
    assert len(fake.requests) == 1


def test_stream_cut_before_message_stop_is_an_error() -> None:
    with (
        FakeClaude([text_reply(("cut", []))[:-2]]) as fake,
        pytest.raises(ModelError, match="before message_stop"),
    ):
        run(fake)


def test_unreachable_server_is_a_clear_error() -> None:
    engine = ClaudeModel("k", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(ModelError, match="could not be reached"):
        list(engine.stream(REQUEST))


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504])
def test_a_passing_server_error_then_success_is_retried(status: int) -> None:
    failed = HttpError(status, {"type": "error", "error": {"type": "api_error", "message": "x"}})
    with FakeClaude([failed, text_reply(("ok", []))]) as fake:
        message, slept = run(fake, backoff=0.1)
    assert message["content"][0]["text"] == "ok" and len(slept) == 1


def test_retry_after_ms_is_honoured_before_retry_after() -> None:
    limited = HttpError(
        429,
        {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        {"retry-after-ms": "250", "retry-after": "7"},
    )
    with FakeClaude([limited, text_reply(("ok", []))]) as fake:
        _, slept = run(fake)
    assert slept == [0.25]


def test_retries_stop_at_their_total_budget() -> None:
    limited = HttpError(
        503,
        {"type": "error", "error": {"type": "api_error", "message": "x"}},
        {"retry-after": "30"},
    )
    with FakeClaude([limited] * 5) as fake, pytest.raises(ModelError, match="unavailable"):
        run(fake, retry_budget=45.0)
    assert len(fake.requests) == 2  # a second wait of 30 s would pass the 45 s budget


def test_a_refused_connection_is_retried_then_reported() -> None:
    slept: list[float] = []
    engine = ClaudeModel("sk-test", base_url="http://127.0.0.1:9", sleep=slept.append, backoff=0.01)
    with pytest.raises(ModelError, match="could not be reached"):
        list(engine.stream(REQUEST))
    assert len(slept) == 4  # every retry was tried


def test_a_round_that_only_pings_ends_at_its_deadline() -> None:
    pings = Paced(
        [message_start()] + [{"type": "ping"}] * 50,
        0.05,
    )
    with FakeClaude([pings]) as fake, pytest.raises(ModelError, match="too long"):
        run(fake, round_seconds=0.5)


def test_closing_the_engine_mid_answer_ends_the_round_quietly() -> None:
    slow = Paced(text_reply(("A long answer. " * 50, [])), 0.02)
    with FakeClaude([slow]) as fake:
        engine = ClaudeModel("sk-test", base_url=fake.url, model="claude-test")
        events = engine.stream(REQUEST)
        next(events)
        engine.close()  # as a cancelled turn does, from another thread
        with pytest.raises(ModelError, match="stopped"):
            list(events)


def test_closing_the_model_after_a_whole_answer_raises_nothing() -> None:
    # As a turn does when it ends: the response was read to its end and has no file any more.
    with FakeClaude([text_reply(("Done.", []))]) as fake:
        model = ClaudeModel("sk-test", base_url=fake.url, model="claude-test")
        assert list(model.stream(REQUEST))
        model.close()
