"""The answers of a computation over one side: its highest or lowest account ("which of my
bank accounts has the least money in it"), and how many accounts (or holdings) it holds. Each
figure cites the rows it came from.
"""

from __future__ import annotations

from .cite import Block
from .figures import Row
from .sides import Computation, figure, resolve, shown
from .words import count_of, join_words, money, percent, sentence, words

# How the answers name a kind of account, in the plural.
NOUNS = {
    "credit": "credit cards",
    "checking": "checking accounts",
    "savings": "savings accounts",
    "depository": "bank accounts",
    "investment": "investment accounts",
    "loan": "loans",
}
_HOLDS_MONEY = frozenset({"money", "cash", "funds"})
_WHAT = {"balance": "balance", "limit": "credit limit", "available": "available credit"}


def _pool(c: Computation, rows: list[Row]) -> list[Row]:
    """The side's accounts that have the measured figure on record."""
    (one,) = c.sides
    pool = [r for r in resolve(one, rows) if figure(r, c.measure) is not None]
    if _HOLDS_MONEY & set(words(one.text)) and "credit" not in one.kinds:
        pool = [r for r in pool if not r.owed]  # "the most money in it": no card holds any
    return pool


def write_extreme(c: Computation, rows: list[Row]) -> list[Block]:
    """The side's account with the highest (lowest) figure, then each of them in order."""
    (one,) = c.sides
    pool = _pool(c, rows)
    if not pool:
        return [("None of your linked accounts has that on record.", [])]
    ranked = sorted(pool, key=lambda r: figure(r, c.measure) or 0.0, reverse=c.op == "highest")
    top = ranked[0]
    noun = join_words([NOUNS.get(k, k) for k in one.kinds]) or "accounts"
    what = _WHAT.get(c.measure, "utilization")
    blocks: list[Block] = [
        (
            sentence(
                f"{top.label} has the {c.op} {what} of your {noun}: {shown(top, c.measure)}.\n"
            ),
            [top.cite],
        )
    ]
    blocks += [(f"- {r.title}: {shown(r, c.measure)}\n", [r.cite]) for r in ranked]
    return blocks


def write_average(c: Computation, rows: list[Row]) -> list[Block]:
    """The side's accounts' mean figure: their sum over how many they are, each cited."""
    (one,) = c.sides
    pool = _pool(c, rows)
    if not pool:
        return [("None of your linked accounts has that on record.", [])]
    values = [figure(r, c.measure) or 0.0 for r in pool]
    noun = join_words([NOUNS.get(k, k) for k in one.kinds]) or "accounts"
    what = _WHAT.get(c.measure, "utilization")
    count = count_of(len(pool), noun.rstrip("s") if len(pool) == 1 else noun, noun)
    mean = sum(values) / len(values)
    said = percent(mean, 1.0) if c.measure == "utilization" else money(mean)
    summed = "" if c.measure == "utilization" else f": {money(sum(values))} over {count}"
    blocks: list[Block] = [
        (f"The average {what} of your {noun} is {said}{summed}.\n", [r.cite for r in pool])
    ]
    blocks += [(f"- {r.title}: {shown(r, c.measure)}\n", [r.cite]) for r in pool]
    return blocks


def write_count(c: Computation, rows: list[Row]) -> list[Block]:
    """How many accounts the side names (or holdings the user has), and which."""
    if c.over == "holdings":
        held = [r for r in rows if r.get("ticker")]
        tickers = list(dict.fromkeys(str(r.get("ticker")) for r in held))
        if not tickers:
            return [("You have no investment holdings linked.", [])]
        listed = join_words(tickers)
        return [
            (f"You have {count_of(len(tickers), 'holding')}: {listed}.", [r.cite for r in held])
        ]
    (one,) = c.sides
    found = resolve(one, rows)
    noun = join_words([NOUNS.get(k, k) for k in one.kinds]) or "accounts"
    names = join_words([r.label for r in found])
    count = count_of(len(found), noun.rstrip("s") if len(found) == 1 else noun, noun)
    return [(f"You have {count}{': ' + names if names else ''}.", [r.cite for r in found])]
