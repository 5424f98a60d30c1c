"""One turn: the model and the tools in rounds, every citation leaving with its target.

docs/specs.md, T1-T21: each tool result becomes `search_result` blocks (`citable.py`), the
turn's `CitationRegistry` records each block's target as it is written, the answer's
citations take the registry's target for their source, and everything goes out on every
channel (`emit.py`). A checkpoint after every tool round lets an interrupted turn resume where
it stopped.

A source means one thing per turn, but what it means is known only when the turn ends: any
later tool round may write it again, pooling accounts into it or poisoning it. So the
`citation` events wait for the end of the turn and go out just before `citations_summary`,
each with its source's settled target, never one the turn would change afterwards. The
packets go out as they come (numbers in first-cite order); their documents carry a
source's target as of their writing, and the end of the turn sends the settled copies.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..citations.citable import ToolOutcome, valid_citable
from ..llm.base import (
    UNAVAILABLE,
    ContextTooLong,
    Model,
    ModelError,
    ModelRequest,
    StreamCut,
)
from ..llm.stream import MessageAccumulator, StreamProtocolError
from ..packets.documents import SearchDoc
from ..settings import DEFAULT_MAX_TOKENS
from ..text import valid_json
from .answer import AnswerBuilder, CitedSource
from .checkpoint import (
    citables_from_checkpoint,
    citables_to_checkpoint,
    registry_from_checkpoint,
)
from .emit import Emitter, SinkClosed, TurnSink, search_doc
from .prompt import SYSTEM_PROMPT, TOOLS

log = logging.getLogger(__name__)

MAX_ROUNDS = 8  # tool rounds (and paused server-tool rounds) one turn may make
MAX_CONTINUATIONS = 2  # rounds that carry on an answer cut short
MAX_TOKENS_CAP = 64000  # the most one round may be given when a cut tool call asks for room
TurnStatus = Literal["complete", "error"]
# Sent after a reply that was cut off (its length limit, a broken connection): the API takes
# no prefilled assistant turn from current models, so the conversation ends with this.
CONTINUE = (
    "Your reply was cut off before it was finished. Continue it from exactly where it "
    "stopped, without repeating anything already written."
)
CUT_SHORT = (
    "\n\n*This answer was cut short: it reached the most one answer may write. Ask about one "
    "part of it to hear the rest.*"
)
REFUSAL = (
    "I can't help with that request. I can answer questions about your accounts, spending, "
    "investments, taxes, cards and mortgage."
)
TOO_LONG = (
    "This chat has grown too long for the assistant to read. Please start a new chat for "
    "this question."
)


def _valid_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """Return a tool's result as it may be stored and drawn: valid Unicode (`webapp.text`),
    whatever the page, program or file it came from held."""
    return ToolOutcome(
        valid_json(outcome.content),
        [valid_citable(c) for c in outcome.citables],
        is_error=outcome.is_error,
    )


class ToolRunner(Protocol):
    def run(self, name: str, tool_input: dict[str, Any]) -> ToolOutcome:
        """Run one tool call; failures come back as an error outcome, never raised."""
        ...


@dataclass(frozen=True, slots=True)
class TurnResult:
    """How the turn ended, and what is stored for it."""

    status: TurnStatus
    content: str
    citations: list[dict[str, Any]]
    inline_citations: list[dict[str, Any]]
    error: str | None = None
    # How the model ended the answer, where it says more than the status: "max_tokens"
    # (cut short), "refusal" (the app's own refusal is stored: kept out of later history).
    stop_reason: str | None = None


@dataclass(slots=True)
class _Round:
    acc: MessageAccumulator
    cut: bool = False  # the reply broke off: what came is in `acc`


class _Turn:
    def __init__(
        self,
        engine: Model,
        tools: ToolRunner,
        sink: TurnSink,
        checkpoint: dict[str, Any],
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.engine, self.tools = engine, tools
        self.max_tokens = max_tokens
        self.paused = 0  # rounds a server tool paused, which count as tool rounds do
        # How many messages before the question are earlier exchanges (absent: none known).
        self.history_len = int(checkpoint.get("history_len", 0))
        self.emitter = Emitter(sink)
        self.sink = sink
        self.messages: list[dict[str, Any]] = list(checkpoint["messages"])
        self.round = int(checkpoint.get("round", 0))
        self.registry = registry_from_checkpoint(checkpoint, self.messages)
        self.citables = citables_from_checkpoint(checkpoint)
        self.sources = {s: CitedSource(c.title, c.link) for s, c in self.citables.items()}
        self.answer = AnswerBuilder(self.registry, self.sources)
        self.answer.restore(checkpoint.get("answer"))
        self.emitter.message_turn = checkpoint.get("message_turn")
        self.last_message: dict[str, Any] = {}

    def docs(self) -> list[SearchDoc]:
        return [search_doc(c, self.registry) for c in self.citables.values()]

    def checkpoint(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "round": self.round,
            "citationTargets": self.registry.to_checkpoint(),
            # What the messages' search_result blocks do not say: links, kinds, dates.
            "citables": citables_to_checkpoint(self.citables.values()),
            "answer": self.answer.state(),
            "message_turn": self.emitter.message_turn,
            "history_len": self.history_len,
        }

    def model_round(self, max_tokens: int) -> _Round:
        request = ModelRequest(SYSTEM_PROMPT, self.messages, TOOLS, max_tokens)
        acc = MessageAccumulator()
        try:
            for raw in self.engine.stream(request):
                # What the model sends is stored and drawn: made valid Unicode as it arrives.
                event = valid_json(raw)
                if _starts_text(event):
                    self.emitter.text(self.answer.start_block(), self.round, self.docs)
                stopped = acc.feed(event)
                delta = event.get("delta") if event.get("type") == "content_block_delta" else None
                if isinstance(delta, dict) and delta.get("type") == "text_delta":
                    self.emitter.text(
                        self.answer.add_text(str(delta.get("text", ""))), self.round, self.docs
                    )
                if stopped is not None and stopped.block.get("type") == "text":
                    self.close_block(stopped.index, stopped.block.get("citations", []))
        except StreamCut as exc:
            log.warning("the model's reply broke off; continuing it: %s", exc)
            open_text = acc.open_text()
            if open_text is not None:  # the text written so far stays, with its citations
                self.close_block(*open_text)
            return _Round(acc, cut=True)
        if not acc.done:
            raise ModelError(
                "The model's answer ended early.",
                "The answer was cut off before it was finished. Please try again.",
            )
        return _Round(acc)

    def close_block(self, index: int, citations: list[Any]) -> None:
        if citations:
            # As the model sent them: targets are attached after this line, never logged.
            log.info("[Citations] block %d: %s", index, json.dumps(citations))
        out = self.answer.finish_block(citations)
        for number, source in out.new_numbers:
            self.emitter.citation_info(number, source)
        # The `citation` events wait for `finish`: a later round may change their targets.
        self.emitter.text(out.markers, self.round, self.docs)

    def tool_round(self, content: list[dict[str, Any]]) -> None:
        results = []
        calls = [b for b in content if b.get("type") == "tool_use"]
        for tab, call in enumerate(calls):
            outcome = _valid_outcome(
                self.tools.run(str(call.get("name")), dict(call.get("input") or {}))
            )
            docs = []
            for citable in outcome.citables:
                self.registry.record(citable.source, citable.target)
                self.citables[citable.source] = citable
                self.sources[citable.source] = CitedSource(citable.title, citable.link)
                docs.append(search_doc(citable, self.registry))
            self.emitter.tool_section(self.round, tab, str(call.get("name")), docs)
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call.get("id"),
                "content": outcome.content,
            }
            if outcome.is_error:
                result["is_error"] = True
            results.append(result)
        self.messages.append({"role": "assistant", "content": _sendable(content)})
        self.messages.append({"role": "user", "content": results})
        self.round += 1
        self.answer.new_round()
        self.sink.save_checkpoint(self.checkpoint())

    def run(self) -> TurnResult:
        try:
            return self.rounds()
        except ModelError as exc:
            log.warning("the model could not answer: %s", exc)
            return self.fail(exc.public)
        except StreamProtocolError as exc:
            log.warning("the model's stream broke its protocol: %s", exc)
            return self.fail(UNAVAILABLE)
        except SinkClosed:
            raise
        except Exception:
            log.exception("turn failed")
            return self.fail("Something went wrong while answering. Please try again.")

    def rounds(self) -> TurnResult:
        """Ask the model round after round, as each stop reason says, until the answer ends.

        https://docs.claude.com/en/api/handling-stop-reasons; README.md, "The model in
        production".
        """
        continuations, trimmed, max_tokens = 0, False, self.max_tokens
        while True:
            try:
                this = self.model_round(max_tokens)
            except ContextTooLong:
                if trimmed or not self.leave_out_history():
                    raise ModelError("the question does not fit even alone", TOO_LONG) from None
                trimmed = True
                continue
            acc = this.acc
            self.last_message = acc.final_message()
            reason = "cut" if this.cut else acc.stop_reason
            if reason == "tool_use":
                if acc.cut_tool_input():
                    raise StreamProtocolError("a tool call's input is not a JSON object")
                self.count_round()
                self.tool_round(acc.content())
            elif reason == "pause_turn":  # a server tool paused: send it all back to resume
                self.count_round()
                self.paused += 1
                self.messages.append({"role": "assistant", "content": _sendable(acc.content())})
            elif reason == "refusal":
                return self.refuse()
            elif reason in ("max_tokens", "cut", "model_context_window_exceeded"):
                if reason == "model_context_window_exceeded":
                    if trimmed or not self.leave_out_history():
                        return self.finish(cut_short=True)
                    trimmed = True
                if continuations >= MAX_CONTINUATIONS:
                    return self.finish(cut_short=True)
                continuations += 1
                if acc.cut_tool_input():  # a tool call cut mid-input: the next try gets room
                    max_tokens = min(max_tokens * 2, MAX_TOKENS_CAP)
                self.carry_on(acc.resumable_content())
            else:  # end_turn, stop_sequence, or a reason newer than this code: the answer
                return self.finish()

    def count_round(self) -> None:
        if self.round + self.paused >= MAX_ROUNDS:
            raise ModelError(
                f"The model asked for more than {MAX_ROUNDS} tool rounds.",
                "This question needed more lookups than one answer may make. "
                "Try asking about one thing at a time.",
            )

    def carry_on(self, content: list[dict[str, Any]]) -> None:
        """Continue a cut answer: what was written goes back, then the request to go on."""
        if content:
            self.messages.append({"role": "assistant", "content": content})
            self.messages.append({"role": "user", "content": CONTINUE})
        self.sink.save_checkpoint(self.checkpoint())

    def leave_out_history(self) -> bool:
        """Drop the earlier exchanges from what the model is sent; False when there are none."""
        if self.history_len <= 0:
            return False
        log.warning("the conversation is too long for the model; earlier exchanges left out")
        del self.messages[: self.history_len]
        self.history_len = 0
        return True

    def refuse(self) -> TurnResult:
        """Replace whatever was written with the app's own refusal (the streaming-refusals
        guide: the partial reply is no answer, and it stays out of later history)."""
        log.info("the model declined to answer")
        self.sink.emit("reset", {"after": 0})  # readers withdraw all they were sent
        self.emitter.message_turn = None
        self.emitter.text(REFUSAL, self.round, list)
        self.emitter.stop(self.round)
        return TurnResult("complete", REFUSAL, [], [], stop_reason="refusal")

    def finish(self, cut_short: bool = False) -> TurnResult:
        if cut_short:
            self.emitter.text(self.answer.add_text(CUT_SHORT), self.round, self.docs)
        summary = self.answer.summary()
        settled = [
            search_doc(self.citables[c["source"]], self.registry, tuple(c["cited_texts"]))
            for c in summary
        ]
        self.emitter.documents_update(settled, self.round)
        # Every source is settled now: each citation, in the answer's order, then the summary.
        for citation in self.answer.citations():
            self.sink.emit("citation", {"citation": citation})
        self.sink.emit("citations_summary", {"citations": summary})
        self.sink.emit("message", {"message": self.last_message})
        self.emitter.stop(self.round)
        return TurnResult(
            "complete",
            self.answer.text,
            summary,
            self.answer.inline_citations(),
            stop_reason="max_tokens" if cut_short else None,
        )

    def fail(self, message: str) -> TurnResult:
        self.emitter.error(message, self.round)
        self.emitter.stop(self.round)
        return TurnResult("error", "", [], [], message)


def _sendable(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the blocks the API takes back: an empty text block is refused, so it is left out."""
    return [b for b in content if not (b.get("type") == "text" and not b.get("text"))]


