"""Computed answers over the user's own accounts: the highest or lowest, a difference, a
share, a count. The question names its sides ("my savings", "my credit card debt"); each side
is resolved against the user's own rows (kinds, institutions and account names, typos
forgiven), and every figure cites the rows it was computed from.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import cast

from . import lexicon
from .ask import Question, tickers_in
from .cite import Block
from .counted import NOUNS, write_average, write_count, write_extreme
from .figures import Row
from .goals import read_goal, write_goal
from .leaving import exclusion_last
from .lines import read_line, write_line
from .paid_amount import read_paid_amount, write_paid_amount
from .paid_off import read_paid_off, write_paid_off
from .plan import ACCOUNT_COLUMNS, HOLDING_COLUMNS, KIND_FILTERS
from .pointing import back, both_back
from .sides import (
    HOLDING_WORDS,
    Computation,
    Measure,
    Op,
    about_accounts,
    describe,
    distinct,
    figure,
    held,
    measure_of,
    pair_of,
    resolve,
    side,
    side_query,
    value,
    whole,
)
from .tally import read_tally, write_tally
from .words import join_words, money, percent, words

_OPS = lexicon.table("operations")
_CONTRAST = re.compile(r",?\s*\b(?:as opposed to|rather than|instead of)\b[^?.!;]*", re.I)
_SHARE = (
    re.compile(
        r"(?:share|percent|percentage|portion|fraction|proportion|part|much) of (?P<whole>.+?)"
        r" (?:is|are|comes? from|sits? in|is in) (?P<part>.+)"
    ),
    re.compile(r"(?P<part>.+?) as an? (?:share|percent|percentage|portion) of (?P<whole>.+)"),
    # "VTI makes up what share of my Robinhood account?"
    re.compile(
        r"(?P<part>.+?) (?:makes? up|accounts? for|represents?|is|are) (?:what|which|how much)"
        r" (?:share|percent|percentage|portion|fraction|proportion|part|of) (?:of )?(?P<whole>.+)"
    ),
)
_RATIO = (
    re.compile(r"ratio (?:of|between) (?P<a>.+?) (?:to|and|vs|versus) (?P<b>.+)"),
    # "my debt-to-asset ratio", "debt to income ratio"
    re.compile(r"(?P<a>\S+) to (?P<b>\S+) ratio"),
    re.compile(r"how many times (?:bigger |larger |more )?(?:is )?(?P<a>.+?) than (?P<b>.+)"),
    # "how many times over could my savings pay off my card debt": what covers what
    re.compile(
        r"how many times (?:over )?(?:could|can|would|will|do|does|might) (?P<a>.+?)"
        r" (?:pay off|pay down|pay for|clear|cover|wipe out|pay) (?P<b>.+)"
    ),
)
_COMPARATIVES = "bigger|larger|greater|more|higher|smaller|lower|less|fewer"
_DIFFERENCE = (
    re.compile(r"(?:difference|gap|spread) between (?P<a>.+?) and (?P<b>.+)"),
    re.compile(
        r"how much (?:more|bigger|larger|greater|higher|less|smaller|lower) (?:money )?"
        r"(?:is |are |do i have |have i got |have i |do i owe |i owe )?(?:in |on )?(?P<a>.+?)"
        r" than (?:in |on |at )?(?P<b>.+)"
    ),
    re.compile(r"compare (?P<a>.+?) (?:to|with|and|against|vs|versus) (?P<b>.+)"),
    re.compile(
        r"how (?:does|do|did|would|will) (?P<a>.+?) (?:stack up|compare|measure up|match up|"
        r"stack|look) (?:against|to|with|next to|beside|versus|vs) (?P<b>.+)"
    ),
    re.compile(r"(?:owe|have|is there) more (?:on|in|at) (?P<a>.+?) or (?:on |in |at )?(?P<b>.+)"),
    # "is my checking bigger than my savings", "are my card balances higher than my cash"
    re.compile(
        rf"^(?:is|are|was|were) (?P<a>.+?) (?:{_COMPARATIVES}) than (?:in |on |at )?(?P<b>.+)"
    ),
    # "do i have more in checking than savings", "do i owe more on the amex than the citi"
    re.compile(
        r"(?:have|owe|keep|got) (?:more|less) (?:money )?(?:in|on|at) (?P<a>.+?)"
        r" than (?:in |on |at )?(?P<b>.+)"
    ),
    re.compile(
        r"which is (?:bigger|larger|greater|more|higher|smaller|lower|less) (?P<a>.+?) or (?P<b>.+)"
    ),
    re.compile(r"(?P<a>.+?) (?:vs|versus|compared to|compared with) (?P<b>.+)"),
)
# "the most I can put into a Roth IRA": what is allowed, not one of the user's accounts
_CAN = re.compile(r" (can|could|may|should) (i|we) | (i|we) (can|could|may|am allowed to) ")


def _borrowed(a: Question, b: Question) -> tuple[Question, Question]:
    """Sides that say only which end ("my biggest and smallest card balance") take the kind
    of account from the other side."""
    if a.extreme and not (a.kinds or a.institutions or _named(a)):
        a = replace(a, kinds=b.kinds, names=())
    if b.extreme and not (b.kinds or b.institutions or _named(b)):
        b = replace(b, kinds=a.kinds, names=())
    return a, b


def _named(one: Question) -> bool:
    """A side names an account by more than its end ("my skinniest one": by its end alone)."""
    return bool(set(one.names) - _ENDS)


_ENDS = frozenset({"one", "ones", "fattest", "richest", "fullest", "skinniest", "emptiest"}) | {
    "leanest"
}


def _over_holdings(text: str, phrase: str) -> Computation | None:
    """A share, difference, ratio or count over the user's holdings (tickers, the portfolio);
    a side may be an account ("VTI makes up what share of my Robinhood account")."""
    for op, patterns, a, b in (
        ("share", _SHARE, "part", "whole"),
        ("ratio", _RATIO, "a", "b"),
        ("difference", _DIFFERENCE, "a", "b"),
    ):
        for pattern in patterns:
            found = pattern.search(phrase.strip())
            if found:
                sides = (side(found[a]), side(found[b]))
                # a ticker on one side, or holdings as a whole against accounts ("my
                # stocks vs what I owe on my cards"); accounts on both sides are not holdings'
                mixed = any(map(held, sides)) and not all(map(held, sides))
                # a side may point back at what the last question named ("how much of that
                # is apple" after the brokerage's balance)
                if all(held(s) or about_accounts(s) or back(s) is not None for s in sides) and (
                    any(s.tickers for s in sides) or mixed
                ):
                    return Computation(cast(Op, op), sides, over="holdings")
    counted = lexicon.has_phrase(phrase, tuple(_OPS["count"])) and "shares" not in phrase.split()
    if counted and not tickers_in(text):
        return Computation("count", (side(text),), over="holdings")
    return None


def _share(phrase: str) -> Computation | None:
    """ "what share of my credit line is unused": a part of the whole it names, or the whole
    measured another way ("unused": its available credit, "uninvested cash": its cash)."""
    for pattern in _SHARE:
        found = pattern.search(phrase.strip())
        if found and lexicon.has_phrase(phrase, tuple(_OPS["share"]) + ("how much of",)):
            part, whole = side(found["part"]), side(found["whole"])
            measures = (measure_of(part), measure_of(whole))
            # the part says what of the whole ("is still unused"), not which account ("the
            # Sapphire's limit"): no kind or institution of its own, no article or "my"
            predicate = not re.match(r"my (my|the|our|your|a|an) ", part.text)
            banked = set(part.kinds) & {"checking", "savings", "depository"}  # accounts
            own = not part.institutions and (not part.kinds or measures[0] == "cash") and not banked
            if about_accounts(whole) and measures[0] != "balance" and predicate and own:
                return Computation("share", (whole, whole), measures=measures)
            # The part may be named by the account's own name alone ("the Sapphire Preferred").
            if (
                about_accounts(whole)
                and (about_accounts(part) or part.names)
                or _pointing((part, whole))
            ):
                return Computation("share", (part, whole), measures=measures)
    return None


def _pointing(sides: tuple[Question, ...]) -> bool:
    """Sides of which one points back at an earlier question ("that", "the first") and the
    other does too or names the user's accounts ("how does that compare to chase checking")."""
    backs = [back(s) is not None for s in sides]
    return any(backs) and all(b or about_accounts(s) for b, s in zip(backs, sides, strict=True))


