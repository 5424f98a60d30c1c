"""The tool runner: each tool through the real executors, bad calls as error outcomes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from flask import Flask

from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.support.turns import MemorySink
from webapp.llm.claude import ClaudeModel
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate
from webapp.tools.runner import LocalTools
from webapp.tools.web_index import WebResult
from webapp.turn.runner import run_turn, start_checkpoint


@dataclass
class Provider:
    """A search provider whose results may lack a URL, as a real provider's sometimes do."""

    results: list[WebResult]

    def search(self, query: str, *, limit: int = 5) -> list[WebResult]:
        return self.results[:limit]


def tools(app: Flask, web: Provider | None = None) -> LocalTools:
    user = authenticate(get_engine(app), "demo", "demo")
    assert user is not None
    return LocalTools(get_engine(app), user.id, web=web)


def test_search_results_without_a_url_are_cited_untyped(app: Flask) -> None:
    provider = Provider(
        [
            WebResult("", "A summary", "snippet", "Some text.", None),
            WebResult("https://www.irs.gov/x", "IRS", "s", "Tax text.", None),
        ]
    )
    search = "silvia://search/search_web"
    cite = {
        "type": "search_result_location",
        "source": search,
        "title": "A summary",
        "cited_text": "Some text.",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }
    sink = MemorySink()
    with FakeClaude(
        [tool_reply(("s", "search_web", {"query": "q"})), text_reply(("Per the summary.", [cite]))]
    ) as fake:
        result = run_turn(
            ClaudeModel("k", base_url=fake.url),
            tools(app, provider),
            sink,
            start_checkpoint([], "q"),
        )
    assert result.status == "complete"
    assert [(c["source"], c["target"]) for c in result.citations] == [(search, None)]
    docs = [
        p["obj"]["documents"]
        for p in sink.packets()
        if p["obj"]["type"] == "search_tool_documents_delta"
    ][0]
    assert [(d["document_id"], d["target"]) for d in docs] == [
        (search, None),
        ("https://www.irs.gov/x", {"kind": "web", "url": "https://www.irs.gov/x"}),
    ]


@pytest.mark.parametrize(
    ("name", "tool_input", "message"),
    [
        ("drop_tables", {}, "There is no tool named 'drop_tables'."),
        ("_read", {"path": ""}, "There is no tool named '_read'."),
        ("execute_sql", {"query": 7}, "The input needs a string field 'query'."),
        ("execute_sql", {"query": "DELETE FROM account_details"}, None),
        ("read_tax_authority", {"path": "../../etc/passwd"}, None),
        ("execute_python", {"code": "raise ValueError('boom')"}, "boom"),
    ],
    ids=["unknown", "private-helper", "mistyped", "write", "traversal", "python-error"],
)
def test_bad_calls_come_back_as_errors(
    app: Flask, name: str, tool_input: dict[str, object], message: str | None
) -> None:
    outcome = tools(app).run(name, tool_input)
    assert outcome.is_error and not outcome.citables
    text = " ".join(str(block.get("text", "")) for block in outcome.content)
    assert text and "Traceback" not in text
    if message is not None:
        assert message in text


def test_a_folder_listing_is_not_citable(app: Flask) -> None:
    outcome = tools(app).run("read_tax_authority", {"path": ""})
    assert not outcome.is_error and not outcome.citables
    assert outcome.content[0]["text"].startswith("Folder '/' of tax-authority:")
