"""Fold a Claude Messages stream into the final message, block by block (no I/O).

Event order and delta types: https://docs.anthropic.com/en/docs/build-with-claude/streaming
`citations_delta` may come before or after its block's text; `input_json_delta` fragments
are joined and parsed when the block stops (for any block that takes an input: the client's
`tool_use` and the server's tools alike). Blocks of kinds this module does not know (thinking,
redacted thinking, server tool results) are kept whole, so they go back to the API intact.

A reply cut short (`max_tokens`, or a connection that broke) may leave a tool call's input
unfinished: that block is marked `cut` rather than failing, and `resumable_content` returns
what can be sent back to continue from (finished blocks, and the text written so far).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class StreamProtocolError(Exception):
    """The stream broke the Messages API's event grammar."""


@dataclass(slots=True)
class _Block:
    type: str
    text: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    tool_id: str = ""
    tool_name: str = ""
    partial_json: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    takes_input: bool = False
    stopped: bool = False
    cut: bool = False  # its tool input was left unfinished

    def to_json(self) -> dict[str, Any]:
        if self.type == "text":
            block: dict[str, Any] = {"type": "text", "text": self.text}
            if self.citations:
                block["citations"] = self.citations
            return block
        if self.type == "tool_use":
            return {
                "type": "tool_use",
                "id": self.tool_id,
                "name": self.tool_name,
                "input": self.input,
            }
        if self.takes_input:
            return {"type": self.type, **self.extra, "input": self.input}
        return {"type": self.type, **self.extra}


@dataclass(frozen=True, slots=True)
class BlockStop:
    """A content block has finished: `block` is its final JSON."""

    index: int
    block: dict[str, Any]


class MessageAccumulator:
    """Build the assistant message from stream events, reporting each block as it stops."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self._blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.done = False

    def feed(self, event: dict[str, Any]) -> BlockStop | None:
        """Apply one event; return the block it completed, if any."""
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            self.message = dict(message) if isinstance(message, dict) else {}
        elif kind == "content_block_start":
            self._start(event)
        elif kind == "content_block_delta":
            self._delta(event)
        elif kind == "content_block_stop":
            index = event.get("index")
            if not isinstance(index, int) or index not in self._blocks:
                raise StreamProtocolError(f"content_block_stop for unknown block {index!r}")
            block = self._blocks[index]
            block.stopped = True
            if block.takes_input:
                parsed = _parse_input(block.partial_json, block.input)
                block.cut = parsed is None
                block.input = block.input if parsed is None else parsed
            return BlockStop(index, block.to_json())
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                self.stop_reason = str(delta["stop_reason"])
        elif kind == "message_stop":
            self.done = True
        return None  # ping and unknown events change nothing.

    def content(self) -> list[dict[str, Any]]:
        """Return the message's content blocks in index order."""
        return [self._blocks[i].to_json() for i in sorted(self._blocks)]

    def cut_tool_input(self) -> bool:
        """Whether a tool call's input was left unfinished (a reply cut mid-call)."""
        return any(b.cut or (b.takes_input and not b.stopped) for b in self._blocks.values())

    def resumable_content(self) -> list[dict[str, Any]]:
        """Return what of a cut reply can go back to the API: the text written so far and
        every finished block but unfinished tool calls (an unsigned thinking block, a call
        without its input, are refused)."""
        kept = []
        for i in sorted(self._blocks):
            block = self._blocks[i]
            if block.type == "text":
                if block.text:
                    kept.append(block.to_json())
            elif block.stopped and not block.cut and not block.takes_input:
                kept.append(block.to_json())
        return kept

    def open_text(self) -> tuple[int, list[dict[str, Any]]] | None:
        """Return the index and citations of a text block that never stopped, if any."""
        for i in sorted(self._blocks):
            block = self._blocks[i]
            if block.type == "text" and not block.stopped:
                return i, block.citations
        return None

    def final_message(self) -> dict[str, Any]:
        """Return the whole assistant message as the non-streaming API would."""
        return {
            **self.message,
            "role": "assistant",
            "content": self.content(),
            "stop_reason": self.stop_reason,
        }

    def _start(self, event: dict[str, Any]) -> None:
        index, start = event.get("index"), event.get("content_block")
        if not isinstance(index, int) or not isinstance(start, dict):
            raise StreamProtocolError("content_block_start without index or block")
        kind = str(start.get("type", ""))
        block = _Block(kind)
        if kind == "text":
            block.text = str(start.get("text") or "")
            citations = start.get("citations")
            block.citations = list(citations) if isinstance(citations, list) else []
        elif kind == "tool_use":
            block.tool_id = str(start.get("id", ""))
            block.tool_name = str(start.get("name", ""))
            initial = start.get("input")
            block.input = initial if isinstance(initial, dict) else {}
            block.takes_input = True
        else:
            block.extra = {k: v for k, v in start.items() if k not in ("type", "input")}
            if "input" in start:  # a server tool's call: its input streams as JSON too
                initial = start.get("input")
                block.input = initial if isinstance(initial, dict) else {}
                block.takes_input = True
        self._blocks[index] = block

    def _delta(self, event: dict[str, Any]) -> None:
        index, delta = event.get("index"), event.get("delta")
        block = self._blocks.get(index) if isinstance(index, int) else None
        if block is None or not isinstance(delta, dict):
            raise StreamProtocolError(f"content_block_delta for unknown block {index!r}")
        kind = delta.get("type")
        if kind == "text_delta":
            block.text += str(delta.get("text", ""))
        elif kind == "citations_delta" and isinstance(delta.get("citation"), dict):
            block.citations.append(delta["citation"])
        elif kind == "input_json_delta":
            block.partial_json += str(delta.get("partial_json", ""))
        elif kind in ("thinking_delta", "signature_delta"):
            key = "thinking" if kind == "thinking_delta" else "signature"
            block.extra[key] = str(block.extra.get(key, "")) + str(delta.get(key, ""))


def _parse_input(partial_json: str, initial: dict[str, Any]) -> dict[str, Any] | None:
    """Return the tool input the fragments spell, or None where they stop short of one."""
    if not partial_json.strip():
        return initial
    try:
        value = json.loads(partial_json)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
