"""From a message to its answers: each question of the message becomes one task, which asks
the tools for what it needs and then writes its part of the answer from their results.

A task is anything with `calls()` and `write(results)` (`task.py`). `READERS` are tried in
order on each question; the first that returns a task takes it, and the figures-and-documents
task of `write.py` takes what none claims. A new kind of answer plugs in as one more reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from typing import cast

from . import lexicon
from .advice import advice_after, asks_judgement
from .after_bill import read_after_bill
from .ask import GENERIC, Extreme, documentish, understand
from .bill_months import read_bill_months
from .compute import read_computation
from .conversation import (
    combined,
    follow_up,
    previous_question,
    questions_of,
    split_parts,
    states,
    with_pointed,
)
from .documents_after import documents_after, ranked_after
from .guidance import Guided, read_guided, read_guided_after
from .judged import read_judged
from .kinds_compared import read_kinds_compared
from .library import Library
from .loan_terms import loan_terms_asked
from .overview import Open, asks_budget, read_open
from .pointing import back, resolved
from .projection import read_projection
from .refusal import continues
from .regular import read_regular, read_span
from .remarks import fragment, remark, said_again, tells_only
from .scope import declined, named_documents, out_of_scope, padded
from .sectors import read_sectors
from .sides import Computation, Op
from .standin import stand_in
from .task import Computed as Computed
from .task import Context as Context
from .task import Figures as Figures
from .task import Framed as Framed
from .task import Opened as Opened
from .task import Reply as Reply
from .task import Task as Task
from .whole import read_whole
from .words import STOPWORDS, bare_amounts, words

OPS = {op: tuple(cues) for op, cues in lexicon.table("operations").items()}
_COVERS = re.compile(
    r"\b(my|our) .*\b(cover|covers|pay for|stretch to|be enough for|enough for) (that|it|this)\b",
    re.IGNORECASE,
)
_POINTERS = lexicon.phrases("follow_up", "pronouns")


# A question about what a rule does to the user ("will my utilisation drag my score down?") is
# no forecast of prices, and one that says the score it fears for ("my credit score is
# tanking: is my card too high?") asks what the score weighs: the guided answers take both, and
# say themselves that the score isn't among the data, as the grace period's does of a card's
# due date and statement balance ("if I pay it in full by the due date, is there interest?").
_UNSEEN = ("credit score", "credit report", "statement details")  # what they say isn't held
_FORESEEN = frozenset(
    r.reply for r in lexicon.rules("scope") if r.kind in ("forecast", "projection", *_UNSEEN)
) | {
    str(held["reply"])
    for kind, held in lexicon.table("not_held").items()
    if kind in _UNSEEN and isinstance(held, dict) and "reply" in held
}


def _stand_in(text: str, context: Context) -> Task | None:
    """A document named that isn't held, answered from one that is (`standin.py`)."""
    if declined(text):
        return None
    found = stand_in(text, context.books)
    if found is None:
        return None
    note, hits = found
    question = replace(understand(text), intents=(), own=False)  # the documents answer it
    return Figures(question, hits, context, note)


def _guided(text: str, context: Context) -> Task | None:
    """A bundled page's rule set against the user's own figures (`guidance.py`)."""
    if stand_in(text, context.books):
        return None  # "compare pub 590-A and pub 590-B on early withdrawals": the documents
    said = out_of_scope(text, context.books)
    if said and said not in _FORESEEN:
        return None
    found = read_guided(text)
    if found is None and context.first and context.earlier:
        found = read_guided_after(text, context.earlier[-1])  # "and at wells fargo?"
    return replace(found, today=context.today) if found else None


def _declined(text: str, context: Context) -> Task | None:
    """A harmful request, or one about another person's accounts, declined before any reader
    takes its figures or sums ("hide some of my income ... so I pay less": no sum)."""
    said = declined(text)
    return Reply(said) if said else None


def _scope(text: str, context: Context) -> Task | None:
    said = out_of_scope(text, context.books)  # a loan's terms not held: with its payments
    return loan_terms_asked(text, context) or (Reply(said) if said else None)


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


def _kinds(text: str, context: Context) -> Task | None:
    """Kinds of investment set against each other: each one's value and share; the sectors
    of one's investments, which the data doesn't give, beside the holdings' shares."""
    return read_kinds_compared(text) or read_sectors(text)


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
    if computation.op not in _WHAT_IFS and not pointed:
        return None
    return _computed(text, context)


# The computations a what-if asks ("if I paid ...", "say I put $500 ..."): sums, not forecasts.
_WHAT_IFS = frozenset({"left", "minus", "total", "target", "rank", "move", "pay", "paid_off"})