def read_computation(text: str) -> Computation | None:
    """Return what a question asks to compute over the user's accounts, or None."""
    # "cash in the bank, as opposed to the house and stocks": what it is not says nothing more
    text = _CONTRAST.sub("", exclusion_last(text))
    phrase = " " + " ".join(words(text)) + " "
    if set(words(text)) & {"price", "prices", "trading", "quote"}:
        return None
    tally = read_line(text) or read_paid_amount(text) or read_paid_off(text)
    tally = tally or read_tally(text, phrase)
    tally = tally or read_goal(text)
    tally = tally or pair_of(phrase) or both_back(text)
    if tally:
        return tally
    if HOLDING_WORDS & set(words(text)) or tickers_in(text):
        return _over_holdings(text, phrase)
    for pattern in _RATIO:
        found = pattern.search(phrase.strip())
        if found:
            sides = (side(found["a"]), side(found["b"]))
            if all(map(about_accounts, sides)) or _pointing(sides):
                return Computation("ratio", sides)
    share = _share(phrase)
    if share:
        return share
    for pattern in _DIFFERENCE:
        found = pattern.search(phrase.strip())
        if found:
            sides = _borrowed(side(found["a"]), side(found["b"]))
            about = [about_accounts(s) for s in sides]
            # a side may be named by the account's own name when the other is plainly one
            # of the user's accounts ("do I owe on the sapphire than the citi")
            named = all(a or s.names for a, s in zip(about, sides, strict=True))
            own = bool({"i", "my", "me", "our", "we"} & set(phrase.split()))
            if all(about) or (any(about) and named and own) or _pointing(sides):
                return Computation("difference", sides)
    said = set(phrase.split())
    whole = side(text)
    measure = measure_of(whole)
    accounts = bool(said & {"account", "accounts", "card", "cards"} or whole.kinds)
    if accounts and not whole.tickers and not _CAN.search(phrase):
        for op in ("highest", "lowest", "average"):
            if lexicon.has_phrase(phrase, tuple(_OPS[op])):
                return Computation(op, (whole,), "balance" if measure == "cash" else measure)
        if lexicon.has_phrase(phrase, tuple(_OPS["count"])) and not said & {"much", "shares"}:
            return Computation("count", (whole,))
    return None


