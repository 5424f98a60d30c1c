"""Rows of an uploaded file that name no account are cited as the file: one source per
file, `silvia://your-file/<file_id>`, the `file` target, a SearchDoc under User Files that
opens the file's preview at the cited rows (docs/architecture.md, "Transactions and statement files")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.turns import Rows
from webapp.citations.citable import from_sql
from webapp.citations.parse import parse_citation_target
from webapp.citations.registry import CitationRegistry
from webapp.citations.sources import target_for_source, targets_for_sql
from webapp.citations.targets import AccountTarget, UserFileTarget, target_to_json
from webapp.packets.destinations import FilePage, FileTarget, document_target
from webapp.packets.documents import SearchDoc, search_doc_from_json, search_doc_to_json
from webapp.packets.select import select_sources
from webapp.packets.state import create_initial_state
from webapp.turn.emit import search_doc

FILE = "fileAAAAAAAAAAAAAAAAAAAA"
OTHER_FILE = "fileBBBBBBBBBBBBBBBBBBBB"
ACCOUNT = "ChaseCheckingAAAAAAAAAAAAAAAAAAAAAAAA"


def _file_row(txn: str, file_id: str = FILE, name: str = "march.csv") -> dict[str, object]:
    return {
        "source": "file",
        "source_account_id": None,
        "account_name": name,
        "transaction_id": txn,
        "description": "SAFEWAY",
        "amount": 42.5,
        "file_id": file_id,
        "file_name": name,
    }


def test_the_file_target_has_its_json_and_reads_back() -> None:
    target = UserFileTarget(FILE)
    assert target_to_json(target) == {"kind": "file", "fileId": FILE}
    assert parse_citation_target({"kind": "file", "fileId": FILE}) == target


@pytest.mark.parametrize(
    "value",
    [
        {"kind": "file"},
        {"kind": "file", "fileId": None},
        {"kind": "file", "fileId": "short"},
        {"kind": "file", "fileId": "has/a/slash/in/it/here"},
        {"kind": "file", "fileId": ["fileAAAAAAAAAAAAAAAAAAAA"]},
    ],
    ids=["missing", "null", "short", "slash", "list"],
)
def test_a_malformed_file_target_reads_as_none(value: dict[str, Any]) -> None:
    assert parse_citation_target(value) is None


def test_a_files_own_rows_are_one_source_per_file_titled_with_its_name() -> None:
    rows = [
        _file_row("t1"),
        _file_row("t2"),
        _file_row("t3", OTHER_FILE, "april.ofx"),
    ]
    groups = {g.source: g for g in targets_for_sql(rows)}
    assert set(groups) == {f"silvia://your-file/{FILE}", f"silvia://your-file/{OTHER_FILE}"}
    march = groups[f"silvia://your-file/{FILE}"]
    assert march.title == "march.csv"
    assert march.target == UserFileTarget(FILE)
    assert len(march.rows) == 2
    assert target_for_source("execute_sql", march.source, march.rows) == UserFileTarget(FILE)
    assert target_for_source("execute_sql", march.source, rows) is None


def test_rows_of_a_file_attached_to_an_account_cite_the_account() -> None:
    row = {**_file_row("t1"), "source": "plaid", "source_account_id": ACCOUNT}
    row["account_name"] = "Checking"
    (group,) = targets_for_sql([row])
    assert group.source == "silvia://your-account/checking"
    assert group.target == AccountTarget(ACCOUNT, "plaid")


def test_the_block_and_its_document_are_a_user_file_that_opens_the_preview() -> None:
    (citable,) = from_sql(Rows((_file_row("t1"), _file_row("t2"))), "2026-03-01T00:00:00+00:00")
    assert citable.file_id == FILE and citable.source_type == "file" and citable.link is None
    assert all("transaction_id: t" in text for text in citable.texts)
    assert not any(FILE in text for text in citable.texts)
    registry = CitationRegistry()
    registry.record(citable.source, citable.target)
    doc = search_doc(citable, registry, highlights=(citable.texts[1],))
    assert doc.file_id == FILE and doc.link is None
    assert search_doc_from_json(search_doc_to_json(doc)) == doc
    assert document_target(doc) == FilePage(FILE, ("t2",))

    state = create_initial_state(1)
    state.document_map[doc.document_id] = doc
    chosen = select_sources(state)
    assert chosen.files == (doc,) and not chosen.more and not chosen.cited


def test_a_file_without_a_preview_keeps_the_seeds_notice() -> None:
    doc = SearchDoc(document_id="upload-1", file_id="upload-1")
    assert document_target(doc) == FileTarget("upload-1")


def test_the_registry_keeps_a_file_target_through_a_checkpoint() -> None:
    registry = CitationRegistry()
    registry.record(f"silvia://your-file/{FILE}", UserFileTarget(FILE))
    again = CitationRegistry.from_checkpoint({"citationTargets": registry.to_checkpoint()})
    assert again.target(f"silvia://your-file/{FILE}") == UserFileTarget(FILE)


def test_claude_is_told_of_the_view_and_the_file_source() -> None:
    from tests.test_transactions_store import FIXED_COLUMNS
    from webapp.turn.prompt import SYSTEM_PROMPT, TOOLS

    (sql,) = [tool for tool in TOOLS if tool["name"] == "execute_sql"]
    described = sql["description"]
    view = described[described.index("transaction_details(") :]
    assert all(column in view for column in FIXED_COLUMNS)
    assert "| execute_sql | silvia://your-file/<file_id> |" in SYSTEM_PROMPT
    assert "transaction_details" in SYSTEM_PROMPT
