"""Parts of a message that add to the one before rather than asking anew: a remark on an
open question ("feels like too much riding on one company"), a fragment that narrows the
question before it ("the oakwood one"), a statement of how things are that asks nothing
("the house isn't really liquid"), a part that only tells ("been meaning to check it for like
a year"). `dispatch.tasks` joins, narrows or drops them."""

from __future__ import annotations

import re
from dataclasses import replace

from . import lexicon
from .ask import understand
from .conversation import asks
from .scope import held_of_own, padded
from .task import Figures, Opened, Reply, Task
from .words import STOPWORDS, words
from .write import NOT_FOUND, OUT_OF_SCOPE

# How far the user is from what the open question before set out: "how far off am I?"
_GAP = re.compile(r"\bhow (far|close|short|near|much more|much short) .*\b(i|im|we|me)\b", re.I)
# A remark's first word that points back at the question before: "that's most of my checking".
_POINTING = ("that", "thats", "it", "its", "this", "feels", "seems", "since", "because")


def remark(part: str, task: Task, before: Task | None) -> Opened | Reply | None:
    """The open question a part goes with, when the part adds to it rather than asking
    anew: a remark that asks nothing of its own ("feels like too much riding on one
    company", "that's most of my checking"), or the same open question again ("and is what
    I've got enough?"), or an amount-less "can I afford it" after advice. The question is
    read again with the remark, which may name the account meant. After a plain reply
    (a document or data not held), a figure asked of no one ("what's the penalty APR?") is
    the user's own, which the linked data doesn't hold either: said in the same reply."""
    if isinstance(before, Reply):
        held = held_of_own(part)
        return Reply(f"{before.text} {held}") if held and held not in before.text else None
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


def fragment(part: str, task: Task) -> bool:
    """A part that asks nothing it could be answered on alone ("the oakwood one")."""
    if part.rstrip().endswith("?") or not isinstance(task, Figures | Reply):
        return False
    if isinstance(task, Reply):
        return task.text in (NOT_FOUND, OUT_OF_SCOPE)
    return not task.calls() and task.direct() in (NOT_FOUND, OUT_OF_SCOPE)


def said_again(task: Figures | Reply) -> bool:
    """A remark's figures: its accounts read again, or nothing found."""
    if isinstance(task, Figures) and task.question.about_data:
        return True
    return fragment("", task)


def tells_only(part: str, topics: frozenset[str]) -> bool:
    """Tell a later part that asks nothing ("been meaning to check it for like a year", "be
    honest lol"): no question or request, no figure of the user's, none of `topics` (the
    words documents are titled by: "and the apr on it?" asks, elliptically). It gets no
    answer of its own, not even the passages its words happen to share."""
    if asks(part):
        return False
    said = understand(part)  # its own words, not "my landlord" taken for an account's name
    return not (said.intents or said.tickers or (set(words(part)) - STOPWORDS) & topics)
