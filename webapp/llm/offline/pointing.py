"""Computations whose sides point back at the chat's earlier questions: "it" and "that" are
what the last question named ("how does that stack up against chase checking?", "how much
more till it's 20k?"); "the first" and "the second", "those two", are what the last two
questions named ("what fraction of the first is the second?", "the gap between those two").
Each side becomes the earlier question it points at, and the answer says what was assumed.
"""

from __future__ import annotations

import re
from dataclasses import replace

from . import lexicon
from .ask import Question
from .conversation import previous_question
from .sides import Computation, side
from .words import join_words, words

_PRONOUNS = frozenset(lexicon.phrases("follow_up", "pronouns"))
# Which of the last two questions an ordinal names, counted back from the latest.
_ORDINALS = {"first": 2, "former": 2, "earlier": 2, "second": 1, "latter": 1, "last": 1}
_FILLER = frozenset({"my", "the", "one", "figure", "number", "amount", "question", "balance"})
# "the gap between those two", "compare them", "the difference between the two"
_BOTH = re.compile(
    r" (?:gap|difference|differ|ratio) (?:between|of) (?:those|these|them|the|both)"
    r"(?: two| both| ones| figures| numbers| amounts| balances| accounts)? "
    r"| (?:compare|contrast) (?:those|these|them|the two|both)(?: two)? "
)
_NOUNS = {
    "credit": "credit card",
    "checking": "checking account",
    "savings": "savings account",
    "property": "home",
    "investment": "investment account",
    "retirement": "retirement account",
    "crypto": "crypto wallet",
}
_SMALL = frozenset({"of", "and", "the"})


def _title(name: str) -> str:
    """An institution as it is written: "Bank of America", "Wells Fargo"."""
    return " ".join(w if w in _SMALL else w.title() for w in name.split())


_MEASURES = {"net_worth": "net worth", "debts": "debts", "cash": "cash"}


def both_back(text: str) -> Computation | None:
    """ "what's the gap between those two": the last two questions' figures, compared."""
    if not _BOTH.search(" " + " ".join(words(text)) + " "):
        return None
    return Computation("difference", (side("the first"), side("the second")))


def back(one: Question) -> int | None:
    """How many questions back a side points (1: the last one), or None when it names its own."""
    said = [w for w in words(one.text) if w not in _FILLER]
    if len(said) == 1 and said[0] in _ORDINALS:
        return _ORDINALS[said[0]]
    text = one.text.removeprefix("my ").strip(" ?.!,")
    return 1 if text in _PRONOUNS or " ".join(said) in _PRONOUNS else None


def _named(q: Question) -> str:
    """What an earlier question was about, in a few words: "your Chase savings account"."""
    kinds = join_words([_NOUNS.get(k, k) for k in q.kinds])
    if q.institutions and not kinds:
        kinds = "accounts" if len(q.institutions) > 1 else "account"
    places = join_words([_title(n) for n in q.institutions])
    named = " ".join(w for w in (places, kinds) if w)
    named = named or join_words([n.title() for n in q.names])
    if not named:
        named = join_words([_MEASURES[i] for i in q.intents if i in _MEASURES])
    return f"your {named}" if named else ""


def resolved(computation: Computation, earlier: tuple[str, ...]) -> Computation | None:
    """The computation with each side that points back replaced by the question it points at
    (None when the chat has no such question about the user's figures)."""
    sides: list[Question] = []
    said: list[tuple[int, str]] = []
    for one in computation.sides:
        at = back(one)
        if at is None:
            sides.append(one)
            continue
        if len(earlier) < at:
            return None
        asked = previous_question(earlier[: len(earlier) - at + 1])
        name = _named(asked) if asked else ""
        if asked is None or not name:
            return None
        text = "my " + " ".join(asked.names) if asked.names else asked.text
        sides.append(replace(asked, text=text, extreme=None))
        word = " ".join(w for w in words(one.text) if w != "my")
        said.append((-at, f'"{word}" as {name}'))
    span = "last question" if all(back(s) in (1, None) for s in computation.sides) else "last two"
    told = [t for _, t in sorted(said)]  # "the first" before "the second"
    note = f"Taking {join_words(list(dict.fromkeys(told)))}, from your {span}" + (
        ":" if span == "last question" else " questions:"
    )
    return replace(computation, sides=tuple(sides), note=note)


def named_as(asked: Question) -> str:
    """What an earlier question was about, as a pointed side is said to be taken as."""
    return _named(asked)