def computation_queries(computation: Computation) -> list[str]:
    """Return the SELECTs over `account_details` (or `holding_details`) it reads: every
    account it may need, and each side's own (and an end's own account), for their citations."""
    if computation.over == "holdings":
        own = [side_query(s) for s in computation.sides if not held(s)]
        return [
            f"SELECT {HOLDING_COLUMNS} FROM holding_details ORDER BY account_name, ticker"
        ] + own
    kinds = [k for s in computation.sides for k in s.kinds]
    every = all(s.kinds for s in computation.sides) and computation.sides
    where = " OR ".join(KIND_FILTERS[k] for k in dict.fromkeys(kinds)) if every else ""
    queries = [
        f"SELECT {ACCOUNT_COLUMNS}, credit_limit, available_balance FROM account_details"
        + (f" WHERE {where}" if where else "")
        + " ORDER BY account_name, institution_name"
    ]
    if computation.op not in ("highest", "lowest", "average", "count", "rank"):
        # Only each side's own accounts: a label the turn shows twice is cited as one source.
        # a side that names an end ("my skinniest one"): that account alone, so that it cites
        # that account and not others under its label ("Checking" at Chase and Wells Fargo)
        queries = [
            _end_query(s) if s.extreme and computation.measured(i) == "balance" else side_query(s)
            for i, s in enumerate(computation.sides)
        ]
    return list(dict.fromkeys(queries))


def _end_query(one: Question) -> str:
    query, _, _ = side_query(one).rpartition(" ORDER BY ")
    order = "DESC" if one.extreme == "most" else "ASC"
    return f"{query} ORDER BY abs(current_balance) {order} LIMIT 1"


def _end(one: Question, rows: list[Row]) -> list[Row]:
    """A side that names an end ("my biggest card balance"): that one account."""
    if not one.extreme or len(rows) < 2:
        return rows
    pick = max if one.extreme == "most" else min
    return [pick(rows, key=lambda r: value(one, [r]))]


_WHAT = {
    "balance": "the balance",
    "limit": "the credit limit",
    "available": "the unused credit",
    "utilization": "the utilization",
    "cash": "the uninvested cash",
}


def _counts(row: Row, measure: Measure) -> bool:
    """A row counts for a measure it has ("unused credit": a card, not a checking account)."""
    return measure in ("balance", "cash") or figure(row, measure) is not None


