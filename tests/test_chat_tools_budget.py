"""The tool runner's byte budget (TOOL_RESULT_MAX_BYTES) and the links its citables carry.

docs/architecture.md "Service-grade contracts": at most TOOL_RESULT_MAX_BYTES of text per call reaches
the model, cut with a note that says so, for every tool and on every backend.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask

from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.support.turns import MemorySink
from webapp import create_app
from webapp.citations.citable import ToolOutcome
from webapp.llm.claude import ClaudeModel
from webapp.packets.markers import CitationSegment, answer_segments
from webapp.packets.state import PacketStream
from webapp.services import chat_service
from webapp.settings import DEFAULT_TOOL_RESULT_MAX_BYTES, MIN_TOOL_RESULT_MAX_BYTES
from webapp.store.app_db import close_engine, get_engine
from webapp.store.users import authenticate
from webapp.tools import readers
from webapp.tools.runner import LocalTools, tool_result_max_bytes
from webapp.tools.web_index import WebResult
from webapp.turn.runner import run_turn, start_checkpoint

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

BUDGET = 8192
ISSUE_QUERY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 200) "
    "SELECT printf('%d', x) AS account_name, printf('%.*c', 999000, 'x') AS a FROM c"
)


@dataclass
class Provider:
    results: list[WebResult]

    def search(self, query: str, *, limit: int = 5) -> list[WebResult]:
        return self.results[:limit]


def text_bytes(outcome: ToolOutcome) -> int:
    """Return the bytes of text the model reads: each block's text, title and source."""
    total = 0
    for block in outcome.content:
        if block["type"] == "text":
            total += len(block["text"].encode())
        else:
            total += len(block["source"].encode()) + len(block["title"].encode())
            total += sum(len(part["text"].encode()) for part in block["content"])
    return total


def notes(outcome: ToolOutcome) -> str:
    return " ".join(block["text"] for block in outcome.content if block["type"] == "text")


def assert_consistent(outcome: ToolOutcome) -> None:
    """Every search_result the model reads is one of the outcome's citables, as written."""
    blocks = [block for block in outcome.content if block["type"] == "search_result"]
    assert blocks == [citable.search_result() for citable in outcome.citables]


def tools(app: Flask, **options: Any) -> LocalTools:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    return LocalTools(get_engine(app), user.id, **options)


def test_the_issue_query_reaches_the_model_cut_to_the_default_budget(app: Flask) -> None:
    outcome = tools(app).run("execute_sql", {"query": ISSUE_QUERY})
    assert not outcome.is_error
    assert text_bytes(outcome) <= DEFAULT_TOOL_RESULT_MAX_BYTES
    assert 1 <= len(outcome.citables) < 10
    assert "limit of 262,144 bytes" in notes(outcome)
    assert_consistent(outcome)


def test_sql_on_each_backend_keeps_to_the_budget(sql_backend: SqlBackend) -> None:
    # The same many-labels query, in each backend's dialect: one search result per row.
    if sql_backend.name == "sqlite":
        query = ISSUE_QUERY.replace("999000", "3000")
    else:
        query = (
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 200) "
            "SELECT x::text AS account_name, format('%s', x) || (SELECT string_agg('x', '') "
            "FROM c AS d) AS a FROM c"
        )
    runner = LocalTools(sql_backend.engine, sql_backend.users["demo"].id, max_bytes=BUDGET)
    outcome = runner.run("execute_sql", {"query": query})
    assert not outcome.is_error, notes(outcome)
    assert text_bytes(outcome) <= BUDGET
    assert 1 <= len(outcome.citables) < 200
    assert "bytes of text" in notes(outcome)
    assert_consistent(outcome)


def test_a_small_result_is_untouched(app: Flask) -> None:
    outcome = tools(app, max_bytes=BUDGET).run(
        "execute_sql", {"query": "SELECT account_name FROM account_details"}
    )
    assert not outcome.is_error and "cut" not in notes(outcome)
    assert_consistent(outcome)


def test_web_results_are_cut_and_left_out_past_the_budget(app: Flask) -> None:
    pages = [
        WebResult(f"https://example.com/{i}", f"Page {i}", "s", f"{i} " + "word " * 2000, None)
        for i in range(5)
    ]
    outcome = tools(app, web=Provider(pages), max_bytes=BUDGET).run("search_web", {"query": "q"})
    assert text_bytes(outcome) <= BUDGET
    assert 0 < len(outcome.citables) < 5
    assert f"{len(outcome.citables)} of its 5 search results are shown" in notes(outcome)
    assert_consistent(outcome)


