"""The sides of a computation ("my savings", "every credit card", "VTI", "the Robinhood
account"): each read as a question of its own, resolved against the user's own rows (kinds,
institutions and account names, typos forgiven), valued by what it measures, and named in the
person's own words. Each side has its own query, so that a figure cites its own accounts and
no others that share their label ("Credit card" at American Express and at Citi).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, TypeAlias, cast

from rapidfuzz import fuzz

from . import lexicon
from .ask import ALIASES, COMPANIES, Intent, Question, understand
from .cite import number
from .figures import Row
from .plan import ACCOUNT_COLUMNS, account_query
from .words import money, percent, words

Measure: TypeAlias = Literal["balance", "limit", "available", "utilization", "cash"]
Op: TypeAlias = Literal[
    "highest",
    "lowest",
    "average",
    "difference",
    "share",
    "count",
    "ratio",
    "total",
    "left",
    "minus",
    "target",
    "rank",
    "move",
    "line",
    "pay",
    "paid_off",
]
Over: TypeAlias = Literal["accounts", "holdings"]
NAME_RATIO = 85.0
HOLDING_WORDS = frozenset(lexicon.phrases("holding_words"))
# The words that name what is measured of an account, when it is not its balance.
MEASURE_WORDS: dict[str, Measure] = {
    w: cast(Measure, m) for m, ws in lexicon.table("measures").items() for w in ws
}
COLUMNS = f"{ACCOUNT_COLUMNS}, credit_limit, available_balance"
_KIND_TEST: dict[str, Callable[[Row], bool]] = {
    "checking": lambda r: r.get("account_subtype") == "checking",
    "savings": lambda r: r.get("account_subtype") == "savings",
    "retirement": lambda r: r.get("account_subtype") in ("401k", "403b", "ira", "roth"),
    "mortgage": lambda r: r.get("account_subtype") == "mortgage",
}
# A side that names a measure over every account rather than an account.
_WHOLE = {
    "assets": "assets",
    "asset": "assets",
    "everything": "assets",
    "debt": "debts",
    "debts": "debts",
    "cash": "cash",
}
_OWN_WORDS = frozenset({"my", "mine", "our"})
# One side that names a pair ("the gap between my two checking accts", "how far apart are
# both cards"): the difference of its larger and smaller account.
_PAIR = re.compile(
    r"(?:difference|gap|spread) (?:between|in|of|separating) (?P<a>.+)"
    r"|how far apart (?:are|is) (?P<b>.+)"
)
_PAIR_WORDS = frozenset({"two", "both", "2", "pair"})


@dataclass(frozen=True, slots=True)
class Computation:
    """What to compute, over which sides (one for highest, lowest and count; none: all), and
    what each side measures (`measures`, by position; `measure` for the rest). "left" and
    "minus": the first side less the others."""

    op: Op
    sides: tuple[Question, ...]
    measure: Measure = "balance"
    over: Over = "accounts"
    measures: tuple[Measure, ...] = ()
    note: str = ""  # what was assumed: a follow-up's "Taking that as ..."
    goal: float | None = None  # "target": the amount to reach; "move", "line": a percent
    ascending: bool = False  # "rank": smallest first

    def measured(self, at: int) -> Measure:
        return self.measures[at] if at < len(self.measures) else self.measure


def side(text: str) -> Question:
    """Read one side as a question about the user's own accounts."""
    return understand("my " + text.strip(" ?.!,"), own=True)


def whole(side: Question) -> str | None:
    return next((_WHOLE[w] for w in words(side.text) if w in _WHOLE), None)


def measure_of(side: Question, default: Measure = "balance") -> Measure:
    """What a side measures: "my combined credit limits" -> limit, "unused" -> available."""
    said = words(side.text)
    found = [MEASURE_WORDS[w] for w in said if w in MEASURE_WORDS]
    if "credit" in said and "line" in said:
        found.append("limit")
    return found[0] if found else default


def about_accounts(side: Question) -> bool:
    """A side names the user's accounts: a kind, an institution, a measure over them, or
    words after "my" ("an ETF and a mutual fund" are not accounts)."""
    said = words(side.text)[1:]  # without the "my" `side` puts first
    mine = bool(_OWN_WORDS & set(said)) and bool(side.names or side.about_data)
    named = side.kinds or side.institutions or whole(side) or mine
    return bool(named) and not side.tickers


def held(side: Question) -> bool:
    """A side names holdings (a ticker, "my stocks") rather than accounts."""
    return bool(side.tickers) or bool(HOLDING_WORDS & set(words(side.text)))


def is_kind(row: Row, kind: str) -> bool:
    test = _KIND_TEST.get(kind)
    return test(row) if test else row.kind == kind


def _name_score(side: Question, row: Row) -> int:
    def near(word: str, column: str) -> bool:
        return any(fuzz.ratio(word, w) >= NAME_RATIO for w in words(row.get(column) or ""))

    return sum(2 * near(w, "institution_name") + near(w, "account_name") for w in side.names)


