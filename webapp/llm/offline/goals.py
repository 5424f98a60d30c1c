"""The gap between an account and a target the person names ("I'm aiming for 25k in savings,
how far short am I?", "how much do I need to add to checking to have 5 grand in there", "how
much more till it's 20k?"), and the user's accounts ranked by what they measure ("rank my
cards by what I owe, biggest first"). Each account's figure cites that account's own rows.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .ask import tickers_in
from .cite import Block, number
from .figures import Row
from .sides import (
    Computation,
    Measure,
    describe,
    figure,
    held,
    measure_of,
    resolve,
    shown,
    side,
)
from .words import amounts, join_words, money, sentence, words

# What asks for the distance to an amount: "how far short", "how much more till", "need to
# add ... to have", "left to go", "away from".
_GAP = re.compile(
    r" how far (?:\S+ ){0,2}(?:short|off|away|behind|from) | short of"
    r" | how much (?:more|further|extra|else) | what (?:would|will|does|do) it take"
    r" | (?:bring|get|take|top) (?:\S+ ){0,3}up to | (?:need|have|got) to (?:add|put|save|deposit"
    r"|find|top up|get)\b| to go | left to"
    r" (?:reach|hit|save|go|get)| away from | gap (?:to|between \S+ and) | shortfall "
)
_PRONOUN = re.compile(r" (?:it|its|that|this|there|them) ")
# What asks for a ranking: "rank", "sort", "in order", "biggest first", "largest to smallest".
_RANK = re.compile(
    r" (?:rank|ranked|ranking|sort(?! (?:it|this|that|them|things|\S+ )?out\b)|sorted|order"
    r"|ordered|in order) |"
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


# "say VTI fell 10%", "if apple rose by 5 percent": a holding's price supposed to move.
_MOVE = re.compile(
    r" (?:if|say|suppose|supposing|imagine|what if|assuming) (?P<what>\S+(?: \S+)?)"
    r" (?:(?P<down>fell|falls|fall|dropped|drops|drop|lost|loses|lose|went down|goes down|go down"
    r"|crashed|crashes|crash|tanked|tanks|sank|sinks)|rose|rises|rise|gained|gains|gain|went up"
    r"|goes up|go up|jumped|jumps|jump|climbed|climbs|climb|doubled)(?: by)?"
    r" (?P<pct>\d+(?:\.\d+)?) percent "
)


def read_move(text: str) -> Computation | None:
    """A holding's price supposed to move, and what an account (or the portfolio) is worth."""
    found = _MOVE.search(" " + " ".join(words(text)) + " ")
    tickers = tickers_in(found["what"]) if found else []
    if found is None or len(tickers) != 1:
        return None
    pct = float(found["pct"]) * (-1 if found["down"] else 1)
    whole = side(text)
    account = replace(whole, tickers=()) if whole.kinds or whole.institutions else None
    held = side(tickers[0].lower())
    return Computation(
        "move", (held,) if account is None else (held, account), over="holdings", goal=pct
    )


_UNITS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_UNITS.update({"thirty": 30, "forty": 40, "fifty": 50, "a": 1, "an": 1})
_SPELLED = re.compile(
    r" (?:an? )?(?:even |round |cool |clean )?(?P<n>" + "|".join(_UNITS) + r")"
    r" (?P<scale>grand|thousand|k|hundred) "
)


def spelled(phrase: str) -> list[float]:
    """Money said in words: "an even five grand", "twenty thousand", "a grand"."""
    scale = {"grand": 1000.0, "thousand": 1000.0, "k": 1000.0, "hundred": 100.0}
    return [_UNITS[m["n"]] * scale[m["scale"]] for m in _SPELLED.finditer(phrase)]


