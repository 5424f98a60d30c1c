"""How far each card is below a utilization line the person names ("how much more can I put on
my cards before I go over 30% of the limit", "room left before I cross 10 percent
utilisation"): the line's share of each card's limit less what is owed on it. Each card's
figure cites that card's own rows.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .cite import Block
from .figures import Row
from .sides import Computation, figure, resolve, side
from .words import a_or_an, money, words

# "30 percent of the limit", "10 percent utilisation", "the 30 percent mark", "under 30
# percent": a percent said with a limit, utilization or a line to stay below.
_PERCENT = re.compile(r" (?P<pct>\d{1,2}(?:\.\d+)?) percent ")
_LINE = re.compile(
    r" (?:utili[sz]ation|utili[sz]ed|usage|limits?|credit line|mark|line|threshold|cap) "
)
# What asks for the distance to it: room, how much more, before reaching it, staying under.
_ROOM = re.compile(
    r" (?:room|headroom|how much (?:more|further|extra)|before|until|till|under|below|stay"
    r"|keep|without (?:going|crossing|passing|hitting)) "
)


def read_line(text: str) -> Computation | None:
    """Return the distance to a utilization line the question names, or None."""
    phrase = " " + " ".join(words(text)) + " "
    found = _PERCENT.search(phrase)
    if not found or not _LINE.search(phrase) or not _ROOM.search(phrase):
        return None
    one = side(text)
    cards = (
        "credit" in one.kinds
        or one.institutions
        or re.search(r" (?:card|cards|credit|utili[sz]ation) ", phrase)
    )
    if one.tickers or not cards:
        return None
    if not (one.kinds or one.institutions or one.names):
        one = replace(one, kinds=("credit",))
    return Computation("line", (one,), "utilization", goal=float(found["pct"]))


def write_line(c: Computation, rows: list[Row]) -> list[Block]:
    """Each card's room below the line: the line's share of its limit less what it owes."""
    (one,) = c.sides
    pct = c.goal or 0.0
    cards = [r for r in resolve(one, rows) if figure(r, "limit")]
    if not cards:
        return [("None of your linked cards has a credit limit on record.", [])]
    blocks: list[Block] = []
    for card in cards:
        limit, owed = figure(card, "limit") or 0.0, figure(card, "balance") or 0.0
        line = limit * pct / 100
        room = line - owed
        said = (
            f"you could put {money(room)} more on it before going over"
            if room >= 0
            else f"you are already {money(-room)} over"
        )
        blocks.append(
            (
                f"- {card.title}: {money(owed)} owed of {a_or_an(money(limit))} {money(limit)}"
                f" limit; {pct:g}% of the limit is {money(line)}, so {said} that line.\n",
                [card.cite],
            )
        )
    head = (
        f"At {pct:g}% utilization, each card's line is {pct:g}% of its credit limit; the room"
        " below it is that amount less what you owe on the card now."
    )
    if len(cards) == 1:
        head = f"{pct:g}% utilization is {pct:g}% of your card's credit limit."
    return [(head + "\n", []), *blocks]
