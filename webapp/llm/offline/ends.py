"""Both ends of the user's accounts of a kind and the gap between them, asked in one message
("which of my cards has the biggest balance, which has the smallest, and what's the
difference?", "my biggest card balance, and how much more is it than the smallest one?"):
each end read by a query of its own, so that each figure cites that one account and no
other that shares its label ("Credit card" at American Express and at Citi).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...tool_registry import EXECUTE_SQL
from .ask import Question
from .cite import Block, Result
from .conversation import questions_of
from .figures import Row, rows_of
from .plan import ToolCall
from .sides import Measure, figure, measure_of, resolve, shown, side, side_query
from .words import money, sentence, words

_MOST = frozenset({"biggest", "largest", "highest", "most", "greatest", "top", "max"})
_LEAST = frozenset({"smallest", "lowest", "least", "tiniest", "min"})
_GAP = re.compile(
    r" (difference|differ|gap|spread|apart|how much (more|bigger|larger|higher|less|smaller"
    r"|lower)|between them|between the two) "
)
_ACCOUNT_WORDS = frozenset({"account", "accounts", "card", "cards"})
# What orders the accounts for each measure, in the query (owed balances are negative).
_ORDER: dict[Measure, str] = {
    "balance": "abs(current_balance)",
    "limit": "credit_limit",
    "available": "available_balance",
}
_WHAT: dict[Measure, str] = {
    "balance": "balance",
    "limit": "credit limit",
    "available": "available credit",
}
_NOUNS = {
    "credit": "cards",
    "checking": "checking accounts",
    "savings": "savings accounts",
    "depository": "bank accounts",
}


@dataclass(frozen=True)
class Ends:
    """The task: the account at each end, each by its own query, and the gap between them."""

    whole: Question
    measure: Measure

    def calls(self) -> list[ToolCall]:
        query, _, _ = side_query(self.whole).rpartition(" ORDER BY ")
        order = _ORDER[self.measure]
        return [
            ToolCall(EXECUTE_SQL, {"query": f"{query} ORDER BY {order} {end} LIMIT 1"})
            for end in ("DESC", "ASC")
        ]

    def write(self, results: list[Result]) -> list[Block]:
        rows = [r for r in resolve(self.whole, rows_of(results)) if self._of(r) is not None]
        places = {(r.get("account_name"), r.get("institution_name")): r for r in rows}
        unique = list(places.values())
        noun = " and ".join(_NOUNS.get(k, f"{k} accounts") for k in self.whole.kinds) or "accounts"
        if len(unique) < 2:
            only = "".join(f" ({r.label}, {shown(r, self.measure)})" for r in unique)
            return [(f"You have only one of those{only}, so there is no gap to give.", [])]
        top = max(unique, key=lambda r: self._of(r) or 0.0)
        bottom = min(unique, key=lambda r: self._of(r) or 0.0)
        what = _WHAT[self.measure]
        gap = (self._of(top) or 0.0) - (self._of(bottom) or 0.0)
        said = (
            f"{top.label} has the biggest {what} of your {noun}, {shown(top, self.measure)},"
            f" and {bottom.label} the smallest, {shown(bottom, self.measure)}: the difference"
            f" between them is {money(gap, top.currency)}."
        )
        return [(sentence(said), [top.cite, bottom.cite])]

    def _of(self, row: Row) -> float | None:
        return figure(row, self.measure)


def _padded(text: str) -> str:
    return " " + " ".join(words(text)) + " "


def read_ends(text: str) -> Ends | None:
    """Read a message that asks for both ends of a kind of account and the gap between them,
    every part of it about one of those three."""
    said = set(words(text))
    if not (said & _MOST and said & _LEAST and _GAP.search(_padded(text))):
        return None
    for part in questions_of(text):
        if not (set(words(part)) & (_MOST | _LEAST) or _GAP.search(_padded(part))):
            return None  # "... and what's AAPL at?": a question of its own
    whole = side(text)
    if whole.tickers or not (whole.kinds or said & _ACCOUNT_WORDS):
        return None
    measure = measure_of(whole)
    if measure not in _ORDER:
        return None
    return Ends(replace(whole, extreme=None, intents=("balances",)), measure)
