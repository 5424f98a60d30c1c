"""Computed answers over the user's own accounts: the highest or lowest, a difference, a
share, a count. The question names its sides ("my savings", "my credit card debt"); each side
is resolved against the user's own rows (kinds, institutions and account names, typos
forgiven), and every figure cites the rows it was computed from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias, cast

from rapidfuzz import fuzz

from . import lexicon
from .ask import ALIASES, COMPANIES, Question, tickers_in, understand
from .cite import Block, number
from .figures import Row
from .plan import ACCOUNT_COLUMNS, HOLDING_COLUMNS, KIND_FILTERS
from .words import count_of, join_words, money, percent, sentence, words

Op: TypeAlias = Literal["highest", "lowest", "difference", "share", "count", "ratio"]
Over: TypeAlias = Literal["accounts", "holdings"]
Measure: TypeAlias = Literal["balance", "limit", "available", "utilization"]
NAME_RATIO = 85.0
_OPS = lexicon.table("operations")
_SHARE = (
    re.compile(
        r"(?:share|percent|percentage|portion|fraction|proportion|part|much) of (?P<whole>.+?)"
        r" (?:is|are|comes? from|sits? in|is in) (?P<part>.+)"
    ),
    re.compile(r"(?P<part>.+?) as an? (?:share|percent|percentage|portion) of (?P<whole>.+)"),
)
_RATIO = (
    re.compile(r"ratio (?:of|between) (?P<a>.+?) (?:to|and|vs|versus) (?P<b>.+)"),
    re.compile(r"how many times (?:bigger |larger |more )?(?:is )?(?P<a>.+?) than (?P<b>.+)"),
)
_HOLDING_WORDS = frozenset(lexicon.phrases("holding_words"))
_DIFFERENCE = (
    re.compile(r"difference between (?P<a>.+?) and (?P<b>.+)"),
    re.compile(
        r"how much (?:more|bigger|larger|greater|higher|less|smaller|lower) (?:money )?"
        r"(?:is |are |do i have |have i got |have i |do i owe |i owe )?(?:in |on )?(?P<a>.+?)"
        r" than (?:in |on |at )?(?P<b>.+)"
    ),
    re.compile(r"compare (?P<a>.+?) (?:to|with|and|against|vs|versus) (?P<b>.+)"),
    re.compile(r"(?:owe|have|is there) more (?:on|in|at) (?P<a>.+?) or (?:on |in |at )?(?P<b>.+)"),
    re.compile(
        r"which is (?:bigger|larger|greater|more|higher|smaller|lower|less) (?P<a>.+?) or (?P<b>.+)"
    ),
    re.compile(r"(?P<a>.+?) (?:vs|versus|compared to|compared with) (?P<b>.+)"),
    # "what would I have left if I paid off my card from checking": checking minus the card
    re.compile(
        r"left (?:over )?(?:if|after|once) (?:i )?(?:paid|pay|paying|cleared|clear) off"
        r" (?P<b>.+?) (?:from|with|using|out of) (?P<a>.+)"
    ),
    # "if I paid the Amex off out of my Chase checking, what would be left in checking?"
    re.compile(
        r"^(?=.* (?:left|remain|remaining|leftover)\b)(?:.*? )?(?:if|after|once) (?:i )?"
        r"(?:paid|pay|paying|cleared|clear|settled|settle) (?:off )?(?P<b>.+?)(?: off)?"
        r" (?:from|with|using|out of) (?P<a>.+?)(?= (?:what|how|would|will)\b|$)"
    ),
)
_KIND_TEST: dict[str, Callable[[Row], bool]] = {
    "checking": lambda r: r.get("account_subtype") == "checking",
    "savings": lambda r: r.get("account_subtype") == "savings",
    "retirement": lambda r: r.get("account_subtype") in ("401k", "403b", "ira", "roth"),
    "mortgage": lambda r: r.get("account_subtype") == "mortgage",
}
_NOUNS = {
    "credit": "credit cards",
    "checking": "checking accounts",
    "savings": "savings accounts",
    "depository": "bank accounts",
    "investment": "investment accounts",
    "loan": "loans",
}


@dataclass(frozen=True, slots=True)
class Computation:
    """What to compute, over which sides (one for highest, lowest and count; none: all)."""

    op: Op
    sides: tuple[Question, ...]
    measure: Measure = "balance"
    over: Over = "accounts"


def _side(text: str) -> Question:
    return understand("my " + text.strip(" ?.!"), own=True)


# A side that names a measure over every account rather than an account.
_WHOLE = {
    "assets": "assets",
    "asset": "assets",
    "everything": "assets",
    "debt": "debts",
    "debts": "debts",
    "cash": "cash",
}


def _whole(side: Question) -> str | None:
    return next((_WHOLE[w] for w in words(side.text) if w in _WHOLE), None)


def _about_accounts(side: Question) -> bool:
    """A side names the user's accounts: a kind, an institution, a measure over them, or
    words after "my" ("an ETF and a mutual fund" are not accounts)."""
    said = words(side.text)[1:]  # without the "my" `_side` puts first
    mine = bool({"my", "mine", "our"} & set(said)) and bool(side.names or side.about_data)
    named = side.kinds or side.institutions or _whole(side) or mine
    return bool(named) and not side.tickers


def _borrowed(a: Question, b: Question) -> tuple[Question, Question]:
    """Sides that say only which end ("my biggest and smallest card balance") take the kind
    of account from the other side."""
    if a.extreme and not (a.kinds or a.institutions or a.names):
        a = replace(a, kinds=b.kinds)
    if b.extreme and not (b.kinds or b.institutions or b.names):
        b = replace(b, kinds=a.kinds)
    return a, b


def _over_holdings(text: str, phrase: str) -> Computation | None:
    """A share, difference, ratio or count over the user's holdings (tickers, the portfolio)."""
    for op, patterns, a, b in (
        ("share", _SHARE, "part", "whole"),
        ("ratio", _RATIO, "a", "b"),
        ("difference", _DIFFERENCE, "a", "b"),
    ):
        for pattern in patterns:
            found = pattern.search(phrase.strip())
            if found:
                sides = (_side(found[a]), _side(found[b]))
                held = [bool(s.tickers) or bool(_HOLDING_WORDS & set(words(s.text))) for s in sides]
                if all(held) and any(s.tickers for s in sides):
                    return Computation(cast(Op, op), sides, over="holdings")
    counted = lexicon.has_phrase(phrase, tuple(_OPS["count"])) and "shares" not in phrase.split()
    if counted and not tickers_in(text):
        return Computation("count", (_side(text),), over="holdings")
    return None