def _starts_text(event: dict[str, Any]) -> bool:
    block = event.get("content_block")
    return (
        event.get("type") == "content_block_start"
        and isinstance(block, dict)
        and block.get("type") == "text"
    )


def start_checkpoint(history: list[dict[str, Any]], question: str) -> dict[str, Any]:
    """Return the checkpoint a new turn starts from: text-only history and the question."""
    return {
        "messages": [*history, {"role": "user", "content": question}],
        "round": 0,
        "citationTargets": {},
        "history_len": len(history),
    }


def failed_turn(sink: TurnSink, message: str) -> TurnResult:
    """End a turn that cannot run: an `error` packet, then `stop`."""
    emitter = Emitter(sink)
    emitter.error(message, 0)
    emitter.stop(0)
    return TurnResult("error", "", [], [], message)


def run_turn(
    engine: Model,
    tools: ToolRunner,
    sink: TurnSink,
    checkpoint: dict[str, Any],
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> TurnResult:
    """Run a turn from its checkpoint (a new one, or one saved after a tool round)."""
    try:
        turn = _Turn(engine, tools, sink, checkpoint, max_tokens)
    except (KeyError, TypeError, ValueError, AttributeError):
        log.warning("a checkpoint could not be read; the turn cannot resume")
        return failed_turn(sink, "This answer was interrupted and cannot be resumed.")
    return turn.run()
