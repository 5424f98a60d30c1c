"""The status line's words, read from the packets a turn writes."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.web.status import THINKING, status_text


def tool(name: str, *titles: tuple[str, str]) -> list[dict[str, Any]]:
    docs = [
        {"document_id": f"d{i}", "semantic_identifier": title, "source_type": kind}
        for i, (title, kind) in enumerate(titles)
    ]
    return [
        {"placement": {"turn_index": 0}, "obj": {"type": "search_tool_start", "tool_name": name}},
        {
            "placement": {"turn_index": 0},
            "obj": {"type": "search_tool_documents_delta", "documents": docs},
        },
        {"placement": {"turn_index": 0}, "obj": {"type": "section_end"}},
    ]


@pytest.mark.parametrize(
    ("packets", "words"),
    [
        ([], THINKING),
        (tool("execute_sql", ("Checking", "account")), "Looking at your accounts: Checking…"),
        (
            tool("execute_sql", ("A", "account"), ("B", "account"), ("C", "account")),
            "Looking at your accounts: A, B and 1 more…",
        ),
        (tool("execute_sql", ("Your portfolio", "portfolio")), "Looking at your portfolio…"),
        (tool("read_tax_authority", ("Regulation Z", "tax_reference")), "Reading Regulation Z…"),
        (tool("search_web"), "Searching the web…"),
        (tool("execute_python", ("AAPL", "market_data")), "Looking up market prices…"),
        (
            tool("execute_sql") + tool("search_web", ("Roth IRA limits", "web")),
            "Searching the web: Roth IRA limits…",
        ),
    ],
    ids=[
        "nothing-yet",
        "one-account",
        "many-accounts",
        "portfolio",
        "reader",
        "web-empty",
        "market",
        "latest-step-wins",
    ],
)
def test_the_status_line_names_the_latest_step(packets: list[object], words: str) -> None:
    assert status_text(packets) == words
