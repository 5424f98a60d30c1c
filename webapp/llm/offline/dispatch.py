"""From a message to its answers: each question of the message becomes one task, which asks
the tools for what it needs and then writes its part of the answer from their results.

A task is anything with `calls()` and `write(results)`. `READERS` are tried in order on each
question; the first that returns a task takes it, and the figures-and-documents task of
`write.py` takes what none claims. A new kind of answer (spending, say) plugs in as one more
reader, ahead of the fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from ...tool_registry import EXECUTE_PYTHON, EXECUTE_SQL
from ...tools.python.market import MarketData
from . import lexicon
from .advice import allocate
from .ask import GENERIC, Extreme, Question, documentish, understand
from .cite import Block, Result
from .compute import Computation, Op, computation_query, read_computation, write_computation
from .conversation import combined, follow_up, previous_question, split_parts
from .figures import rows_of
from .library import DocHit, Library
from .overview import (
    GUIDES,
    Open,
    afford,
    cushion,
    guidance,
    overview,
    payoff,
    plan,
    read_open,
    sell,
    uncovered,
)
from .plan import ACCOUNT_COLUMNS, HOLDING_COLUMNS, ToolCall, account_query, article_code
from .plan import plan as tool_calls
from .scope import out_of_scope, padded
from .words import STOPWORDS, bare_amounts, words
from .write import direct_reply, write_answer

ALL_ACCOUNTS = (
    f"SELECT {ACCOUNT_COLUMNS}, credit_limit FROM account_details"
    " ORDER BY account_name, institution_name"
)
OPS = {op: tuple(cues) for op, cues in lexicon.table("operations").items()}
ALL_HOLDINGS = f"SELECT {HOLDING_COLUMNS} FROM holding_details ORDER BY account_name, ticker"


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

    def calls(self) -> list[ToolCall]:
        return tool_calls(self.question, self.hits, self.context.books, self.context.market)

    def direct(self) -> str:
        return direct_reply(self.question, self.hits, self.context.market)

    def write(self, results: list[Result]) -> list[Block]:
        if not self.calls():
            return [(self.direct(), [])]
        blocks = write_answer(
            self.question, results, self.hits, self.context.books, self.context.market
        )
        return [(self.note + "\n", []), *blocks] if self.note else blocks


@dataclass(frozen=True)
class Computed:
    """A figure computed over the user's accounts: highest, difference, share, count."""

    computation: Computation

    def calls(self) -> list[ToolCall]:
        return [ToolCall(EXECUTE_SQL, {"query": computation_query(self.computation)})]

    def write(self, results: list[Result]) -> list[Block]:
        return write_computation(self.computation, rows_of(results))


@dataclass(frozen=True)
class Opened:
    """An open question answered from the user's figures."""

    kind: Open
    question: Question
    reply: str = ""

    def calls(self) -> list[ToolCall]:
        query = ALL_HOLDINGS if self.kind in ("sell", "uncovered", "allocate") else ALL_ACCOUNTS
        calls = [ToolCall(EXECUTE_SQL, {"query": query})]
        if self.kind == "payoff" and self.question.institutions:
            # "my amex": only the debts it names, so that their citations are theirs alone
            named = replace(self.question, intents=("debts",))
            cash = replace(self.question, intents=("cash",), kinds=(), names=(), institutions=())
            calls = [ToolCall(EXECUTE_SQL, {"query": account_query(q)}) for q in (named, cash)]
        if self.kind in GUIDES:  # the bundled page the answer quotes
            code = article_code([GUIDES[self.kind]["title"]])
            calls.append(ToolCall(EXECUTE_PYTHON, {"code": code}))
        return calls

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        if self.kind == "overview":
            return overview(rows)
        if self.kind == "afford":
            return afford(self.question, rows)
        if self.kind == "payoff":
            return payoff(self.question, rows)
        if self.kind == "plan":
            return plan(self.question, rows)
        if self.kind == "cushion":
            return cushion(rows, results)
        if self.kind == "sell":
            return sell(self.question, rows)
        if self.kind == "allocate":
            return allocate(rows, guidance("allocate", results))
        return uncovered(self.reply, self.question, rows)


def _scope(text: str, context: Context) -> Task | None:
    said = out_of_scope(text, context.books)
    return Reply(said) if said else None


def _follow_up(text: str, context: Context) -> Task | None:
    if not context.first or not context.earlier:
        return None
    before = read_computation(split_parts(context.earlier[-1])[-1])
    extremes: tuple[Op, ...] = ("highest", "lowest")
    op = next((o for o in extremes if lexicon.has_phrase(padded(text), OPS[o])), None)
    if before and before.op in ("highest", "lowest") and op and len(text.split()) <= 5:
        return Computed(replace(before, op=op))  # "and the lowest?": the same, other end
    last = previous_question(context.earlier)
    if last and last.extreme and last.about_data and op and len(text.split()) <= 5:
        end: Extreme = "most" if op == "highest" else "least"
        if end != last.extreme:  # "What's my biggest debt?", "and the smallest?"
            return Figures(replace(last, text=text, extreme=end), [], context, "")
    again = _open_again(text, context)
    if again:
        return again
    found = combined(text, context.earlier) or follow_up(text, last)
    if found is None:
        return None
    question, note = found
    return Figures(question, [], context, note)