def figures(text: str, context: Context) -> Task:
    """The general task: figures the question names, a quote, or the documents it asks."""
    question = understand(text, own=context.own)
    books = context.books
    named = named_documents(text, books)  # "what does section 121 say about my house?"
    if not named and (
        question.names_account
        or (
            not question.intents
            and (question.kinds or question.institutions)
            and _COVERS.search(text)
        )
    ):
        # "my Chase checking?"; "...and would my savings cover that?": what it holds
        question = replace(question, intents=("balances",))
    ranked = with_pointed(text, context.earlier) if context.first else text
    hits = [] if question.intents and not question.advice else books.rank(ranked)
    asks_more = not question.intents and context.first and not named
    after = ranked_after(text, context) if asks_more else []
    if hits and after:  # of what this question ranks alone, those the two together rank too
        after = [h for h in after if h.doc in {own.doc for own in hits}]
    hits = after or hits
    if not hits and not question.intents and asks_judgement(padded(text)) and ranked == text:
        # "Renting a car in Italy ... can I rely on my Sapphire?": advice whose setting
        # (Italy, the desk) no document names, ranked on the words the documents know (not
        # a part that points back: "which one moved more" has no setting, only "it").
        hits = books.rank(" ".join(w for w in words(text) if w in books.vocabulary))
    if question.own and not set(words(text)) - STOPWORDS - GENERIC:
        hits = []  # "how much credit have I got left on it": the user's figures, no topic
    if any(hit.doc in named for hit in hits):
        hits = [hit for hit in hits if hit.doc in named]  # "what does section 121 say ..."
    if not question.intents and not named:
        hits = documents_after(text, context, hits)
    if not question.intents and not hits and question.maybe_accounts and not named:
        # No document is about "my <something>": perhaps an account of that name.
        question = replace(question, intents=("balances",))
    earlier = split_parts(context.earlier[-1])[-1] if after or ranked != text else ""
    return Figures(question, hits, context, earlier=earlier)


def _projected(text: str, context: Context) -> Task | None:
    """A regular saving over a span, counted (`projection.py`); months of a bill a balance pays."""
    today = context.today or date.today()
    earlier = context.earlier if context.first else ()
    return read_projection(text, today) or read_bill_months(text, earlier, today)


def _regular(text: str, context: Context) -> Task | None:
    """A bill or pay over a span ("what does my rent add up to over twelve months?"), or what
    an account is left at once a bill comes out ("what's left in checking after rent?")."""
    earlier = context.earlier if context.first else ()
    today = context.today or date.today()
    return read_after_bill(text, earlier, today) or read_regular(text, earlier, today)


READERS: list[Callable[[str, Context], Task | None]] = [
    _declined,
    _projected,
    _regular,
    _stand_in,
    _guided,
    _what_if,
    _budget,
    _scope,
    _follow_up,
    _judged,
    _open,
    _kinds,
    _computed,
]


def _read(part: str, context: Context) -> Task:
    """The task of the first reader that takes the part, else the general one."""
    task = next((t for read in READERS if (t := read(part, context)) is not None), None)
    return task or figures(part, context)


def tasks(text: str, context: Context) -> list[Task]:
    """Return one task per question of the message, in order."""
    one = read_whole(text, context)
    if one is not None:
        return [one]
    # "how much of two paychecks is left after rent?": a sum over a span, no advice
    summed = read_span(text) is not None and _regular(text, context) is not None
    whole = None if summed else _guided(text, context)
    if isinstance(whole, Guided) and all(whole.covers(p) for p in split_parts(text)):
        return [whole]  # "how much can I put in i bonds, and what would that leave me?"
    found: list[Task] = []
    parts = questions_of(text)
    for number, part in enumerate(parts):
        here = replace(context, first=number == 0)
        if number and lexicon.has_phrase(padded(part), _POINTERS):
            # "amex balance? and how much credit have i got left on it": the earlier part's
            here = replace(here, first=True, earlier=(*context.earlier, *parts[:number]))
        task = _read(part, here)
        if found and states(part) and isinstance(task, Figures | Reply) and said_again(task):
            continue  # "net worth without the house? the house isn't liquid": said, not asked
        if found and fragment(part, task):
            # "how much is my rent again? the oakwood one": the question before, narrowed
            narrowed = f"{parts[number - 1]} {part}"
            again = _read(narrowed, replace(here, first=number == 1))
            if not fragment(narrowed, again) and len(found) == number:
                found[-1] = again
            continue
        if isinstance(task, Reply) and task in found:
            continue  # "... off the IRS radar? I don't want to report them": one decline
        if found and isinstance(found[-1], Reply) and continues(found[-1].text, padded(part)):
            continue  # "pull up her balance and what she spent": still her accounts
        joined = remark(part, task, found[-1] if found else None)
        if joined is not None:
            found[-1] = joined
            continue
        if found and isinstance(task, Figures) and tells_only(part, context.books.title_words):
            continue  # "whats my credit score? been meaning to check it": nothing more asked
        found.append(task)
        if isinstance(task, Figures) and task.question.about_data:
            context = replace(context, own=True)
    return found