def read_computation(text: str) -> Computation | None:
    """Return what a question asks to compute over the user's accounts, or None."""
    phrase = " " + " ".join(words(text)) + " "
    if set(words(text)) & {"price", "prices", "trading", "quote"}:
        return None
    if _HOLDING_WORDS & set(words(text)) or tickers_in(text):
        return _over_holdings(text, phrase)
    for pattern in _RATIO:
        found = pattern.search(phrase.strip())
        if found:
            sides = (_side(found["a"]), _side(found["b"]))
            if all(map(_about_accounts, sides)):
                return Computation("ratio", sides)
    for pattern in _SHARE:
        found = pattern.search(phrase.strip())
        if found and lexicon.has_phrase(phrase, tuple(_OPS["share"]) + ("how much of",)):
            sides = (_side(found["part"]), _side(found["whole"]))
            # The part may be named by the account's own name alone ("the Sapphire Preferred").
            if _about_accounts(sides[1]) and (_about_accounts(sides[0]) or sides[0].names):
                return Computation("share", sides)
    for pattern in _DIFFERENCE:
        found = pattern.search(phrase.strip())
        if found:
            sides = _borrowed(_side(found["a"]), _side(found["b"]))
            about = [_about_accounts(side) for side in sides]
            # a side may be named by the account's own name when the other is plainly one
            # of the user's accounts ("do I owe on the sapphire than the citi")
            named = all(a or s.names for a, s in zip(about, sides, strict=True))
            own = bool({"i", "my", "me", "our", "we"} & set(phrase.split()))
            if all(about) or (any(about) and named and own):
                return Computation("difference", sides)
    said = set(phrase.split())
    measure: Measure = (
        "utilization"
        if said & {"utilization", "utilisation", "utilized", "used"}
        else "available"
        if "available" in said
        else "limit"
        if said & {"limit", "limits"}
        else "balance"
    )
    whole = _side(text)
    accounts = bool(said & {"account", "accounts", "card", "cards"} or whole.kinds)
    if accounts and not whole.tickers:
        for op in ("highest", "lowest"):
            if lexicon.has_phrase(phrase, tuple(_OPS[op])):
                return Computation(op, (whole,), measure)
        if lexicon.has_phrase(phrase, tuple(_OPS["count"])) and not said & {"much", "shares"}:
            return Computation("count", (whole,))
    return None


