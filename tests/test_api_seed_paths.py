"""Seed 000's reader rows with no source URL, end to end: a silvia:// source, `url: null`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from tests.support.apps import api_client, idle_after
from tests.support.fake_claude import FakeClaude, text_reply, tool_reply

# tool, path in its corpus, the source it is cited under, its title, and the target kind.
ROWS = [
    (
        "read_tax_authority",
        "guides/recordkeeping.md",
        "silvia://tax-authority/guides/recordkeeping.md",
        "How long to keep tax records",
        "tax_reference",
    ),
    (
        "read_mortgage_authority",
        "guides/escrow-basics.md",
        "silvia://mortgage-code/guides/escrow-basics.md",
        "Mortgage escrow accounts: the basics",
        "mortgage_reference",
    ),
]


def cite(source: str, title: str) -> dict[str, Any]:
    return {
        "type": "search_result_location",
        "source": source,
        "title": title,
        "cited_text": "…",
        "search_result_index": 0,
        "start_block_index": 0,
        "end_block_index": 1,
    }


@pytest.mark.parametrize(
    ("tool", "path", "source", "title", "kind"), ROWS, ids=["tax-no-url", "mortgage-no-url"]
)
def test_a_reader_document_without_a_source_url_cites_its_silvia_path(
    claude_app: tuple[Flask, FakeClaude],
    tool: str,
    path: str,
    source: str,
    title: str,
    kind: str,
) -> None:
    app, fake = claude_app
    fake.replies += [
        tool_reply(("r", tool, {"path": path})),
        text_reply(("Here is what the guide says.", [cite(source, title)])),
    ]
    client = api_client(app)
    with idle_after(app):
        session_id = client.new_session()
        events = client.stream(client.ask(session_id, "What does the guide say?")["stream_url"])
    assert events[-1].event == "done" and json.loads(events[-1].data) == {"status": "complete"}
    target = {"kind": kind, "url": None}

    # The model read the document as a search result under its silvia:// source.
    (block,) = fake.requests[1]["messages"][-1]["content"][0]["content"]
    assert (block["type"], block["source"], block["title"]) == ("search_result", source, title)
    assert block["citations"] == {"enabled": True}

    # Live `citation` and `citations_summary` events carry the target.
    (live,) = [json.loads(e.data)["citation"] for e in events if e.event == "citation"]
    assert (live["source"], live["target"]) == (source, target)
    (summary,) = [json.loads(e.data) for e in events if e.event == "citations_summary"]
    assert [(c["source"], c["target"]) for c in summary["citations"]] == [(source, target)]

    # The stored row, read back raw through the API.
    answer = client.session(session_id)["messages"][1]
    assert answer["status"] == "complete", answer["error"]
    assert [(c["source"], c["target"]) for c in answer["citations"]] == [(source, target)]
    assert [(c["source"], c["target"]) for c in answer["inline_citations"]] == [(source, target)]
