"""The offline engine: deterministic answers through the same pipeline as Claude.

It reads the request as Claude would (the question, the tool results as `search_result`
blocks) and answers in Claude's streaming events: one round of `tool_use` blocks (the
user's rows, quotes, the documents its library ranked relevant), then text blocks whose
sentences carry `search_result_location` citations of those results. Small talk and
questions out of its reach get a short reply at once, with no tools and no sources.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from ...tools.python.market import MarketData
from ..base import ModelRequest
from .advice import advice_kind
from .after_bill import read_after_bill
from .ask import understand
from .bill_months import read_bill_months
from .cite import Block, Result
from .compute import read_computation
from .conversation import FOLLOW_UP_DEPTH, earlier_questions, split_parts
from .dispatch import Context, Task, tasks
from .fuzzy import correct
from .guidance import read_guided
from .library import library
from .loan_terms import read_loan_terms
from .overview import asks_budget
from .plan import ToolCall
from .projection import read_projection
from .refusal import continues
from .regular import read_regular
from .scope import declined, padded
from .spending import follow_spending, read_spending, spending_answer, spending_calls
from .spending_ask import SpendingAsk
from .task import answer, merged_calls
from .trips import read_trip
from .write import NOT_FOUND, join_sections


@dataclass
class _Turn:
    question: str
    rounds: int = 0
    results: list[Result] = field(default_factory=list)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _is_question(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if message.get("role") != "user":
        return False
    if isinstance(content, str):
        return True
    return isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _read_turn(messages: list[dict[str, Any]]) -> _Turn:
    """Find the current question and collect this turn's results in request order."""
    start = max((i for i, m in enumerate(messages) if _is_question(m)), default=0)
    turn = _Turn(_text_of(messages[start].get("content")) if messages else "")
    calls: dict[str, tuple[str, int]] = {}
    order = 0
    index = 0  # search_result_index counts every search_result block in the request.
    for position, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and position > start:
                calls[str(block.get("id"))] = (str(block.get("name")), order)
                order += 1
                continue
            if block.get("type") == "search_result":
                index += 1
                continue
            if block.get("type") != "tool_result":
                continue
            name, call = calls.get(str(block.get("tool_use_id")), ("", -1))
            inner = block.get("content")
            items = inner if isinstance(inner, list) else [{"type": "text", "text": str(inner)}]
            for item in items:
                if item.get("type") == "search_result":
                    if position > start:
                        turn.results.append(Result(name, index, item, call))
                    index += 1
                elif position > start and block.get("is_error"):
                    turn.results.append(Result(name, None, {"error": item.get("text", "")}, call))
    turn.rounds = sum(1 for m in messages[start:] if m.get("role") == "assistant")
    return turn


def _events_for_tools(calls: list[ToolCall], round_no: int) -> Iterator[dict[str, Any]]:
    yield _message_start()
    for index, call in enumerate(calls):
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {
                "type": "tool_use",
                "id": f"toolu_offline_{round_no}_{index}",
                "name": call.name,
                "input": {},
            },
        }
        yield {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps(call.input)},
        }
        yield {"type": "content_block_stop", "index": index}
    yield from _message_end("tool_use")


def _events_for_text(blocks: list[Block]) -> Iterator[dict[str, Any]]:
    yield _message_start()
    for index, (text, citations) in enumerate(blocks):
        yield {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "text", "text": ""},
        }
        for piece in re.findall(r"\S+\s*|\s+", text):
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": piece},
            }
        for citation in citations:
            yield {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "citations_delta", "citation": citation},
            }
        yield {"type": "content_block_stop", "index": index}
    yield from _message_end("end_turn")


def _message_start() -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_offline",
            "type": "message",
            "role": "assistant",
            "model": "offline",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    }


def _message_end(stop_reason: str) -> Iterator[dict[str, Any]]:
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 0},
    }
    yield {"type": "message_stop"}


def _paragraph(blocks: list[Block]) -> list[Block]:
    """Return `blocks` as a paragraph of their own after what comes before them."""
    if not blocks:
        return []
    text, citations = blocks[0]
    return [("\n\n" + text.lstrip(), citations), *blocks[1:]]


def _advice(text: str) -> bool:
    """Tell whether a question asks for a judgement the advice and guided answers give."""
    mended = correct(text)
    said = padded(mended)
    guided = read_guided(mended) is not None  # "would i lose my money if my bank went bust?"
    return guided or advice_kind(said, understand(mended)) is not None or asks_budget(said)


def _besides_spending(text: str, today: date) -> tuple[str, bool]:
    """The parts of a message that are not about spending (none: ""), and whether the
    spending part comes first."""
    parts = split_parts(text)
    spent = [read_spending(p, today) is not None for p in parts]
    if len(parts) < 2 or all(spent) or not any(spent):
        return "", True
    rest = [p.rstrip(" ?,") + "?" for p, s in zip(parts, spent, strict=True) if not s]
    return " ".join(rest), spent[0]


