"""Whether the figure just given counts an account ("wait, does that include the house?
what's it down as" after the net worth; "is my savings in that?" after the cash): the
account's own figure, and whether the last question's measure counts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ...tool_registry import EXECUTE_SQL
from .ask import Question, understand
from .cite import Block, Result
from .conversation import previous_question, questions_of
from .figures import Row, rows_of
from .plan import ToolCall, account_query
from .sides import is_kind, resolve
from .words import sentence, words

_INCLUDES = re.compile(
    r" (does|do|did|is|was|are|has|have) (that|this|it|those|these|they)"
    r" (number |figure |total |amount |sum )?(include|includes|included|count|counts|counted"
    r"|cover|covers|factor in|take in|have|contain|contains) "
    r"| (is|are|was|were) (\S+ ){1,3}(included|counted|in there|in that|in it"
    r"|part of (that|it|this)) | (did|do) (you|u) (include|count|add|factor in) "
)
_MEASURES = {
    "net_worth": "your net worth",
    "cash": "your cash",
    "debts": "what you owe",
    "utilization": "your utilization",
}
_OWN_WORDS = frozenset({"it", "its", "that", "this", "they", "them"})


@dataclass(frozen=True)
class Included:
    """The task: the account asked about, and whether the last question's figure counts it."""

    asked: Question
    last: Question

    def calls(self) -> list[ToolCall]:
        return [ToolCall(EXECUTE_SQL, {"query": account_query(self.asked)})]

    def write(self, results: list[Result]) -> list[Block]:
        rows = resolve(self.asked, rows_of(results))
        if not rows:
            return [("You have no account like that linked, so it isn't in it.", [])]
        what = _MEASURES.get(next(iter(self.last.intents), ""), "that figure")
        blocks: list[Block] = []
        for row in rows:
            worth = row.amount(abs(row.balance or 0.0))
            if _counts(self.last, row):
                said = f"Yes: {what} counts {row.label}, at {worth}."
            else:
                said = f"No: {what} leaves out {row.label}, which is down as {worth}."
            blocks.append((sentence(said) + "\n", [row.cite]))
        return blocks


def _counts(last: Question, row: Row) -> bool:
    """Tell whether the last question's figure counts the account."""
    if any(is_kind(row, k) for k in last.excluded_kinds):
        return False
    if "net_worth" in last.intents:
        return True
    if "cash" in last.intents:
        return row.kind == "depository"
    if "debts" in last.intents or "utilization" in last.intents:
        return row.owed
    return not last.kinds or any(is_kind(row, k) for k in last.kinds)


def read_included(text: str, earlier: tuple[str, ...]) -> Included | None:
    """Read a message that asks whether the last answer's figure counts an account; a part
    after it may ask that account's value ("what's it down as")."""
    parts = questions_of(text)
    phrase = " " + " ".join(words(parts[0])) + " "
    if not earlier or not _INCLUDES.search(phrase):
        return None
    for part in parts[1:]:
        later = understand(part)
        if later.kinds or later.institutions or later.tickers or len(words(part)) > 6:
            return None  # a question of its own
        if not set(words(part)) & _OWN_WORDS:
            return None
    asked = understand(parts[0], own=True)
    last = previous_question(earlier)
    if not (asked.kinds or asked.institutions) or last is None or not last.about_data:
        return None
    return Included(replace(asked, intents=("balances",)), last)
