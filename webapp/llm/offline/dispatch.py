"""From a message to its answers: each question of the message becomes one task, which asks
the tools for what it needs and then writes its part of the answer from their results.

A task is anything with `calls()` and `write(results)` (`task.py`). `READERS` are tried in
order on each question; the first that returns a task takes it, and the figures-and-documents
task of `write.py` takes what none claims. A new kind of answer (spending, say) plugs in as one more
reader, ahead of the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import cast

from . import lexicon
from .advice import advice_after, asks_judgement
from .ask import GENERIC, Extreme, documentish, understand
from .cite import Block, Result
from .compute import read_computation
from .conversation import combined, follow_up, previous_question, questions_of, split_parts
from .guidance import Guided, read_guided, read_guided_after
from .judged import read_judged
from .library import Library
from .overview import Open, asks_budget, read_open
from .plan import ToolCall
from .pointing import back, resolved
from .refusal import continues
from .regular import read_regular
from .scope import out_of_scope, padded
from .sides import Computation, Op
from .task import Computed as Computed
from .task import Context as Context
from .task import Figures as Figures
from .task import Framed as Framed
from .task import Opened as Opened
from .task import Reply as Reply
from .task import Task as Task
from .windfall import Windfall, read_windfall
from .words import STOPWORDS, bare_amounts, words
from .write import NOT_FOUND, OUT_OF_SCOPE

OPS = {op: tuple(cues) for op, cues in lexicon.table("operations").items()}
_COVERS = re.compile(
    r"\b(my|our) .*\b(cover|covers|pay for|stretch to|be enough for|enough for) (that|it|this)\b",
    re.IGNORECASE,
)
_POINTERS = lexicon.phrases("follow_up", "pronouns")
# How far the user is from what the open question before set out: "how far off am I?"
_GAP = re.compile(r"\bhow (far|close|short|near|much more|much short) .*\b(i|im|we|me)\b", re.I)
# A remark's first word that points back at the question before: "that's most of my checking".
_POINTING = ("that", "thats", "it", "its", "this", "feels", "seems", "since", "because")


# A question about what a rule does to the user ("will my utilisation drag my score down?") is
# no forecast of prices, and one that says the score it fears for ("my credit score is
# tanking: is my card too high?") asks what the score weighs: the guided answers take both, and
# say themselves that the score isn't among the data.
_UNSEEN = ("credit score", "credit report")  # data the guided answers say they don't hold
_FORESEEN = frozenset(
    r.reply for r in lexicon.rules("scope") if r.kind in ("forecast", "projection", *_UNSEEN)
) | {
    str(held["reply"])
    for kind, held in lexicon.table("not_held").items()
    if kind in _UNSEEN and isinstance(held, dict) and "reply" in held
}


def _guided(text: str, context: Context) -> Task | None:
    """A bundled page's rule set against the user's own figures (`guidance.py`)."""
    said = out_of_scope(text, context.books)
    if said and said not in _FORESEEN:
        return None
    found = read_guided(text)
    if found is None and context.first and context.earlier:
        found = read_guided_after(text, context.earlier[-1])  # "and at wells fargo?"
    return replace(found, today=context.today) if found else None


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
    if last and last.about_data and op and len(text.split()) <= 6:
        end: Extreme = "most" if op == "highest" else "least"
        if end != last.extreme:  # "What's my biggest debt?", "and the smallest?"
            return Figures(replace(last, text=text, extreme=end), [], context, "")
    again = _open_again(text, context) or _advice_again(text, context)
    if again:
        return again
    found = combined(text, context.earlier) or follow_up(text, last)
    if found is None:
        return None
    question, note = found
    return Figures(question, [], context, note)


def _judged(text: str, context: Context) -> Task | None:
    """ "Is that decent for my age?" after "what's my net worth?": its figures, judged."""
    if not context.first or not context.earlier:
        return None
    last = previous_question(context.earlier)
    found = read_judged(text, last)
    if found is None or last is None:
        return None
    return Framed(Figures(last, [], context), *found)


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
    return Opened(found[0], kept, found[1], context.today)


def _advice_again(text: str, context: Context) -> Task | None:
    """Advice asked of what the last question was about ("if I can only clear one of them,
    which one?" after "how much do I owe on my cards?"), which this one points back at."""
    phrase = padded(text)
    if not lexicon.has_phrase(phrase, lexicon.phrases("follow_up", "pronouns")):
        return None
    current, last = understand(text), previous_question(context.earlier)
    if last is None or read_open(phrase, current):
        return None
    kind = advice_after(phrase, current, last)
    if kind is None:
        return None
    kept = replace(last, text=text, amounts=current.amounts or last.amounts)
    return Opened(cast(Open, kind), kept, "", context.today)


def _budget(text: str, context: Context) -> Task | None:
    """A budget asked for ("help me put a budget together"), before "put" reads as a transfer."""
    if not asks_budget(padded(text)):
        return None
    return Opened("budget", understand(text, own=context.own), "", context.today)


def _open(text: str, context: Context) -> Task | None:
    question = understand(text, own=context.own)
    if not question.amounts and bare_amounts(text):
        question = replace(question, amounts=tuple(bare_amounts(text)))  # "afford 800 on a phone"
    found = read_open(padded(text), question)
    return Opened(found[0], question, found[1], context.today) if found else None


def _computed(text: str, context: Context) -> Task | None:
    computation = read_computation(text)
    if computation is None or _a_rule_counted(text, computation, context.books):
        return None
    if any(back(s) is not None for s in computation.sides):
        # "if I paid it off from checking", "what fraction of the first is the second"
        pointed = resolved(computation, context.earlier) if context.first else None
        return Computed(pointed) if pointed else None
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


def _what_if(text: str, context: Context) -> Task | None:
    """ "If I paid my visa off from checking, what would be left?": a sum, not a forecast."""
    computation = read_computation(text)
    if computation is None:
        return None
    pointed = any(back(s) is not None for s in computation.sides)
    if computation.op not in ("left", "minus", "total", "target", "rank", "move") and not pointed:
        return None
    return _computed(text, context)


def figures(text: str, context: Context) -> Task:
    """The general task: figures the question names, a quote, or the documents it asks."""
    question = understand(text, own=context.own)
    if question.names_account or (
        not question.intents and (question.kinds or question.institutions) and _COVERS.search(text)
    ):
        # "my Chase checking?"; "...and would my savings cover that?": what it holds
        question = replace(question, intents=("balances",))
    books = context.books
    hits = [] if question.intents and not question.advice else books.rank(text)
    if not hits and not question.intents and asks_judgement(padded(text)):
        # "Renting a car in Italy ... can I rely on my Sapphire?": advice whose setting
        # (Italy, the desk) no document names, ranked on the words the documents know.
        hits = books.rank(" ".join(w for w in words(text) if w in books.vocabulary))
    if question.own and not set(words(text)) - STOPWORDS - GENERIC:
        hits = []  # "how much credit have I got left on it": the user's figures, no topic
    if not question.intents and not hits and question.maybe_accounts:
        # No document is about "my <something>": perhaps an account of that name.
        question = replace(question, intents=("balances",))
    return Figures(question, hits, context)


def _regular(text: str, context: Context) -> Task | None:
    """A bill or pay over a span ("what does my rent add up to over twelve months?")."""
    earlier = context.earlier if context.first else ()
    return read_regular(text, earlier, context.today or date.today())


READERS: list[Callable[[str, Context], Task | None]] = [
    _regular,
    _guided,
    _what_if,
    _budget,
    _scope,
    _follow_up,
    _judged,
    _open,
    _computed,
]


def _remark(part: str, task: Task, before: Task | None) -> Opened | None:
    """The open question a part goes with, when the part adds to it rather than asking
    anew: a remark that asks nothing of its own ("feels like too much riding on one
    company", "that's most of my checking"), or the same open question again ("and is what
    I've got enough?"), or an amount-less "can I afford it" after advice. The question is
    read again with the remark, which may name the account meant."""
    if not isinstance(before, Opened):
        return None
    asked = before.question
    again = understand(f"{asked.text} {part}")
    joined = replace(
        before,
        question=replace(
            again,
            kinds=tuple(dict.fromkeys(asked.kinds + again.kinds)),
            tickers=asked.tickers or again.tickers,
            amounts=asked.amounts or again.amounts,
        ),
    )
    if isinstance(task, Opened):
        same = task.kind == before.kind
        return joined if same or (task.kind == "afford" and not task.question.amounts) else None
    if isinstance(task, Figures) and not task.question.about_data and _GAP.search(part):
        return joined  # "..., and how far off am I right now?": the distance to its target
    if part.rstrip().endswith("?"):
        return None
    if lexicon.has_phrase(padded(part.split()[0]), _POINTING):
        return joined
    if not isinstance(task, Figures):
        return None
    if not task.calls() and task.direct() in (NOT_FOUND, OUT_OF_SCOPE):
        return joined
    named = task.question.kinds or task.question.institutions or task.question.tickers
    return joined if not (named or task.question.amounts) else None


def tasks(text: str, context: Context) -> list[Task]:
    """Return one task per question of the message, in order."""
    came_in = read_windfall(text)
    if came_in is not None:  # "a $3,000 bonus: what's the most sensible thing to do with it?"
        return [Windfall(text, came_in, context.today)]
    whole = _guided(text, context)
    if isinstance(whole, Guided) and all(whole.covers(p) for p in split_parts(text)):
        return [whole]  # "how much can I put in i bonds, and what would that leave me?"
    found: list[Task] = []
    parts = questions_of(text)
    for number, part in enumerate(parts):
        here = replace(context, first=number == 0)
        if number and lexicon.has_phrase(padded(part), _POINTERS):
            # "amex balance? and how much credit have i got left on it": the earlier part's
            here = replace(here, first=True, earlier=(*context.earlier, *parts[:number]))
        task = next((t for read in READERS if (t := read(part, here)) is not None), None)
        task = task or figures(part, here)
        if isinstance(task, Reply) and task in found:
            continue  # "... off the IRS radar? I don't want to report them": one decline
        if found and isinstance(found[-1], Reply) and continues(found[-1].text, padded(part)):
            continue  # "pull up her balance and what she spent": still her accounts
        joined = _remark(part, task, found[-1] if found else None)
        if joined is not None:
            found[-1] = joined
            continue
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