def side_query(side: Question) -> str:
    """The SELECT over `account_details` of the accounts one side names (its own citations)."""
    intents: tuple[Intent, ...] = ("balances",)
    if not (side.kinds or side.names) and whole(side) in ("debts", "cash"):
        intents = ("debts",) if whole(side) == "debts" else ("cash",)
    if "net_worth" in side.intents and not side.kinds:
        intents = ("net_worth",)
    query = account_query(replace(side, intents=intents, excluded=(), excluded_kinds=()))
    return query.replace(f"SELECT {ACCOUNT_COLUMNS}", f"SELECT {COLUMNS}", 1)


def distinct(rows: list[Row]) -> list[Row]:
    """Each account once, as the result that holds the fewest others under its label wrote it
    (so that its citation is of that account alone)."""
    best: dict[tuple[str | None, ...], Row] = {}
    for row in rows:
        key = tuple(
            row.get(c)
            for c in ("account_name", "institution_name", "account_subtype", "ticker", "quantity")
        )
        if key not in best or len(row.result.texts) < len(best[key].result.texts):
            best[key] = row
    return list(best.values())


def resolve(side: Question, rows: list[Row]) -> list[Row]:
    """Return the user's rows a side names: its kinds, then its best-matching names (a
    holding: its tickers, or every holding for "my portfolio")."""
    holdings = [r for r in rows if r.get("ticker")]
    if held(side) and holdings:
        return (
            [r for r in holdings if r.get("ticker") in side.tickers] if side.tickers else holdings
        )
    pool = [r for r in rows if r.balance is not None and not r.get("ticker")]
    if side.kinds:
        pool = [r for r in pool if any(is_kind(r, k) for k in side.kinds)]
    elif "debts" in side.intents or whole(side) == "debts":
        pool = [r for r in pool if r.owed]
    elif ("cash" in side.intents or whole(side) == "cash") and not side.institutions:
        pool = [r for r in pool if r.kind == "depository"]
    elif whole(side) == "assets":
        pool = [r for r in pool if not r.owed]
    pool = [r for r in pool if not any(is_kind(r, k) for k in side.excluded_kinds)]
    if side.excluded:
        left_out = Question("", (), names=side.excluded)
        pool = [r for r in pool if not _name_score(left_out, r)]
    if side.names:
        scores = {id(r): _name_score(side, r) for r in pool}
        best = max(scores.values(), default=0)
        if best or side.institutions:
            pool = [r for r in pool if best and scores[id(r)] == best]
    return pool


def figure(row: Row, measure: Measure) -> float | None:
    """One account's figure: its balance (owed as a positive amount), limit, available credit,
    utilization, or a brokerage's uninvested cash."""
    limit = number(row.get("credit_limit"))
    owed = abs(row.balance or 0.0)
    if measure == "balance":
        return owed if row.owed else row.balance
    if measure == "cash":
        return number(row.get("available_balance")) if row.kind == "investment" else row.balance
    if not limit:
        return None
    return {"limit": limit, "available": limit - owed, "utilization": owed / limit}[measure]


def shown(row: Row, measure: Measure) -> str:
    found = figure(row, measure)
    if found is None:
        return "no credit limit on record"
    return percent(found, 1.0) if measure == "utilization" else money(found, row.currency)


def value(side: Question, rows: list[Row], measure: Measure = "balance") -> float:
    """What a side comes to: net worth is assets minus debts; else each figure (owed as a
    positive amount)."""
    if any(r.get("ticker") for r in rows):
        return sum(number(r.get("market_value")) or 0.0 for r in rows)
    if "net_worth" in side.intents and not side.kinds:
        return sum((-abs(r.balance or 0.0) if r.owed else r.balance or 0.0) for r in rows)
    return sum(figure(r, measure) or 0.0 for r in rows)


def describe(side: Question) -> str:
    """Name a side in the person's own words: "my credit card debt" -> "your credit card debt"."""
    drop = ("the", "a", "in", "on", "of", "than", "put", "together", "added", "just")
    said = [w for w in words(side.text) if w not in drop]
    mine = [i for i, w in enumerate(said) if w in ("my", "mine")]
    said = said[mine[-1] :] if mine else said  # "do i owe on my sapphire" -> "my sapphire"
    names = set(side.names)

    def word(w: str) -> str:
        if w in ("my", "mine"):
            return "your"
        if w.upper() in side.tickers:
            return w.upper()
        if w in COMPANIES:
            return w.title()
        if w in ALIASES:
            return ALIASES[w].title()  # "amex" -> "American Express"
        return w.title() if w in names else w

    return " ".join(word(w) for w in said)


def pair_of(phrase: str) -> Computation | None:
    """A difference within one side that names two accounts of a kind ("the gap between my
    two checking accounts"): its larger less its smaller."""
    found = _PAIR.search(phrase.strip())
    if not found:
        return None
    named = found["a"] or found["b"]
    if re.search(r" (?:and|or|vs|versus|than|to|with) ", f" {named} "):
        return None  # two sides of their own: "the gap between both checking and savings"
    one = side(named)
    said = set(words(one.text))
    if not (one.kinds or one.institutions) or not said & _PAIR_WORDS or not about_accounts(one):
        return None
    kept = replace(one, names=tuple(n for n in one.names if n not in _PAIR_WORDS))
    ends = (replace(kept, extreme="most"), replace(kept, extreme="least"))
    return Computation("difference", ends)
