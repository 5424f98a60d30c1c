"""The user's figures a guided answer may bring in (`guidance.toml`'s [figure.*]), and whether
a question needs one or only names it.

A figure is needed when the question asks something it answers: a measure of it ("what's on
the card", "how much did they charge"), a judgement it weighs ("can I afford", "would that
leave me"), or an operation it is an operand of (a share of the pay the question states). A
figure the question only names as context (the card a purchase went on, the shop whose charge
it means, the pay whose schedule it states itself) is not: the answer gives the rule from the
page and may name the account in words, but neither states its figures nor cites them. Which
of a figure's signals only name it is the figure's data (`names`, `context`); what asks of a
thing only named (`asks`), and what the question can state itself so that the rows are not
needed for it (`stated`), are too.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from . import lexicon
from .ask import Question
from .charges import payee_words
from .scope import padded
from .words import bare_amounts, stem

DATA: dict[str, Any] = tomllib.loads(
    Path(__file__).with_name("guidance.toml").read_text(encoding="utf-8")
)
# A question about where the person stands: "am I past", "can we", "how close am I".
_JUDGED = re.compile(
    r" (am|do|can|could|should|would|will|have|did|must) (i|we) "
    r"| (i|we) (am|have|had|need|should|could|would|can|will|might) | im "
)
# How a question reads a figure: it needs the figure, or only names it.
Reading = Literal["needed", "named"]


def stemmed(text: str) -> str:
    """Return a phrase's words as stems, single-spaced and padded ("is it insured" ->
    " is it insur ")."""
    return " " + " ".join(stem(w) for w in padded(text).split()) + " "


def stems(phrases: list[str]) -> tuple[str, ...]:
    return tuple(stemmed(p).strip() for p in phrases)


def money_said(question: Question) -> list[float]:
    """Return the amounts a question names: "$2k", "7k", or a bare "2850" that is no year
    and no age."""
    if question.amounts:
        return list(question.amounts)
    return [a for a in bare_amounts(question.text) if a >= 100 and a not in question.years]


@dataclass(frozen=True, slots=True)
class Figure:
    """One of the user's figures, and how a question speaks of it."""

    words: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    institutions: bool = False
    amount: bool = False
    needs_kind: tuple[str, ...] = ()
    rows: str = ""
    narrow: bool | str = False
    flows: str = ""
    judged: bool = False
    tickers: bool = False  # a ticker the question names speaks of it ("my AAPL")
    payee: bool = False  # a charge named by its payee speaks of it ("the hulu charge")
    told: re.Pattern[str] | None = None  # over the words as said, tense and all ("I booked")
    names: tuple[str, ...] = ()  # phrases that only name it ("paycheck"), stemmed
    context: tuple[str, ...] = ()  # of its signals ("told", "payee"), those that only name it
    # What asks of it when it is only named: groups of patterns over the words as said, each
    # of a group to be found ("how much did they charge"; "don't recognise" + "what do I do").
    asks: tuple[tuple[re.Pattern[str], ...], ...] = ()
    # What the question may state itself of what its rows tell ("paid every two weeks"):
    # named without it, the rows are needed to tell it.
    stated: re.Pattern[str] | None = None

    def _signals(self, said: str, question: Question) -> set[str]:
        text = padded(question.text)
        found = {
            "words": lexicon.has_phrase(said, self.words),
            "names": lexicon.has_phrase(said, self.names),
            "told": bool(self.told and self.told.search(text)),
            "kinds": bool(set(self.kinds) & set(question.kinds)),
            "institutions": self.institutions and bool(question.institutions),
            "amount": self.amount and bool(money_said(question)),
            "tickers": self.tickers and bool(question.tickers),
            "payee": self.payee and bool(payee_words(question.text)),
            "judged": self.judged and _JUDGED.search(text) is not None,
        }
        return {name for name, present in found.items() if present}

    def reading(self, said: str, question: Question) -> Reading | None:
        """Tell whether the question needs this figure, only names it, or neither."""
        if self.needs_kind and not set(self.needs_kind) & set(question.kinds):
            return None
        signals = self._signals(said, question)
        if signals - {"names", *self.context}:
            return "needed"
        if not signals:
            return None
        text = padded(question.text)
        if any(all(p.search(text) for p in group) for group in self.asks):
            return "needed"  # "how much did hulu charge me": the charge's own figure
        if self.stated and not self.stated.search(text):
            return "needed"  # "how much per paycheck?": the rows tell how often pay comes
        return "named"

    def spoken_of(self, said: str, question: Question) -> bool:
        """Tell whether the question speaks of this figure, needing it or naming it."""
        return self.reading(said, question) is not None


def _patterns(groups: list[str | list[str]]) -> tuple[tuple[re.Pattern[str], ...], ...]:
    return tuple(tuple(re.compile(p) for p in ([g] if isinstance(g, str) else g)) for g in groups)


FIGURES = {
    name: Figure(
        stems(list(f.get("words", ()))),
        tuple(map(str, f.get("kinds", ()))),
        bool(f.get("institutions", False)),
        bool(f.get("amount", False)),
        tuple(map(str, f.get("needs_kind", ()))),
        str(f.get("rows", "")),
        f.get("narrow", False),
        str(f.get("flows", "")),
        bool(f.get("judged", False)),
        bool(f.get("tickers", False)),
        bool(f.get("payee", False)),
        re.compile(str(f["told"])) if "told" in f else None,
        stems(list(f.get("names", ()))),
        tuple(map(str, f.get("context", ()))),
        _patterns(list(f.get("asks", ()))),
        re.compile(str(f["stated"])) if "stated" in f else None,
    )
    for name, f in DATA["figure"].items()
}
