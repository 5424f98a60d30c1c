"""The gap between an account and a target the person names ("I'm aiming for 25k in savings,
how far short am I?", "how much do I need to add to checking to have 5 grand in there", "how
much more till it's 20k?"), and the user's accounts ranked by what they measure ("rank my
cards by what I owe, biggest first"). Each account's figure cites that account's own rows.
"""

from __future__ import annotations

import re

from .cite import Block
from .figures import Row
from .sides import Computation, Measure, describe, figure, measure_of, resolve, shown, side
from .words import amounts, join_words, money, words

# What asks for the distance to an amount: "how far short", "how much more till", "need to
# add ... to have", "left to go", "away from".
_GAP = re.compile(
    r" how far (?:\S+ ){0,2}(?:short|off|away|behind|from) | short of"
    r" | how much (?:more|further|extra|else) | (?:need|have|got) to (?:add|put|save|deposit"
    r"|find|top up|get)\b| to go | left to"
    r" (?:reach|hit|save|go|get)| away from | gap (?:to|between \S+ and) | shortfall "
)
_PRONOUN = re.compile(r" (?:it|its|that|this|there|them) ")
# What asks for a ranking: "rank", "sort", "in order", "biggest first", "largest to smallest".
_RANK = re.compile(
    r" (?:rank|ranked|ranking|sort|sorted|order|ordered|in order) |"
    r" (?:biggest|largest|highest|most|smallest|lowest|least) (?:first|to (?:the )?"
    r"(?:smallest|lowest|least|biggest|largest|highest|most)) "
)
_ASCENDING = re.compile(
    r" (?:smallest|lowest|least) (?:first|to )| ascending"
    r" | from (?:the )?(?:smallest|lowest|least) "
)
_NOUNS = {
    "credit": "cards",
    "checking": "checking accounts",
    "savings": "savings accounts",
    "depository": "bank accounts",
    "investment": "investment accounts",
    "loan": "loans",
}
_ACCOUNT_WORDS = frozenset({"account", "accounts", "card", "cards", "balances"})


def read_goal(text: str) -> Computation | None:
    """Return the gap to a target, or a ranking, the question asks of the user's accounts."""
    phrase = " " + " ".join(words(text)) + " "
    found = amounts(text)
    if _GAP.search(phrase) and len(found) == 1:
        one = side(text)
        if one.tickers:
            return None
        if not (one.kinds or one.institutions) and _PRONOUN.search(phrase):
            one = side("it")  # "how much more till it's 20k?": the last question's account
        elif not (one.kinds or one.institutions):
            return None
        return Computation("target", (one,), goal=found[0])
    if _RANK.search(phrase):
        one = side(text)
        if one.tickers or not (one.kinds or _ACCOUNT_WORDS & set(phrase.split())):
            return None
        measure = measure_of(one)
        ascending = bool(_ASCENDING.search(phrase))
        measure = measure if measure != "cash" else "balance"
        return Computation("rank", (one,), measure, ascending=ascending)
    return None


def _line(row: Row, measure: Measure = "balance") -> str:
    owed = " owed" if row.owed and measure == "balance" else ""
    return f"- {row.title}: {shown(row, measure)}{owed}\n"


def write_goal(c: Computation, rows: list[Row]) -> list[Block]:
    """Write the gap to the target, or the ranking, each figure citing its own account."""
    (one,) = c.sides
    note: list[Block] = [(c.note + "\n", [])] if c.note else []
    if c.op == "rank":
        pool = [r for r in resolve(one, rows) if figure(r, c.measure) is not None]
        if not pool:
            return [*note, ("None of your linked accounts has that on record.", [])]
        ranked = sorted(pool, key=lambda r: figure(r, c.measure) or 0.0, reverse=not c.ascending)
        what = {"limit": "credit limit", "available": "available credit"}.get(
            c.measure, "utilization" if c.measure == "utilization" else "balance"
        )
        if c.measure == "balance" and all(r.owed for r in ranked):
            what = "what you owe"
        end = "smallest" if c.ascending else "largest"
        noun = join_words([_NOUNS.get(k, k) for k in one.kinds]) or "accounts"
        head = f"Your {noun} by {what}, {end} first:\n"
        return [
            *note,
            (head, [r.cite for r in ranked]),
            *((_line(r, c.measure), [r.cite]) for r in ranked),
        ]
    found = resolve(one, rows)
    if not found or c.goal is None:
        return [*note, (f"I couldn't find {describe(one)} among your linked accounts.", [])]
    have = sum(figure(r, "balance") or 0.0 for r in found)
    named = join_words([r.label for r in found])
    cites = [r.cite for r in found]
    goal = money(c.goal)
    if have < c.goal:
        said = (
            f"You have {money(have)} in {named}: {money(c.goal - have)} short of {goal}, so"
            f" that is what you would need to add to reach it."
        )
    else:
        said = f"You have {money(have)} in {named}: already {money(have - c.goal)} over {goal}."
    lines: list[Block] = [(_line(r), [r.cite]) for r in found] if len(found) > 1 else []
    return [*note, (said + "\n", cites), *lines]