def computation_query(computation: Computation) -> str:
    """Return the one SELECT over `account_details` (or `holding_details`) it reads."""
    if computation.over == "holdings":
        return f"SELECT {HOLDING_COLUMNS} FROM holding_details ORDER BY account_name, ticker"
    kinds = [k for side in computation.sides for k in side.kinds]
    every = all(side.kinds for side in computation.sides) and computation.sides
    where = " OR ".join(KIND_FILTERS[k] for k in dict.fromkeys(kinds)) if every else ""
    return (
        f"SELECT {ACCOUNT_COLUMNS}, credit_limit FROM account_details"
        + (f" WHERE {where}" if where else "")
        + " ORDER BY account_name, institution_name"
    )


def _is_kind(row: Row, kind: str) -> bool:
    test = _KIND_TEST.get(kind)
    return test(row) if test else row.kind == kind


def _name_score(side: Question, row: Row) -> int:
    def near(word: str, column: str) -> bool:
        return any(fuzz.ratio(word, w) >= NAME_RATIO for w in words(row.get(column) or ""))

    return sum(2 * near(w, "institution_name") + near(w, "account_name") for w in side.names)


def resolve(side: Question, rows: list[Row]) -> list[Row]:
    """Return the user's rows a side names: its kinds, then its best-matching names (a
    holding: its tickers, or every holding for "my portfolio")."""
    if any(r.get("ticker") for r in rows):
        held = [r for r in rows if r.get("ticker")]
        return [r for r in held if r.get("ticker") in side.tickers] if side.tickers else held
    pool = [r for r in rows if r.balance is not None]
    if side.kinds:
        pool = [r for r in pool if any(_is_kind(r, k) for k in side.kinds)]
    elif "debts" in side.intents or _whole(side) == "debts":
        pool = [r for r in pool if r.owed]
    elif "cash" in side.intents or _whole(side) == "cash":
        pool = [r for r in pool if r.kind == "depository"]
    elif _whole(side) == "assets":
        pool = [r for r in pool if not r.owed]
    if side.names:
        scores = {id(r): _name_score(side, r) for r in pool}
        best = max(scores.values(), default=0)
        if best or side.institutions:
            pool = [r for r in pool if best and scores[id(r)] == best]
    return pool


def _end(side: Question, rows: list[Row]) -> list[Row]:
    """A side that names an end ("my biggest card balance"): that one account."""
    if not side.extreme or len(rows) < 2:
        return rows
    pick = max if side.extreme == "most" else min
    return [pick(rows, key=lambda r: value(side, [r]))]


def value(side: Question, rows: list[Row]) -> float:
    """What a side comes to: net worth is assets minus debts; else each balance (owed as
    a positive amount)."""
    if any(r.get("ticker") for r in rows):
        return sum(number(r.get("market_value")) or 0.0 for r in rows)
    if "net_worth" in side.intents and not side.kinds:
        return sum((-abs(r.balance or 0.0) if r.owed else r.balance or 0.0) for r in rows)
    return sum(abs(r.balance or 0.0) if r.owed else r.balance or 0.0 for r in rows)


def describe(side: Question) -> str:
    """Name a side in the person's own words: "my credit card debt" -> "your credit card debt"."""
    said = [w for w in words(side.text) if w not in ("the", "a", "in", "on", "of", "than")]
    mine = [i for i, w in enumerate(said) if w in ("my", "mine")]
    said = said[mine[-1] :] if mine else said  # "do i owe on my sapphire" -> "my sapphire"
    names = set(side.names)

    def shown(word: str) -> str:
        if word in ("my", "mine"):
            return "your"
        if word.upper() in side.tickers:
            return word.upper()
        if word in COMPANIES:
            return word.title()
        if word in ALIASES:
            return ALIASES[word].title()  # "amex" -> "American Express"
        return word.title() if word in names else word

    return " ".join(shown(w) for w in said)


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


