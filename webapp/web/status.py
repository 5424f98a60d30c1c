"""The status line of an answer being worked on: the latest step, named in plain words.

Read from the packets the turn already writes: a `search_tool_start` names the tool, and the
documents that follow it say which accounts, which document or which search it read. Only
titles are shown, never a target or an account id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..packets.documents import SearchDoc
from ..packets.models import Packet, SearchToolDocumentsDelta
from ..packets.wire import parse_packet
from ..tool_registry import EXECUTE_PYTHON, EXECUTE_SQL, READERS, SEARCH_WEB
from .sheet import title_of

THINKING = "Thinking…"
# The most titles a step names before it says how many more.
MAX_NAMED = 2


def _names(docs: list[SearchDoc]) -> str:
    titles = list(dict.fromkeys(title_of(doc) for doc in docs))
    if len(titles) <= MAX_NAMED:
        return " and ".join(titles)
    return f"{', '.join(titles[:MAX_NAMED])} and {len(titles) - MAX_NAMED} more"


def step_words(tool: str, docs: list[SearchDoc]) -> str:
    """Return what a tool's step is, said as a person would: "Reading Regulation Z…"."""
    if tool == EXECUTE_SQL:
        accounts = [doc for doc in docs if doc.source_type == "account"]
        if any(doc.source_type == "portfolio" for doc in docs) and not accounts:
            return "Looking at your portfolio…"
        return (
            f"Looking at your accounts: {_names(accounts)}…"
            if accounts
            else ("Looking at your accounts…")
        )
    if tool in READERS:
        return f"Reading {_names(docs)}…" if docs else "Looking through the references…"
    if tool == SEARCH_WEB:
        return f"Searching the web: {_names(docs)}…" if docs else "Searching the web…"
    if tool == EXECUTE_PYTHON:
        if any(doc.source_type == "market_data" for doc in docs):
            return "Looking up market prices…"
        return "Working out the numbers…"
    return "Working on it…"


def status_text(packets: Iterable[object]) -> str:
    """Return the latest step of the packets so far, or "Thinking…" before any."""
    tool: str | None = None
    docs: list[SearchDoc] = []
    for packet in packets:
        obj = packet.get("obj") if isinstance(packet, Mapping) else None
        if isinstance(obj, Mapping) and obj.get("type") == "search_tool_start":
            name = obj.get("tool_name")
            tool, docs = (name if isinstance(name, str) else ""), []
            continue
        if isinstance(obj, Mapping) and obj.get("type") == "search_tool_documents_delta":
            parsed = parse_packet(packet)
            if isinstance(parsed, Packet) and isinstance(parsed.obj, SearchToolDocumentsDelta):
                docs.extend(parsed.obj.documents)
    return THINKING if tool is None else step_words(tool, docs)
