"""Kinds of investment set against each other ("how much of my portfolio is stocks vs crypto",
"what's in funds compared to stocks?", "my stock and bond mix"): each kind's value and its share
of all the holdings, cited to the portfolio's rows, not a difference between two accounts.

A holding that two of the kinds named could both take (a stock ETF, asked "funds or stocks")
counts with the narrower kind (funds take only ETFs and mutual funds); a kind asked of that
the person doesn't hold is said to be none; holdings of no kind named are "the rest".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...tool_registry import EXECUTE_SQL
from .cite import Block, Result, number
from .figures import Row, rows_of
from .markets import INVESTMENT_KINDS
from .plan import PORTFOLIO_QUERY, ToolCall
from .words import join_words, money, percent

_KINDS = (*INVESTMENT_KINDS, (r"bonds?|treasur(?:y|ies)", "bonds", ("bond",)))
# What sets two kinds against each other, and what makes the question the person's own.
_CUES = re.compile(
    r"\b(?:vs|versus|compared (?:to|with)|against|and|or|between|split|ratio|mix|balance"
    r"|than|proportion|share)\b|/"
)
_OWN = re.compile(r"\b(?:my|our|i|we|me|portfolio|holdings|invested|how much is)\b")
# A rule or a judgement of the kinds, not the person's split (the documents or advice answer);
# their sum ("combined", "total": a computation); or a split of all one owns, cash and home
# included (the by-type split, the accounts' shares).
_NOT_MINE = re.compile(
    r"\b(?:tax\w*|fees?|risk\w*|safer|safe|should|better|why|difference|differ|buy|sell"
    r"|combined|together|total|sum|altogether|plus"
    r"|cash|house|home|assets|checking|savings|net worth|by type|asset class\w*)\b"
)


def kinds_named(text: str) -> tuple[str, ...]:
    """The kinds of investment a question names, in the order it names them."""
    lowered = text.lower()
    found = [
        (m.start(), name)
        for words, name, _ in _KINDS
        if (m := re.search(rf"\b(?:{words})\b", lowered)) is not None
    ]
    return tuple(name for _, name in sorted(found))


def compared_kinds(text: str) -> tuple[str, ...]:
    """The two kinds a question sets against each other about the person's own holdings
    (with a word that compares or joins them), or none."""
    lowered = text.lower()
    kinds = kinds_named(text)
    if len(kinds) != 2 or not _CUES.search(lowered) or not _OWN.search(lowered):
        return ()  # three kinds or more: the split by type ("stocks/etfs/crypto")
    return () if _NOT_MINE.search(lowered) else kinds


def _marks(kind: str) -> tuple[str, ...]:
    return next(types for _, name, types in _KINDS if name == kind)


def _value(row: Row) -> float:
    return number(row.get("market_value")) or 0.0


def kinds_split(kinds: tuple[str, ...], held: list[Row]) -> list[Block]:
    """Each kind's holdings, value and share of all of them, largest first, and the rest."""
    total = sum(_value(r) for r in held)
    groups: dict[str, list[Row]] = {kind: [] for kind in kinds}
    for row in held:
        said = (row.get("security_type") or "").lower()
        fits = [k for k in kinds if any(m in said for m in _marks(k))]
        if fits:
            groups[min(fits, key=lambda k: len(_marks(k)))].append(row)
    rest = [r for r in held if all(r not in rows for rows in groups.values())]
    values = {kind: sum(_value(r) for r in rows) for kind, rows in groups.items()}
    shares = join_words(
        [
            f"{k} {money(values[k])} ({percent(values[k], total)})" if groups[k] else f"no {k}"
            for k in kinds
        ]
    )
    blocks: list[Block] = [
        (f"Of your holdings, worth {money(total)} in all: {shares}.\n", [r.cite for r in held])
    ]
    for kind in sorted(kinds, key=lambda k: -values[k]):
        rows = groups[kind]
        if not rows:
            blocks.append((f"- {kind.capitalize()}: none held\n", []))
            continue
        names = join_words([_name(r) for r in rows])
        line = f"- {kind.capitalize()}: {money(values[kind])}, {percent(values[kind], total)}"
        blocks.append((f"{line} ({names})\n", [r.cite for r in rows]))
    if rest:
        value = sum(_value(r) for r in rest)
        names = join_words([_name(r) for r in rest])
        line = f"- The rest: {money(value)}, {percent(value, total)} ({names})\n"
        blocks.append((line, [r.cite for r in rest]))
    funds = [r for k in kinds if k == "stocks" for r in groups[k] if _is_fund(r)]
    if funds:
        those = join_words([str(r.get("ticker")) for r in funds])
        said = "is a fund of stocks, so it is" if len(funds) == 1 else "are funds of stocks, so are"
        blocks.append((f"{those} {said} counted with the stocks.\n", []))
    return blocks


def _is_fund(row: Row) -> bool:
    return any(m in (row.get("security_type") or "").lower() for m in ("etf", "mutual"))


def _name(row: Row) -> str:
    name = row.get("security_name")
    return f"{row.get('ticker')}, {name}" if name else str(row.get("ticker"))


@dataclass(frozen=True)
class KindsCompared:
    """The task: the portfolio's holdings, split among the kinds asked."""

    kinds: tuple[str, ...]

    def calls(self) -> list[ToolCall]:
        return [ToolCall(EXECUTE_SQL, {"query": PORTFOLIO_QUERY})]

    def write(self, results: list[Result]) -> list[Block]:
        held = [r for r in rows_of(results) if r.get("ticker")]
        if not held:
            return [("You have no investment holdings in your linked accounts.", [])]
        return kinds_split(self.kinds, held)


def read_kinds_compared(text: str) -> KindsCompared | None:
    """Return the task of a question that sets kinds of investment against each other."""
    kinds = compared_kinds(text)
    return KindsCompared(kinds) if kinds else None