def _name(one: Question, rows: list[Row]) -> str:
    """Name a side by what it resolved to: "your Chase checking account", "your VTI", "your
    net worth"; in the person's own words when it is many accounts ("your card debt")."""
    if whole(one) in ("assets", "debts") and not (one.kinds or one.institutions):
        return "your " + str(whole(one))
    if "net_worth" in one.intents and not one.kinds:
        return "your net worth"
    tickers = list(dict.fromkeys(str(r.get("ticker")) for r in rows if r.get("ticker")))
    if tickers:
        return "your " + join_words(tickers) if len(tickers) <= 2 else "your holdings"
    if len(rows) <= 2:
        return join_words([r.label for r in rows])
    if one.kinds and not one.institutions:  # "your checking and savings accounts"
        return "your " + join_words([NOUNS.get(k, k) for k in one.kinds])
    return describe(one)


def _first_up(text: str) -> str:
    return text[:1].upper() + text[1:]


def write_computation(c: Computation, found: list[Row]) -> list[Block]:
    """Write the computed answer, each figure citing the rows behind it."""
    rows = distinct(found)
    if c.op in ("total", "left", "minus"):
        return write_tally(c, rows)
    if c.op == "line":
        return write_line(c, rows)
    if c.op == "pay":
        return write_paid_amount(c, rows)
    if c.op == "paid_off":
        return write_paid_off(c, rows)
    if c.op in ("target", "rank", "move"):
        return write_goal(c, rows)
    if c.op in ("highest", "lowest"):
        return write_extreme(c, rows)
    if c.op == "average":
        return write_average(c, rows)
    if c.op == "count":
        return write_count(c, rows)
    note: list[Block] = [(c.note + "\n", [])] if c.note else []
    return note + _two_sides(c, rows)


def _two_sides(c: Computation, rows: list[Row]) -> list[Block]:
    """A ratio, share or difference of two sides, each figure citing its own side's rows."""
    a, b = c.sides
    rows_a, rows_b = (
        _end(s, [r for r in resolve(s, rows) if _counts(r, c.measured(i))])
        for i, s in enumerate((a, b))
    )
    if not rows_a or not rows_b:
        missing = describe(a if not rows_a else b)
        return [(f"I couldn't find {missing} among your linked accounts.", [])]
    va, vb = value(a, rows_a, c.measured(0)), value(b, rows_b, c.measured(1))
    cites_a, cites_b = [r.cite for r in rows_a], [r.cite for r in rows_b]
    name_a, name_b = _name(a, rows_a), _name(b, rows_b)
    blocks: list[Block] = [
        (f"- {_first_up(name_a)}: {money(va)}\n", cites_a),
        (f"- {_first_up(name_b)}: {money(vb)}\n", cites_b),
    ]
    if c.op == "ratio":
        times = f"{va / vb:,.2f}" if vb else "no multiple (the second is zero)"
        if vb and va / vb < 0.1:  # "0.01 times" says too little: a percent says it plainly
            times = f"{percent(va, vb)} of"
            name_b += f" (a ratio of {va / vb:.3f} to 1)"
        return [
            (
                f"{_first_up(name_a)} {'are' if len(rows_a) > 1 or whole(a) else 'is'} {times}"
                f"{'' if times.endswith(' of') else ' times'} {name_b}.\n",
                cites_a + cites_b,
            ),
            *blocks,
        ]
    if c.op == "share":
        part, of = name_a, name_b
        if a == b:  # the whole measured two ways: "your credit line ... unused"
            part = f"{_WHAT[c.measured(0)]} on {of}"
            of = "its " + _WHAT[c.measured(1)].removeprefix("the ")
        return [
            (
                f"{_first_up(part)}, {money(va)}, {'are' if len(rows_a) > 1 else 'is'}"
                f" {percent(va, vb)} of {of}, {money(vb)}.",
                cites_a + cites_b if a != b else cites_a,
            )
        ]
    (more, many), less = ((name_a, rows_a), name_b) if va >= vb else ((name_b, rows_b), name_a)
    return [
        (
            f"{_first_up(more)} {'are' if len(many) > 1 else 'is'} {money(abs(va - vb))} more"
            f" than {less}.\n",
            cites_a + cites_b,
        ),
        *blocks,
    ]
