"""How long a balance would pay a regular bill ("how many months of mortgage would that cover"
after "how much is sitting in chase savings", "how many months of rent could my savings pay
for", "how many weeks of rent is my checking"): the accounts named, or those of the question
"that" points back at, divided by the bill a month, read from the payees that recur in the
user's transactions (`regular.py`). Each figure cites the rows it came from, and a pointed
side says what it was taken as.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from ...tool_registry import EXECUTE_SQL
from . import lexicon
from .ask import Question, understand
from .cite import Block, Result, number
from .conversation import previous_question
from .figures import rows_of
from .plan import ToolCall
from .pointing import named_as
from .regular import BILL_KINDS, named, per_month, regular_query
from .sides import resolve, side_query
from .words import join_words, money, words

_UNIT = r"(?P<unit>months?|weeks?|years?)"
_MONTHS_OF = (
    # "how many months of mortgage would that cover", "how many months of rent is my savings"
    re.compile(
        rf" how many {_UNIT} (?:of|worth of) (?:my |the |our )?(?P<bill>\w+(?: \w+)??)"
        r"(?: payments?| bills?| costs?)? (?:would|could|will|can|does|do|is|are|might|s)"
        r" (?P<side>.+?)(?: (?:cover|pay for|pay|last|fund|handle|keep up with|be worth|buy|get"
        r" me|give me))?(?: for| me| us)? $"
    ),
    # "how many months would my savings cover the mortgage (for)"
    re.compile(
        rf" how many {_UNIT} (?:would|could|will|can|does|do|might) (?P<side>.+?)"
        r" (?:cover|pay for|pay|last|fund|handle|keep up with) (?:my |the |our )?"
        r"(?P<bill>\w+(?: \w+)?)(?: payments?| bills?)?(?: for)? $"
    ),
)
_PER_MONTH = {"month": 1.0, "week": 12 / 52, "year": 12.0}
_POINTERS = frozenset(lexicon.phrases("follow_up", "pronouns"))


@dataclass(frozen=True)
class BillMonths:
    """The task: the recurring payees and the accounts, and how long the one pays the other."""

    bill: str
    unit: str
    account: Question
    today: date
    note: str = ""

    def calls(self) -> list[ToolCall]:
        return [
            ToolCall(EXECUTE_SQL, {"query": regular_query(self.today)}),
            ToolCall(EXECUTE_SQL, {"query": side_query(self.account)}),
        ]

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        payees = [r for r in rows if r.get("typical") is not None]
        bills = [r for r in named(self.bill, payees) if (number(r.get("typical")) or 0.0) > 0]
        accounts = [r for r in resolve(self.account, rows) if r.get("typical") is None]
        note: list[Block] = [(self.note + "\n", [])] if self.note else []
        if not bills:
            said = "I couldn't find that bill among the ones that recur in your transactions"
            return [*note, (said + " of the last six months.", [])]
        if not accounts:
            return [*note, ("I couldn't find that account among your linked accounts.", [])]
        have = sum(r.balance or 0.0 for r in accounts if not r.owed)
        monthly = sum(per_month(b) for b in bills)
        span = monthly * _PER_MONTH[self.unit]
        times = have / span if span else 0.0
        where = join_words([r.label for r in accounts])
        what = join_words([str(b.get("merchant")) for b in bills])
        each = {"month": "a month", "week": "a week", "year": "a year"}[self.unit]
        said = (
            f"{where} ({money(have)}) would cover about {times:,.1f} {self.unit}s of {what}"
            f" ({money(span)} {each})."
        )
        return [
            *note,
            (said[:1].upper() + said[1:], [r.cite for r in accounts] + [b.cite for b in bills]),
        ]


def read_bill_months(text: str, earlier: tuple[str, ...], today: date) -> BillMonths | None:
    """Read a question about how many months (weeks, years) of a regular bill a balance would
    pay, or None."""
    phrase = " " + " ".join(words(text)) + " "
    found = next((m for p in _MONTHS_OF if (m := p.search(phrase))), None)
    if found is None:
        return None
    bill = found["bill"]
    if not set(bill.split()) & BILL_KINDS and len(bill) < 3:
        return None
    named_side = found["side"].strip()
    unit = found["unit"].rstrip("s")
    if named_side.removeprefix("my ") in _POINTERS:
        asked = previous_question(earlier) if earlier else None
        if asked is None or not (asked.kinds or asked.institutions):
            return None
        account = replace(asked, intents=("balances",), extreme=None)
        said = named_as(asked)
        note = f'Taking "{named_side}" as {said}, from your last question:' if said else ""
        return BillMonths(bill, unit, account, today, note)
    account = understand("my " + named_side, own=True)
    if not (account.kinds or account.institutions):
        return None
    return BillMonths(bill, unit, replace(account, intents=("balances",)), today)
