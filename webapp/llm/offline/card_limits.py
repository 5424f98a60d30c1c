"""One card's credit limit, named ("Amex limit?"), and utilization after a charge or a payment
the question supposes ("what would my utilisation be if I put another $1,000 on the card?"),
each figure citing the card rows it is computed from."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .cite import Block
from .words import money, percent, sentence

if TYPE_CHECKING:
    from .figures import Row

# "if I put another $1,000 on the card", "if I paid $300 off": a charge or payment supposed.
_SUPPOSED = re.compile(
    r"\b(?:if|suppose|say|after|once) (?:i|we) (?:(?P<pay>paid|pay|cleared|clear|knocked)"
    r"|put|charge|charged|spend|spent|add|added|ran up|run up|bought|buy|stick|stuck|made)\b"
)


def one_limit(card: Row, used: float, limit: float) -> list[Block]:
    """A card's limit, what is owed on it and what is left."""
    return [
        (
            sentence(
                f"{card.label} has a credit limit of {money(limit, card.currency)}: you owe"
                f" {money(used, card.currency)} on it ({percent(used, limit)} of the limit),"
                f" leaving {money(limit - used, card.currency)} available.\n"
            ),
            [card.cite],
        )
    ]


def supposed(
    text: str, amounts: tuple[float, ...], used: float, limits: float, cards: list[Row]
) -> list[Block]:
    """Utilization after the one charge or payment the question supposes, of the same cards."""
    found = _SUPPOSED.search(text.lower())
    if not found or len(amounts) != 1 or not limits:
        return []
    amount = amounts[0]
    after = max(used - amount, 0.0) if found["pay"] else used + amount
    verb = "paid off" if found["pay"] else "put another"
    where = ("off" if found["pay"] else "on") + (" it" if len(cards) == 1 else " them")
    return [
        (
            f"If you {verb} {money(amount)} {where}, you would owe {money(after)} against"
            f" {money(limits)}: {percent(after, limits)} utilization.\n",
            [c.cite for c in cards],
        )
    ]
