"""The Claude engine checked against what the product did not write: the `anthropic` SDK.

The SDK's deprecated-models table and model list judge the default model; its request types
judge every request the engine builds; its own client, over HTTP to the fake, reads every
kind of stream the fake sends, and must see the message our accumulator sees.
"""

from __future__ import annotations

import datetime as dt
import typing
from typing import Any

import anthropic
import pytest
from anthropic._constants import ANTHROPIC_API_VERSION
from anthropic._data import DEPRECATED_MODELS
from anthropic.types import Model

from tests.support.claude_contract import is_retired, request_problems, retirement
from tests.support.fake_claude import (
    FakeClaude,
    HttpError,
    cut_mid_tool_input,
    message_end,
    message_start,
    stopped,
    text_reply,
    thinking_block,
    tool_reply,
    with_blocks_first,
)
from webapp.llm.base import ModelRequest
from webapp.llm.claude import API_VERSION, ClaudeModel
from webapp.llm.stream import MessageAccumulator
from webapp.settings import DEFAULT_MODEL
from webapp.turn.prompt import SYSTEM_PROMPT, TOOLS

HEADERS = {"x-api-key": "k", "anthropic-version": API_VERSION}
CITE = {
    "type": "search_result_location",
    "source": "silvia://analysis",
    "title": "Analysis",
    "cited_text": "42",
    "search_result_index": 0,
    "start_block_index": 0,
    "end_block_index": 1,
}
SEARCH_RESULT = {
    "type": "search_result",
    "source": "silvia://analysis",
    "title": "Analysis",
    "content": [{"type": "text", "text": "42"}],
    "citations": {"enabled": True},
}


def _known_models() -> set[str]:
    literal = next(a for a in typing.get_args(Model) if typing.get_origin(a) is typing.Literal)
    return set(typing.get_args(literal))


def test_the_default_model_is_current_by_the_sdk() -> None:
    assert DEFAULT_MODEL in _known_models()
    assert not is_retired(DEFAULT_MODEL), DEPRECATED_MODELS.get(DEFAULT_MODEL)
    # Not merely alive today: not on the deprecation list at all, so no warning date is near.
    assert DEFAULT_MODEL not in DEPRECATED_MODELS


def test_the_retirement_check_reads_the_sdk_table() -> None:
    # The model this service used to default to: retired on November 30th, 2026.
    assert retirement("claude-sonnet-4-5") == dt.date(2026, 11, 30)
    assert is_retired("claude-sonnet-4-5", today=dt.date(2026, 12, 1))
    assert not is_retired("claude-sonnet-4-5", today=dt.date(2026, 11, 30))


def test_the_fake_refuses_a_retired_model_as_the_api_does() -> None:
    with FakeClaude([text_reply(("ok", []))], expect_refusals=True) as fake:
        engine = ClaudeModel("k", base_url=fake.url, model="claude-sonnet-4-5", max_retries=0)
        with pytest.raises(Exception, match="404"):
            list(engine.stream(ModelRequest("s", [{"role": "user", "content": "hi"}], [])))
    assert fake.problems == ["model claude-sonnet-4-5 is retired"]


def _conversation() -> list[dict[str, Any]]:
    """A turn two rounds in: a question, a tool call with thinking, its search results."""
    return [
        {"role": "user", "content": "What do I owe?"},
        {"role": "assistant", "content": "Your cards owe $1,500."},
        {"role": "user", "content": "And the Sapphire?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "sig"},
                {"type": "text", "text": "Checking.", "citations": [CITE]},
                {"type": "tool_use", "id": "tu_1", "name": "execute_sql", "input": {"query": "q"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "tu_1", "content": [SEARCH_RESULT]},
            ],
        },
    ]


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "uncached"])
def test_every_request_the_engine_builds_fits_the_sdk_types(cache: bool) -> None:
    engine = ClaudeModel("k", prompt_cache=cache)
    body = engine.body(ModelRequest(SYSTEM_PROMPT, _conversation(), TOOLS, 16000))
    assert request_problems(body, HEADERS) == []


def test_the_request_checker_catches_what_the_api_refuses() -> None:
    engine = ClaudeModel("k")
    good = engine.body(ModelRequest("s", [{"role": "user", "content": "hi"}], TOOLS))
    assert request_problems(good, HEADERS) == []
    unknown = {**good, "temperature_x": 1}
    assert request_problems(unknown, HEADERS) == [
        "$.temperature_x: not a field of " + ("MessageCreateParamsStreaming")
    ]
    prefilled = {**good, "messages": [*good["messages"], {"role": "assistant", "content": "I"}]}
    assert "must end with a user message" in " ".join(request_problems(prefilled, HEADERS))
    bad_block = {**good, "messages": [{"role": "user", "content": [{"type": "text", "txt": "x"}]}]}
    assert request_problems(bad_block, HEADERS)
    assert request_problems(good, {"x-api-key": "k"}) == [
        "header anthropic-version: not one of ['2023-06-01', '2026-10-21']"
    ]


