"""The tasks a message's questions become (`dispatch.py` picks them): each asks the tools for
what it needs, with `calls()`, and writes its part of the answer from their results, with
`write(results)`. `Context` is what a reader may consult to choose one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol

from ...tool_registry import EXECUTE_SQL
from ...tools.python.market import MarketData
from .ask import Question
from .cite import Block, Result
from .compute import computation_queries, write_computation
from .figures import rows_of
from .library import DocHit, Library
from .open_task import open_calls, open_write
from .overview import Open
from .plan import ToolCall
from .plan import plan as tool_calls
from .sides import Computation
from .write import direct_reply, write_answer


class Task(Protocol):
    """One question's work: the tool calls it needs, and its answer from their results."""

    def calls(self) -> list[ToolCall]: ...

    def write(self, results: list[Result]) -> list[Block]: ...


@dataclass(frozen=True)
class Context:
    """What a reader may consult: the library, the market, the chat's earlier questions,
    and whether this is the message's first question."""

    books: Library
    market: MarketData | None
    earlier: tuple[str, ...] = ()
    first: bool = True
    own: bool = False  # an earlier part of the message was about the user's own figures
    today: date | None = None  # the day "last month" counts from (the day's date if None)


@dataclass(frozen=True)
class Reply:
    """A plain answer with no tools and no sources."""

    text: str

    def calls(self) -> list[ToolCall]:
        return []

    def write(self, results: list[Result]) -> list[Block]:
        return [(self.text, [])]


@dataclass(frozen=True)
class Figures:
    """The user's figures, quotes and documents (the engine's general task)."""

    question: Question
    hits: list[DocHit]
    context: Context
    note: str = ""
    earlier: str = ""  # the question before, when this one asks more of its documents

    def calls(self) -> list[ToolCall]:
        return tool_calls(self.question, self.hits, self.context.books, self.context.market)

    def direct(self) -> str:
        return direct_reply(self.question, self.hits, self.context.market)

    def write(self, results: list[Result]) -> list[Block]:
        if not self.calls():
            return [(self.direct(), [])]
        blocks = write_answer(
            self.question,
            results,
            self.hits,
            self.context.books,
            self.context.market,
            self.earlier,
        )
        return [(self.note + "\n", []), *blocks] if self.note else blocks


@dataclass(frozen=True)
class Computed:
    """A figure computed over the user's accounts: highest, difference, share, count."""

    computation: Computation

    def calls(self) -> list[ToolCall]:
        queries = computation_queries(self.computation)
        return [ToolCall(EXECUTE_SQL, {"query": query}) for query in queries]

    def write(self, results: list[Result]) -> list[Block]:
        return write_computation(self.computation, rows_of(results))


@dataclass(frozen=True)
class Opened:
    """An open question answered from the user's figures (`open_task.py`)."""

    kind: Open
    question: Question
    reply: str = ""
    today: date | None = None

    def calls(self) -> list[ToolCall]:
        return open_calls(self.kind, self.question, self.today or date.today())

    def write(self, results: list[Result]) -> list[Block]:
        return open_write(self.kind, self.question, self.reply, results)


@dataclass(frozen=True)
class Framed:
    """A task's answer with a note before it and a paragraph after it (`judged.py`)."""

    task: Figures
    note: str
    closing: str

    def calls(self) -> list[ToolCall]:
        return self.task.calls()

    def write(self, results: list[Result]) -> list[Block]:
        blocks = self.task.write(results)
        return [(self.note + "\n", []), *blocks, ("\n\n" + self.closing, [])]


def merged_calls(found: list[Task]) -> tuple[list[ToolCall], list[list[int]]]:
    """Return the round's calls (a call two questions share is made once) and, per task,
    the positions of its calls."""
    calls: list[ToolCall] = []
    positions: list[list[int]] = []
    for task in found:
        mine = []
        for call in task.calls():
            if call not in calls:
                calls.append(call)
            mine.append(calls.index(call))
        positions.append(mine)
    return calls, positions


def answer(found: list[Task], results: list[Result]) -> list[list[Block]]:
    """Write each task's part of the answer from the results of its own calls."""
    _, positions = merged_calls(found)
    return [
        task.write([r for r in results if r.call in mine])
        for task, mine in zip(found, positions, strict=True)
    ]