def test_a_document_is_cut_to_the_budget(
    app: Flask, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "tax-authority"
    corpus.mkdir()
    (corpus / "long.md").write_text("# A long page\n\n" + "words " * 10_000)
    monkeypatch.setattr(readers, "CORPORA_ROOT", tmp_path)
    outcome = tools(app, max_bytes=MIN_TOOL_RESULT_MAX_BYTES).run(
        "read_tax_authority", {"path": "long.md"}
    )
    assert not outcome.is_error and len(outcome.citables) == 1
    assert outcome.citables[0].title == "A long page"
    assert text_bytes(outcome) <= MIN_TOOL_RESULT_MAX_BYTES
    assert "was cut" in notes(outcome)
    assert_consistent(outcome)


def test_python_output_is_cut_to_the_budget(app: Flask) -> None:
    outcome = tools(app, max_bytes=MIN_TOOL_RESULT_MAX_BYTES).run(
        "execute_python", {"code": "for i in range(5000):\n    print('line', i, 'x' * 50)"}
    )
    assert outcome.citables
    assert text_bytes(outcome) <= MIN_TOOL_RESULT_MAX_BYTES
    assert_consistent(outcome)


def test_an_error_is_kept_whatever_the_budget(app: Flask) -> None:
    outcome = tools(app, max_bytes=MIN_TOOL_RESULT_MAX_BYTES).run(
        "execute_sql", {"query": "SELECT * FROM plaid_items"}
    )
    assert outcome.is_error and "cannot be queried" in notes(outcome)


def test_the_model_reads_at_most_the_budget_and_the_checkpoint_stays_small(app: Flask) -> None:
    sink = MemorySink()
    with FakeClaude(
        [tool_reply(("q", "execute_sql", {"query": ISSUE_QUERY})), text_reply(("Done.", []))]
    ) as fake:
        result = run_turn(
            ClaudeModel("k", base_url=fake.url),
            tools(app, max_bytes=BUDGET),
            sink,
            start_checkpoint([], "q"),
        )
    assert result.status == "complete"
    sent = fake.requests[1]["messages"][-1]["content"][0]
    assert sent["type"] == "tool_result"
    assert text_bytes(ToolOutcome(sent["content"])) <= BUDGET
    assert "bytes of text" in json.dumps(sent)
    # The checkpoint holds the result twice (the messages and the citables) and little else.
    assert len(json.dumps(sink.checkpoints[-1])) < 4 * BUDGET
    assert len(json.dumps(sink.events)) < 4 * BUDGET


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, DEFAULT_TOOL_RESULT_MAX_BYTES),
        ("", DEFAULT_TOOL_RESULT_MAX_BYTES),
        ("65536", 65536),
        (" 8192 ", 8192),
        (100_000, 100_000),
    ],
    ids=["unset", "empty", "text", "spaces", "number"],
)
def test_the_setting_is_read(value: object, expected: int) -> None:
    assert tool_result_max_bytes(value) == expected


@pytest.mark.parametrize(
    "value",
    ["lots", "1e6", "100", 100, True, 1.5, "-5"],
    ids=["words", "exponent", "too-small", "too-small-number", "bool", "float", "negative"],
)
def test_a_bad_setting_is_refused(value: object) -> None:
    with pytest.raises(ValueError, match="TOOL_RESULT_MAX_BYTES"):
        tool_result_max_bytes(value)


def test_the_app_passes_its_setting_to_the_tools(app: Flask) -> None:
    configured = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "t",
            "DATABASE_URL": app.config["DATABASE_URL"],
            "ANTHROPIC_API_KEY": None,
            "TOOL_RESULT_MAX_BYTES": "5000",
        }
    )
    try:
        runner = chat_service(configured).tools(1)
        assert isinstance(runner, LocalTools) and runner.max_bytes == 5000
        assert tools(app).max_bytes == DEFAULT_TOOL_RESULT_MAX_BYTES
    finally:
        close_engine(configured)


# Links: a `[[n]](link)` marker carries its source's link whatever characters the URL has.


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/a<b>c",
        "https://example.com/a b",
        "https://example.com/x)(y",
        "https://example.com/q?x=\u202eevil",
        'https://example.com/"quoted"\\back',
    ],
    ids=["angle-brackets", "space", "unbalanced-parens", "bidi-control", "quote-backslash"],
)
def test_a_marker_survives_any_url(app: Flask, url: str) -> None:
    provider = Provider([WebResult(url, "A page", "s", "Some text.", None)])
    cite = {
        "type": "search_result_location",
        "source": url,
        "title": "A page",
        "cited_text": "Some text.",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    sink = MemorySink()
    with FakeClaude(
        [tool_reply(("s", "search_web", {"query": "q"})), text_reply(("Per the page.", [cite]))]
    ) as fake:
        result = run_turn(
            ClaudeModel("k", base_url=fake.url),
            tools(app, web=provider),
            sink,
            start_checkpoint([], "q"),
        )
    assert result.status == "complete"
    assert "[[1]](https://example.com/" in sink.streamed_text()
    # The source and its target keep the URL as the tool gave it.
    assert [c["source"] for c in result.citations] == [url]
    stream = PacketStream(0)
    for packet in sink.packets():
        stream.append(packet)
    segments = answer_segments(stream.state)
    cited = [s for s in segments if isinstance(s, CitationSegment)]
    assert [(s.number, s.document_id) for s in cited] == [(1, url)]
    # Nothing of the marker is left over as text (a `)` in the URL would end it early).
    assert "".join(getattr(s, "text", "") for s in segments).strip() == "Per the page."


def test_the_setting_is_read_from_the_environment(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOL_RESULT_MAX_BYTES", "6000")
    configured = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "t",
            "DATABASE_URL": app.config["DATABASE_URL"],
            "ANTHROPIC_API_KEY": None,
        }
    )
    try:
        runner = chat_service(configured).tools(1)
        assert isinstance(runner, LocalTools) and runner.max_bytes == 6000
    finally:
        close_engine(configured)
