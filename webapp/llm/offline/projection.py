"""Where a regular saving leaves the person after a while, counted and not forecast ("if I keep
moving $500 a month into savings, what's it gonna be a year from now?", "if I stash $300 from
every paycheck, how much will I have after a year?").

Three things make the question: an amount, how often it is put away (a month, a week, each
paycheck) and for how long (a year from now, in six months, over the next two years). Put into
an account the question names, the account's balance today is the start; else what was put
away is the answer. Paychecks are counted from the user's own pay (every two weeks: 26 a year),
read from the payees that recur in their transactions (`regular.py`). No interest and no
returns are counted, and the answer says so. Each figure cites the rows it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from ...tool_registry import EXECUTE_SQL
from .ask import Question, understand
from .cite import Block, Result, number
from .figures import Row, rows_of
from .plan import ToolCall
from .regular import regular_query
from .sides import resolve, side_query
from .words import bare_amounts, join_words, money, words

# Putting money away, again and again: "keep moving", "stash", "save", "set aside".
_PUT = re.compile(
    r" (?:mov(?:e|ing)|put(?:ting)?|sav(?:e|ing)|stash(?:ing)?|add(?:ing)?|deposit(?:ing)?"
    r"|set(?:ting)? aside|transfer(?:ring)?|contribut(?:e|ing)|sock(?:ing)? away|tuck(?:ing)?"
    r" away|throw(?:ing)?|drop(?:ping)?|park(?:ing)?|stick(?:ing)?|invest(?:ing)?) "
)
# How often: a month, a week, every two weeks, each paycheck (the person's own pay).
_EVERY = (
    (
        re.compile(
            r" (?:a|per|each|every) (?:pay ?check|pay ?cheque|payday|pay day|pay period) "
            r"| (?:from|out of|off) (?:each|every|my|every single) (?:pay ?check|pay ?cheque"
            r"|payday|pay day) "
        ),
        "paycheck",
    ),
    (re.compile(r" (?:every|each) (?:two|2|other) weeks | biweekly | fortnightly "), "fortnight"),
    (re.compile(r" (?:a|per|each|every) week | weekly "), "week"),
    (re.compile(r" (?:a|per|each|every) month | monthly | (?:a|per) mo "), "month"),
)
_PER_YEAR = {"fortnight": 26.0, "week": 52.0, "month": 12.0}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_NUMBERS |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_NUMBERS |= {"eighteen": 18, "twenty": 20, "eighteen months": 18}
_COUNT = r"(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|eighteen)"
# For how long: "a year from now", "after 6 months", "in two years", "over the next 18 months".
_HORIZON = re.compile(
    rf" (?:in|after|over|for|within|by) (?:the |a )?(?:next |coming |another )?{_COUNT}"
    r" (years?|months?|weeks?)\b"
    rf"| {_COUNT} (years?|months?|weeks?) (?:from now|from today|later|down the road|out)"
    r"| (?:by |this time )next year"
)
# What asks for the result ("whats it gonna be", "how much will i have"), not advice.
_ASKS = re.compile(
    r" (?:what|whats|how much|where|how big|how many) .*\b(?:be|have|end up|get|reach|hit"
    r"|total|come to|comes to|add up|adds up|look like|at|sit)\b"
)
_ADVICE = re.compile(r" (?:should|shall|ought|enough|worth|better|smart|wise|bump) ")
_INTO = re.compile(r" (?:in|into|to|onto) (?:my |the |our )?(?P<to>\w+(?: \w+)?)")


@dataclass(frozen=True)
class Projection:
    """The task: the account put into (if named), the user's pay (for each paycheck), and
    what the savings come to."""

    amount: float
    every: str  # "month", "week", "fortnight", "paycheck"
    months: float
    horizon: str  # "a year from now", "after 6 months"
    into: Question | None
    today: date

    def calls(self) -> list[ToolCall]:
        calls: list[ToolCall] = []
        if self.into is not None:
            calls.append(ToolCall(EXECUTE_SQL, {"query": side_query(self.into)}))
        if self.every == "paycheck":
            calls.append(ToolCall(EXECUTE_SQL, {"query": regular_query(self.today)}))
        return calls

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        times, how, cites = self._times(rows)
        if times is None:
            return [
                (
                    "I couldn't find your pay among the payments that recur in your"
                    " transactions of the last six months, so I can't count your paychecks.",
                    [],
                )
            ]
        added = self.amount * times
        each = f"{money(self.amount)} {_SAID[self.every]}"
        if self.into is None:
            return [
                (
                    f"Putting away {each}, {self.horizon} you would have {money(added)} set"
                    f" aside ({how}), not counting any interest.",
                    cites,
                )
            ]
        accounts = [r for r in resolve(self.into, rows) if r.get("typical") is None]
        if not accounts:
            return [("I couldn't find that account among your linked accounts.", [])]
        start = sum(r.balance or 0.0 for r in accounts)
        named = join_words([r.label for r in accounts])
        holds = "holds" if len(accounts) == 1 else "hold"
        said = (
            f"Putting {each} into {named}, {self.horizon} it would be at"
            f" {money(start + added)}: the {money(start)} it {holds} today plus {money(added)}"
            f" ({how}), not counting interest."
        )
        return [(said[:1].upper() + said[1:], [r.cite for r in accounts] + cites)]

    def _times(self, rows: list[Row]) -> tuple[float | None, str, list[dict[str, object]]]:
        """How many times the amount is put away over the span, how that was counted, and
        the rows it was counted from."""
        if self.every != "paycheck":
            times = round(self.months * _PER_YEAR[self.every] / 12)
            return times, f"{times} {_UNITS[self.every]} x {money(self.amount)}", []
        pay = [
            r
            for r in rows
            if (number(r.get("typical")) or 0.0) < 0
            and "INCOME_WAGES" in (r.get("subcategory") or "")
        ]
        if not pay:
            return None, "", []
        top = max(pay, key=lambda r: abs(number(r.get("typical")) or 0.0))
        charges, months = number(top.get("charges")) or 1.0, number(top.get("months")) or 1.0
        per_month = charges / months
        cadence = "week" if per_month > 3.5 else "fortnight" if per_month > 1.7 else "month"
        times = round(self.months * _PER_YEAR[cadence] / 12)
        paid = f"{top.get('merchant')} pays you {_SAID[cadence]}"
        return times, f"{times} paydays x {money(self.amount)}: {paid}", [top.cite]


_SAID = {
    "month": "a month",
    "week": "a week",
    "fortnight": "every two weeks",
    "paycheck": "from each paycheck",
}
_UNITS = {"month": "months", "week": "weeks", "fortnight": "fortnights"}


def _horizon(phrase: str) -> tuple[float, str] | None:
    """How many months ahead the question looks, and how to say it."""
    found = _HORIZON.search(phrase)
    if found is None:
        return None
    if found[0].strip().endswith("next year"):
        return 12.0, "a year from now"
    count, unit = (found[1], found[2]) if found[1] else (found[3], found[4])
    n = int(count) if count.isdigit() else _NUMBERS.get(count, 1)
    months = {"year": 12.0 * n, "month": float(n), "week": n * 12 / 52}[unit.rstrip("s")]
    if unit.startswith("year"):
        said = "a year from now" if n == 1 else f"{n} years from now"
    else:
        said = f"{n} {unit.rstrip('s')}{'s' if n != 1 else ''} from now"
    return months, said


def _into(phrase: str) -> Question | None:
    """The account the money goes into ("into savings", "to my chase savings"), if named."""
    for found in _INTO.finditer(phrase):
        asked = understand("my " + found["to"], own=True)
        if asked.kinds or asked.institutions:
            return replace(asked, intents=("balances",))
    return None


def read_projection(text: str, today: date) -> Projection | None:
    """Read a question about where a regular saving leaves the person after a while, or None."""
    phrase = " " + " ".join(words(text)) + " "
    if not _PUT.search(phrase) or _ADVICE.search(phrase) or not _ASKS.search(phrase):
        return None
    every = next((name for pattern, name in _EVERY if pattern.search(phrase)), None)
    horizon = _horizon(phrase)
    asked = understand(text)
    amounts = list(asked.amounts) or [a for a in bare_amounts(text) if a >= 5]
    if every is None or horizon is None or not amounts:
        return None
    months, said = horizon
    return Projection(amounts[0], every, months, said, _into(phrase), today)