def test_the_engine_speaks_the_sdks_api_version() -> None:
    assert API_VERSION == ANTHROPIC_API_VERSION


def _server_tool_pause() -> list[dict[str, Any]]:
    call = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    result = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.com/a",
                "title": "A",
                "encrypted_content": "enc",
                "page_age": None,
            }
        ],
    }
    return [
        message_start(),
        {"type": "content_block_start", "index": 0, "content_block": call},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "rates"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": result},
        {"type": "content_block_stop", "index": 1},
        *message_end("pause_turn"),
    ]


SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "text-with-citations": text_reply(("The answer is 42.", [CITE]), ("Plain.", [])),
    "tool-use": tool_reply(("tu_1", "execute_sql", {"query": "SELECT 1"}), preface="Looking."),
    "thinking-then-tool": with_blocks_first(
        thinking_block(0, "Which table?"), tool_reply(("tu_1", "execute_sql", {"query": "q"}))
    ),
    "redacted-thinking": with_blocks_first(
        [
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "redacted_thinking", "data": "opaque-bytes"},
            },
            {"type": "content_block_stop", "index": 0},
        ],
        text_reply(("Done.", [])),
    ),
    "refusal": stopped(
        text_reply(("I was about to", [])),
        "refusal",
        stop_details={"type": "refusal", "category": None, "explanation": None},
    ),
    "max-tokens-mid-text": stopped(text_reply(("A long answer that", [])), "max_tokens"),
    "max-tokens-mid-tool-input": cut_mid_tool_input("Let me", "execute_sql", {"query": "SELECT"}),
    "pause-turn-server-tool": _server_tool_pause(),
    "context-window": stopped(text_reply(("Much", [])), "model_context_window_exceeded"),
}


def _ours(fake: FakeClaude) -> dict[str, Any]:
    engine = ClaudeModel("k", base_url=fake.url)
    acc = MessageAccumulator()
    for event in engine.stream(ModelRequest("s", [{"role": "user", "content": "hi"}], [])):
        acc.feed(event)
    return acc.final_message()


def _the_sdks(fake: FakeClaude) -> dict[str, Any]:
    client = anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0)
    with client.messages.stream(
        model=DEFAULT_MODEL, max_tokens=1000, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        message = stream.get_final_message()
    client.close()
    return message.model_dump(mode="json", exclude_none=True)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_sdk_reads_each_stream_as_the_engine_does(name: str) -> None:
    with FakeClaude([SCENARIOS[name], SCENARIOS[name]]) as fake:
        ours, theirs = _ours(fake), _the_sdks(fake)
    assert ours["stop_reason"] == theirs["stop_reason"]
    # Block by block, what the engine keeps is what the SDK's users get (a tool call cut
    # mid-input: the SDK keeps `{}`, as the engine does, marking it cut for the turn).
    assert [_plain(b) for b in ours["content"]] == [_plain(b) for b in theirs["content"]]


def _plain(block: dict[str, Any]) -> dict[str, Any]:
    # The SDK adds defaults the API leaves out (a text block's citations None, a result's
    # caller); compare what both have.
    keep = ("type", "text", "citations", "id", "name", "input", "thinking", "signature", "data")
    return {k: block[k] for k in keep if block.get(k) not in (None, [])}


def test_an_error_after_content_reads_back_as_the_sdk_raises_it() -> None:
    reply = text_reply(("partial", []))[:4]
    reply.append({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    with FakeClaude([reply]) as fake:
        client = anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0)
        with (
            pytest.raises(anthropic.APIStatusError, match="Overloaded"),
            client.messages.stream(
                model=DEFAULT_MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            ) as stream,
        ):
            stream.get_final_message()
        client.close()


def test_the_fake_answers_errors_with_the_apis_body_and_request_id() -> None:
    failed = HttpError(404, {"type": "error", "error": {"type": "not_found_error", "message": "m"}})
    with FakeClaude([failed]) as fake:
        client = anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0)
        with pytest.raises(anthropic.NotFoundError) as caught:
            client.messages.create(
                model=DEFAULT_MODEL, max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        client.close()
    assert caught.value.request_id and caught.value.request_id.startswith("req_")