def _spendable(text: str) -> bool:
    """A sum of what could be spent ("between checking and my card's unused credit"), not
    what was spent."""
    found = read_computation(text)
    return found is not None and found.op == "total" and bool(found.measures)


def _spending_part(text: str, today: date) -> str:
    return next((p for p in split_parts(text) if read_spending(p, today) is not None), text)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a turn's question asks of the tools: its tasks, its spending part, their calls."""

    found: list[Task]
    spending: SpendingAsk | None
    first: bool  # the spending part's answer comes first
    followed: bool  # a spending follow-up ("and hulu?"), said with `note`
    note: str
    calls: list[ToolCall]
    money: list[ToolCall]


class OfflineModel:
    """Answer deterministically from the tools, citing what they returned; `market` is the
    market data its quote tool reads (the bundled snapshot unless given)."""

    def __init__(
        self, market: MarketData | None = None, today: Callable[[], date] | None = None
    ) -> None:
        self._market = market
        # The day "this month" and "last month" count from (UTC, as the demo data is dated).
        self._today = today or (lambda: datetime.now(UTC).date())
        self._planned: tuple[tuple[str, tuple[str, ...], date], _Plan] | None = None

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        """Yield tool calls for a new question, then an answer citing the results."""
        turn = _read_turn(request.messages)
        today = self._today()
        # Only what a follow-up is read against: the chat's latest questions.
        latest = tuple(earlier_questions(request.messages)[-FOLLOW_UP_DEPTH:])
        # A turn's rounds ask the same question of the same chat: it is read once, and its
        # second round writes from the tasks its first chose (the reading is deterministic).
        key = (turn.question, latest, today)
        if self._planned is None or self._planned[0] != key:
            self._planned = (key, self._plan(turn.question, latest, today))
        plan = self._planned[1]
        found, spending = plan.found, plan.spending
        if turn.rounds == 0 and (plan.calls or plan.money):
            # The engine's calls first: its tasks find their results by position.
            yield from _events_for_tools([*plan.calls, *plan.money], 0)
            return
        results = turn.results if turn.rounds else []
        blocks = join_sections(answer(found, results)) if found else []
        if spending is not None:
            mine = [r for r in results if r.call >= len(plan.calls)]
            spent = spending_answer(spending, mine)
            if plan.followed:
                spent = [(plan.note + "\n", []), *spent]
            blocks = [*spent, *_paragraph(blocks)] if plan.first else [*blocks, *_paragraph(spent)]
        yield from _events_for_text(blocks or [(NOT_FOUND, [])])

    def _plan(self, question: str, latest: tuple[str, ...], today: date) -> _Plan:
        """Read the turn's question: its tasks, its spending part, and the calls they need."""
        mended = correct(question)
        spending = read_spending(mended, today)
        if spending is not None and spending.kind != "overview" and _advice(question):
            spending = None  # "is it ok to keep all my money in checking?": the advice answers
        said = declined(mended) if spending is not None else None
        part = _spending_part(mended, today)
        if said and (declined(part) or continues(said, padded(part))):
            spending = None  # "... guaranteed to 10x, it's my rent money"; "what she spent"
        # The earlier questions, typos mended.
        earlier = tuple(correct(q) for q in latest)
        # A trip's place is a name, read before typos are mended ("Seattle" is no "settled").
        trip = read_trip(question, today)
        counted = read_projection(mended, today) or read_bill_months(mended, earlier, today)
        if read_regular(mended, earlier, today) or read_after_bill(mended, earlier, today) or trip:
            spending = None  # "what does the mortgage cost me over a year?": the bill, x12
        if counted is not None or read_loan_terms(mended, today) is not None:
            spending = None  # "how many months of rent could my savings pay for": counted
        if spending is not None and _spendable(mended):
            spending = None  # "cash in checking plus unused credit, the most I could spend?"
        found: list[Task] = []
        rest, first = _besides_spending(mended, today) if spending is not None else ("", True)
        followed = follow_spending(mended, earlier[-1], today) if earlier and not spending else None
        if read_regular(mended, earlier, today) is not None or counted is not None:
            followed = None  # "and per year?" after a bill: that bill over a year
        note = ""
        if followed is not None:  # "and hulu?" after a question about rent
            spending, note = followed
        if spending is None or spending.kind == "overview":
            # "How am I doing (this month)?": the month's money and where the user stands.
            context = Context(library(), self._market, earlier, today=today)
            found = [trip] if trip else tasks(mended, context)
        elif rest:  # "what's my utilization, and how much did rent cost me last month?"
            spending = read_spending(_spending_part(mended, today), today) or spending
            found = tasks(rest, Context(library(), self._market, earlier, today=today))
        calls, _ = merged_calls(found)
        money = spending_calls(spending, today) if spending is not None else []
        return _Plan(found, spending, first, followed is not None, note, calls, money)

    def close(self) -> None:
        """Hold nothing: nothing to release."""