def _open_again(text: str, context: Context) -> Task | None:
    """An advice follow-up ("what about my apple?" after "Should I sell my VTI?"): the same
    open question, of the holding or the amount the follow-up names instead."""
    openers = lexicon.phrases("follow_up", "openers")
    opens = any(padded(text).startswith(f" {o} ") for o in openers)
    if not (opens or len(text.split()) <= 3) or len(text.split()) > 6:
        return None
    earlier = split_parts(context.earlier[-1])[-1]
    before = understand(earlier)
    found = read_open(padded(earlier), before)
    current = understand(text)
    if not found or found[0] == "overview":
        return None
    if found[0] in ("sell", "uncovered") and current.tickers:
        kept = replace(before, text=text, tickers=current.tickers)
    elif found[0] not in ("sell", "uncovered") and (current.amounts or bare_amounts(text)):
        kept = replace(before, text=text, amounts=current.amounts or tuple(bare_amounts(text)))
    else:
        return None
    return Opened(found[0], kept, found[1])


def _open(text: str, context: Context) -> Task | None:
    question = understand(text, own=context.own)
    if not question.amounts and bare_amounts(text):
        question = replace(question, amounts=tuple(bare_amounts(text)))  # "afford 800 on a phone"
    found = read_open(padded(text), question)
    return Opened(found[0], question, found[1]) if found else None


def _computed(text: str, context: Context) -> Task | None:
    computation = read_computation(text)
    if computation is None or _a_rule_counted(text, computation, context.books):
        return None
    return Computed(computation)


def _a_rule_counted(text: str, computation: Computation, books: Library) -> bool:
    """Tell a rule a document answers, counted in days or dollars, from a count or an
    extreme over the user's accounts: "how many days before closing ...", "the most I'd
    have to pay if my card is stolen" (no account or balance named, no figure asked)."""
    if computation.op not in ("count", "highest", "lowest"):
        return False
    if {"account", "accounts", "balance", "balances"} & set(padded(text).split()):
        return False
    return not understand(text).intents and documentish(text) and bool(books.rank(text))


def figures(text: str, context: Context) -> Task:
    """The general task: figures the question names, a quote, or the documents it asks."""
    question = understand(text, own=context.own)
    if question.names_account:
        question = replace(question, intents=("balances",))  # "my Chase checking?"
    books = context.books
    hits = [] if question.intents and not question.advice else books.rank(text)
    if question.own and not set(words(text)) - STOPWORDS - GENERIC:
        hits = []  # "how much credit have I got left on it": the user's figures, no topic
    if not question.intents and not hits and question.maybe_accounts:
        # No document is about "my <something>": perhaps an account of that name.
        question = replace(question, intents=("balances",))
    return Figures(question, hits, context)


READERS: list[Callable[[str, Context], Task | None]] = [_scope, _follow_up, _open, _computed]


_ASIDES = frozenset(str(lexicon.table("parts")["asides"]).split())
_ELABORATIONS = lexicon.phrases("parts", "elaborations")


def questions_of(text: str) -> list[str]:
    """Return the message's questions: a part that only says "ok" is dropped, and one that
    elaborates the one before joins it: not a question and opening "Wondering when ...", or
    a question with no topic of its own ("how much?")."""
    parts = split_parts(text)
    kept: list[str] = []
    for part in parts:
        lead = padded(part)
        elaborates = not part.rstrip().endswith("?") and any(
            lead.startswith(f" {e} ") for e in _ELABORATIONS
        )
        if kept and (elaborates or set(lead.split()) <= STOPWORDS):
            kept[-1] = f"{kept[-1]} {part}"
        elif len(parts) == 1 or not set(lead.split()) <= _ASIDES:
            kept.append(part)
    return kept or parts


def tasks(text: str, context: Context) -> list[Task]:
    """Return one task per question of the message, in order."""
    found: list[Task] = []
    for number, part in enumerate(questions_of(text)):
        here = replace(context, first=number == 0)
        task = next((t for read in READERS if (t := read(part, here)) is not None), None)
        task = task or figures(part, here)
        if isinstance(task, Reply) and task in found:
            continue  # "... off the IRS radar? I don't want to report them": one decline
        found.append(task)
        if isinstance(task, Figures) and task.question.about_data:
            context = replace(context, own=True)
    return found


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
