"""A measure over every card with some of them supposed paid off: "what would my overall
credit utilization be if the Sapphire Preferred were paid off?" (what the cards owe less those
cleared, over all their limits), "what would I owe in total once the amex is cleared?". Today's
figures with the named cards at zero, each citing the cards it was computed from.
"""

from __future__ import annotations

import re

from .cite import Block
from .figures import Row
from .sides import Computation, describe, figure, measure_of, resolve, side
from .words import join_words, money, percent, sentence, words

_CLEARED = (
    r"(?:paid|pay|paying|cleared|clear|clearing|wiped|wipe|zeroed|zero|settled|settle|knocked"
    r"|killed|covered|cover)(?: off| out| down| to zero)?(?: in full| completely| entirely| fully)?"
)
# "if the sapphire were paid off", "once my amex is cleared", "with the citi card paid off"
_PASSIVE = re.compile(
    r"\b(?:if|once|after|when|with|suppose|supposing|say|assuming) (?P<b>.+?)"
    rf" (?:were|was|is|are|got|gets|had been|has been|have been|been|being)? ?{_CLEARED}\b"
)
# "if I paid off the sapphire", "once we clear the amex"
_ACTIVE = re.compile(
    r"\b(?:if|once|after|when|suppose|supposing|say|assuming) (?:i|we)"
    rf"(?: had| were to| was to| just| finally)? {_CLEARED} (?P<b>.+?)(?: off| in full)?"
    r"(?:,? (?:what|whats|how|hows|would|will|then|is|does|do|where)\b.*)?$"
)
_LIST = re.compile(r",? and |, | plus | as well as ")
_OWED = frozenset({"owe", "owed", "owing", "debt", "debts"})


def read_paid_off(text: str) -> Computation | None:
    """Return the cards' utilization (or what they owe) with the cards a condition names at
    zero, or None."""
    said = " ".join(words(text))
    match = _ACTIVE.search(said) or _PASSIVE.search(said)
    if match is None:
        return None
    # "what would my overall credit utilization be", before or after the condition
    after = match.end("b") if match.re is _ACTIVE else match.end()
    asked = f"{said[: match.start()]} {said[after:]}"
    measure = measure_of(side(asked), default="available")
    if measure != "utilization":
        # what the cards owe together ("my card debt", "what would I owe in total"), not
        # what one card named would owe
        on = re.search(r"\b(?:owe|owed|owing|debt) (?:on|at|to|with) (?P<what>.+)$", asked)
        named = on is not None and bool(side(on["what"]).institutions or side(on["what"]).names)
        if not _OWED & set(asked.split()) or named:
            return None
        measure = "balance"
    # "the sapphire and the citi": each card named
    cleared = tuple(side(p) for p in _LIST.split(match["b"]) if p.strip())
    for one in cleared:
        if not (one.kinds or one.institutions or one.names) or one.tickers:
            return None
        if one.kinds and set(one.kinds) != {"credit"}:
            return None  # "if the mortgage were paid off": no card's utilization
    return Computation("paid_off", (side("credit cards"), *cleared), measure) if cleared else None


def _key(row: Row) -> tuple[str | None, ...]:
    """One account, however many results show it (as `sides.distinct` tells them)."""
    return tuple(row.get(c) for c in ("account_name", "institution_name", "account_subtype"))


def write_paid_off(c: Computation, rows: list[Row]) -> list[Block]:
    """Write the measure today and with the named cards at zero, citing every card."""
    cards_side, *cleared_sides = c.sides
    cards = resolve(cards_side, rows)
    keys = {_key(r) for r in cards}
    named = {_key(r): r for one in cleared_sides for r in resolve(one, rows) if _key(r) in keys}
    cleared = list(named.values())
    cards = [r for r in cards if _key(r) not in {_key(k) for k in cleared}] + cleared
    if not cards or not cleared:
        missing = describe(cleared_sides[0] if cards else cards_side)
        return [(f"I couldn't find {missing} among your linked cards.", [])]
    cleared_labels = {r.label for r in cleared}
    owed = sum(figure(r, "balance") or 0.0 for r in cards)
    gone = sum(figure(r, "balance") or 0.0 for r in cleared)
    paid = join_words([f"{r.label} ({money(figure(r, 'balance') or 0.0)})" for r in cleared])
    cites = [r.cite for r in cards]
    lines: list[Block] = [
        (
            f"- {r.title}: {money(figure(r, 'balance') or 0.0)} owed"
            + (f" of a {money(figure(r, 'limit') or 0.0)} limit" if figure(r, "limit") else "")
            + (" (paid off in this what-if)" if r.label in cleared_labels else "")
            + "\n",
            [r.cite],
        )
        for r in cards
    ]
    if c.measure == "utilization":
        limits = sum(figure(r, "limit") or 0.0 for r in cards)
        if not limits:
            return [("None of your cards has a credit limit on record.", [])]
        said = (
            f"Your overall credit utilization is {percent(owed, limits)} today ({money(owed)}"
            f" owed on {money(limits)} of limits). With {paid} paid off, it would be"
            f" {percent(owed - gone, limits)} ({money(owed - gone)} owed)."
        )
    else:
        said = (
            f"You owe {money(owed)} on your cards today. With {paid} paid off, you would owe"
            f" {money(owed - gone)}."
        )
    return [(sentence(said) + "\n", cites), *lines]
