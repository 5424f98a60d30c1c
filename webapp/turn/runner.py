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
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..citations.registry import CitationRegistry
from ..llm.base import UNAVAILABLE, Model, ModelError, ModelRequest
from ..llm.stream import MessageAccumulator, StreamProtocolError
from ..packets.documents import SearchDoc
from ..text import valid_json
from .answer import AnswerBuilder, CitedSource
from .citable import Citable, valid_citable
from .emit import Emitter, SinkClosed, TurnSink, search_doc
from .prompt import SYSTEM_PROMPT, TOOLS

log = logging.getLogger(__name__)

MAX_ROUNDS = 8
TurnStatus = Literal["complete", "error"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool's result: what the model reads, and the blocks it may cite."""

    content: list[dict[str, Any]]
    citables: list[Citable] = field(default_factory=list)
    is_error: bool = False


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


class _Turn:
    def __init__(
        self, engine: Model, tools: ToolRunner, sink: TurnSink, checkpoint: dict[str, Any]
    ) -> None:
        self.engine, self.tools = engine, tools
        self.emitter = Emitter(sink)
        self.sink = sink
        self.messages: list[dict[str, Any]] = list(checkpoint["messages"])
        self.round = int(checkpoint.get("round", 0))
        self.registry = CitationRegistry.from_checkpoint(checkpoint)
        # A checkpoint from before targets has none: its sources stream untyped, and stay so
        # when written again, since a citation cannot say which write it came from.
        for source in _written_sources(self.messages):
            if source not in self.registry:
                self.registry.record(source, None)
        self.citables: dict[str, Citable] = {}
        for raw in checkpoint.get("citables", []):
            citable = Citable(**{**raw, "texts": tuple(raw["texts"]), "target": None})
            self.citables[citable.source] = citable
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
            "citables": [
                {
                    "tool": c.tool,
                    "source": c.source,
                    "title": c.title,
                    "texts": list(c.texts),
                    "source_type": c.source_type,
                    "link": c.link,
                    "updated_at": c.updated_at,
                    "is_internet": c.is_internet,
                }
                for c in self.citables.values()
            ],
            "answer": self.answer.state(),
            "message_turn": self.emitter.message_turn,
        }

    def model_round(self) -> MessageAccumulator:
        request = ModelRequest(SYSTEM_PROMPT, self.messages, TOOLS)
        acc = MessageAccumulator()
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
        if not acc.done:
            raise ModelError(
                "The model's answer ended early.",
                "The answer was cut off before it was finished. Please try again.",
            )
        return acc

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
        self.messages.append({"role": "assistant", "content": content})
        self.messages.append({"role": "user", "content": results})
        self.round += 1
        self.answer.new_round()
        self.sink.save_checkpoint(self.checkpoint())

    def run(self) -> TurnResult:
        try:
            while True:
                acc = self.model_round()
                self.last_message = acc.final_message()
                if acc.stop_reason != "tool_use":
                    break
                if self.round >= MAX_ROUNDS:
                    raise ModelError(
                        f"The model asked for more than {MAX_ROUNDS} tool rounds.",
                        "This question needed more lookups than one answer may make. "
                        "Try asking about one thing at a time.",
                    )
                self.tool_round(acc.content())
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
        return self.finish()

    def finish(self) -> TurnResult:
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
        return TurnResult("complete", self.answer.text, summary, self.answer.inline_citations())

    def fail(self, message: str) -> TurnResult:
        self.emitter.error(message, self.round)
        self.emitter.stop(self.round)
        return TurnResult("error", "", [], [], message)


def _written_sources(messages: list[dict[str, Any]]) -> list[str]:
    sources = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            inner = block.get("content") if block.get("type") == "tool_result" else [block]
            for item in inner if isinstance(inner, list) else []:
                if isinstance(item, dict) and item.get("type") == "search_result":
                    sources.append(str(item.get("source")))
    return sources


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
    }


def failed_turn(sink: TurnSink, message: str) -> TurnResult:
    """End a turn that cannot run: an `error` packet, then `stop`."""
    emitter = Emitter(sink)
    emitter.error(message, 0)
    emitter.stop(0)
    return TurnResult("error", "", [], [], message)


def run_turn(
    engine: Model, tools: ToolRunner, sink: TurnSink, checkpoint: dict[str, Any]
) -> TurnResult:
    """Run a turn from its checkpoint (a new one, or one saved after a tool round)."""
    try:
        turn = _Turn(engine, tools, sink, checkpoint)
    except (KeyError, TypeError, ValueError, AttributeError):
        log.warning("a checkpoint could not be read; the turn cannot resume")
        return failed_turn(sink, "This answer was interrupted and cannot be resumed.")
    return turn.run()