def _figure(row: Row, measure: Measure) -> float | None:
    limit = number(row.get("credit_limit"))
    owed = abs(row.balance or 0.0)
    if measure == "balance":
        return owed if row.owed else row.balance
    if not limit:
        return None
    return {"limit": limit, "available": limit - owed, "utilization": owed / limit}[measure]


def _shown(row: Row, measure: Measure) -> str:
    figure = _figure(row, measure)
    if figure is None:
        return "no credit limit on record"
    if measure == "utilization":
        return percent(figure, 1.0)
    return money(figure, row.currency)


def _extreme(c: Computation, rows: list[Row]) -> list[Block]:
    (side,) = c.sides
    pool = [r for r in resolve(side, rows) if _figure(r, c.measure) is not None]
    if not pool:
        return [("None of your linked accounts has that on record.", [])]
    ranked = sorted(pool, key=lambda r: _figure(r, c.measure) or 0.0, reverse=c.op == "highest")
    top = ranked[0]
    noun = join_words([_NOUNS.get(k, k) for k in side.kinds]) or "accounts"
    what = {"balance": "balance", "limit": "credit limit", "available": "available credit"}.get(
        c.measure, "utilization"
    )
    blocks: list[Block] = [
        (
            sentence(
                f"{top.label} has the {c.op} {what} of your {noun}: {_shown(top, c.measure)}.\n"
            ),
            [top.cite],
        )
    ]
    blocks += [(f"- {r.title}: {_shown(r, c.measure)}\n", [r.cite]) for r in ranked]
    return blocks


def write_computation(c: Computation, rows: list[Row]) -> list[Block]:
    """Write the computed answer, each figure citing the rows behind it."""
    if c.op in ("highest", "lowest"):
        return _extreme(c, rows)
    if c.op == "count" and c.over == "holdings":
        held = [r for r in rows if r.get("ticker")]
        tickers = list(dict.fromkeys(str(r.get("ticker")) for r in held))
        if not tickers:
            return [("You have no investment holdings linked.", [])]
        listed = join_words(tickers)
        return [
            (f"You have {count_of(len(tickers), 'holding')}: {listed}.", [r.cite for r in held])
        ]
    if c.op == "count":
        (side,) = c.sides
        found = resolve(side, rows)
        noun = join_words([_NOUNS.get(k, k) for k in side.kinds]) or "accounts"
        names = join_words([r.label for r in found])
        count = count_of(len(found), noun.rstrip("s") if len(found) == 1 else noun, noun)
        return [(f"You have {count}{': ' + names if names else ''}.", [r.cite for r in found])]
    a, b = c.sides
    rows_a, rows_b = _end(a, resolve(a, rows)), _end(b, resolve(b, rows))
    if not rows_a or not rows_b:
        missing = describe(a if not rows_a else b)
        return [(f"I couldn't find {missing} among your linked accounts.", [])]
    va, vb = value(a, rows_a), value(b, rows_b)
    cites_a, cites_b = [r.cite for r in rows_a], [r.cite for r in rows_b]
    blocks: list[Block] = [
        (f"- {_first_up(describe(a))}: {money(va)}\n", cites_a),
        (f"- {_first_up(describe(b))}: {money(vb)}\n", cites_b),
    ]
    if c.op == "ratio":
        times = f"{va / vb:,.2f}" if vb else "no multiple (the second is zero)"
        return [
            (
                f"{_first_up(describe(a))} is {times} times {describe(b)}.\n",
                cites_a + cites_b,
            ),
            *blocks,
        ]
    if c.op == "share":
        return [
            (
                f"{_first_up(describe(a))}, {money(va)}, is {percent(va, vb)} of "
                f"{describe(b)}, {money(vb)}.",
                cites_a + cites_b,
            )
        ]
    more, less = (a, b) if va >= vb else (b, a)
    return [
        (
            f"{_first_up(describe(more))} is {money(abs(va - vb))} more than {describe(less)}.\n",
            cites_a + cites_b,
        ),
        *blocks,
    ]