def read_goal(text: str) -> Computation | None:
    """Return the gap to a target, or a ranking, the question asks of the user's accounts."""
    phrase = " " + " ".join(words(text)) + " "
    moved = read_move(text)
    if moved:
        return moved
    found = amounts(text) or spelled(phrase)
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
        if held(one) and not (one.kinds or one.tickers):  # "rank my investments by worth"
            return Computation("rank", (one,), over="holdings", ascending=_ascending(phrase))
        if one.tickers or not (one.kinds or _ACCOUNT_WORDS & set(phrase.split())):
            return None
        measure = measure_of(one)
        measure = measure if measure != "cash" else "balance"
        return Computation("rank", (one,), measure, ascending=_ascending(phrase))
    return None


def _ascending(phrase: str) -> bool:
    return bool(_ASCENDING.search(phrase))


def _ranked_holdings(c: Computation, rows: list[Row]) -> list[Block]:
    """The holdings by what they are worth, each citing the account it is held in."""
    held_rows = [r for r in resolve(c.sides[0], rows) if number(r.get("market_value")) is not None]
    if not held_rows:
        return [("You have no investment holdings in your linked accounts.", [])]
    ranked = sorted(
        held_rows, key=lambda r: number(r.get("market_value")) or 0.0, reverse=not c.ascending
    )
    total = sum(number(r.get("market_value")) or 0.0 for r in ranked)
    end = "smallest" if c.ascending else "largest"
    lines: list[Block] = [
        (
            f"- {r.get('ticker')}"
            + (f" ({r.get('security_name')})" if r.get("security_name") else "")
            + f": {money(number(r.get('market_value')) or 0.0, r.currency)}, in {r.label}\n",
            [r.cite],
        )
        for r in ranked
    ]
    head = f"Your holdings by what they are worth, {end} first ({money(total)} in all):\n"
    return [(head, [r.cite for r in ranked]), *lines]


def _line(row: Row, measure: Measure = "balance") -> str:
    owed = " owed" if row.owed and measure == "balance" else ""
    return f"- {row.title}: {shown(row, measure)}{owed}\n"


def _moved(c: Computation, rows: list[Row]) -> list[Block]:
    """What a holding's supposed move does to it and to the account (or portfolio) it is in."""
    ticker = c.sides[0].tickers[0]
    accounts = resolve(c.sides[1], [r for r in rows if not r.get("ticker")]) if c.sides[1:] else []
    places = {(r.get("account_name"), r.get("institution_name")) for r in accounts}
    holdings = [r for r in rows if r.get("ticker")]
    if accounts:
        holdings = [
            r for r in holdings if (r.get("account_name"), r.get("institution_name")) in places
        ]
    mine = [r for r in holdings if r.get("ticker") == ticker]
    if not mine:
        where = join_words([r.label for r in accounts]) or "your linked accounts"
        return [(f"You don't hold {ticker} in {where}.", [])]
    held_value = sum(number(r.get("market_value")) or 0.0 for r in mine)
    whole = (
        sum(figure(r, "balance") or 0.0 for r in accounts)
        if accounts
        else sum(number(r.get("market_value")) or 0.0 for r in holdings)
    )
    change = held_value * (c.goal or 0.0) / 100
    where = join_words([r.label for r in accounts]) or "your portfolio"
    moved = "fell" if change < 0 else "rose"
    cites = [r.cite for r in (accounts or holdings)] + [r.cite for r in mine if accounts]
    return [
        (
            sentence(
                f"{where} is worth {money(whole)} today, {money(held_value)} of it in {ticker}."
                f" If {ticker} {moved} {abs(c.goal or 0.0):g}%, that holding would"
                f" {'lose' if change < 0 else 'gain'} {money(abs(change))} and {where} would be"
                f" worth {money(whole + change)}, the rest unchanged. That is arithmetic on"
                " today's figures, not a forecast.\n"
            ),
            list({id(c): c for c in cites}.values()),
        )
    ]


def write_goal(c: Computation, rows: list[Row]) -> list[Block]:
    """Write the gap to the target, or the ranking, each figure citing its own account."""
    if c.op == "move":
        return _moved(c, rows)
    if c.op == "rank" and c.over == "holdings":
        return _ranked_holdings(c, rows)
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
