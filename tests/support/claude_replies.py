"""Scripted Claude replies beyond `fake_claude`'s: text that cites, then tool calls."""

from __future__ import annotations

from typing import Any

from tests.support.fake_claude import text_reply, tool_reply


def cite_then_call(
    text: str, citations: list[dict[str, Any]], *calls: tuple[str, str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Return a message whose text block cites, followed by tool calls (stop: tool_use).

    The citations are made before the tools run: a later round may still change what their
    source means (seed 000, "One meaning per source per turn").
    """
    head = text_reply((text, citations))[:-2]  # without its message_delta / message_stop
    tail = tool_reply(*calls)[1:]  # without its message_start
    for event in tail:
        if "index" in event:
            event["index"] += 1
    return head + tail
