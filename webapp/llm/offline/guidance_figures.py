"""The user's figures a guided answer sets against a rule: the accounts a question names,
the account the money would come from, and the paychecks and mortgage payments among their
transactions (how much, how often, into which account), each kept with its rows to cite."""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from .ask import Question
from .cite import Block, number
from .figures import Row
from .words import count_of, join_words, money, sentence

_KINDS: dict[str, Callable[[Row], bool]] = {
    "checking": lambda r: r.get("account_subtype") == "checking",
    "savings": lambda r: r.get("account_subtype") == "savings",
    "depository": lambda r: r.kind == "depository",
    "credit": lambda r: r.kind == "credit",
    "investment": lambda r: r.kind == "investment",
    "crypto": lambda r: r.kind == "crypto",
    "property": lambda r: r.kind == "property",
    "mortgage": lambda r: r.get("account_subtype") == "mortgage",
    "loan": lambda r: r.kind == "loan",
    "retirement": lambda r: r.get("account_subtype") in ("401k", "403b", "ira", "roth"),
}
# How often pay comes, by the days between paychecks: (most days, paychecks a year, said as).
_SCHEDULES = ((9, 52, "every week"), (15, 26, "every two weeks"), (17, 24, "twice a month"))
_MONTHLY = (12, "every month")
_STATED = (
    (r"every (other|two|2) weeks?|biweekly|fortnight", 26, "every two weeks"),
    (r"twice a month|semi ?monthly", 24, "twice a month"),
    (r"every week|weekly|a week", 52, "every week"),
    (r"a month|monthly|per month", 12, "every month"),
)


def of_kind(rows: list[Row], *kinds: str) -> list[Row]:
    """Return the rows of any of these kinds of account, with a balance."""
    return [r for r in rows if r.balance is not None and any(_KINDS[k](r) for k in kinds)]


def named(question: Question, rows: list[Row]) -> list[Row]:
    """Return the rows whose institution or account name the question says."""
    said = set(question.names) | {w for i in question.institutions for w in i.split()}
    found = []
    for row in rows:
        place = f"{row.get('institution_name') or ''} {row.get('account_name') or ''}"
        if said & set(re.findall(r"[a-z0-9]+", place.lower())):
            found.append(row)
    return found


def narrowed(question: Question, rows: list[Row]) -> list[Row]:
    """Return the rows the question narrows to (a kind of account it names, then one of its
    institutions or accounts by name), or all of them when it names none of theirs."""
    kinds = [k for k in question.kinds if k in _KINDS]
    kept = [r for r in rows if any(_KINDS[k](r) for k in kinds)] or rows
    return named(question, kept) or kept


def absent(question: Question, banks: list[Row]) -> list[Block]:
    """Say so when the question names a kind of bank account the user has none of ("my
    savings" with checking alone), before the answer turns to the accounts they do have."""
    return [
        (f"\nYou have no {kind} account linked, so here is what your bank accounts hold.", [])
        for kind in ("checking", "savings")
        if kind in question.kinds and not of_kind(banks, kind)
    ]


def source(question: Question, accounts: list[Row]) -> list[Row]:
    """Return the bank accounts the money would come from: those the question names, else
    every bank account."""
    return narrowed(question, of_kind(accounts, "depository"))


def listed(rows: list[Row]) -> str:
    """Say accounts with their balances: "your Chase checking account ($4,820.33) and ..."."""
    return join_words([f"{r.label} ({r.amount(abs(r.balance or 0.0))})" for r in rows])


def accounts_named(rows: list[Row]) -> str:
    """Name several accounts together: "your two checking accounts", "your three bank
    accounts"."""
    subtypes = {r.get("account_subtype") for r in rows}
    kind = f"{subtypes.pop()} account" if len(subtypes) == 1 and None not in subtypes else ""
    return f"your {count_of(len(rows), kind or 'bank account')}"


def funded(rows: list[Row], asked: float, into: str) -> list[Block]:
    """What the accounts hold, and what putting the amount in would leave (or lack)."""
    have = total(rows)
    if len(rows) == 1:
        holds = f"{sentence(rows[0].label)} holds {money(have)}"
    else:
        holds = f"{sentence(accounts_named(rows))} hold {money(have)} between them"
        holds += f": {listed(rows)}"
    if have >= asked:
        there = " there" if len(rows) == 1 else ""
        said = (
            f"{holds}. Putting {money(asked)} into {into} would leave {money(have - asked)}{there}."
        )
    else:
        said = (
            f"{holds}. {money(asked)} is {money(asked - have)} more than that, so you "
            f"couldn't put it all into {into} from there today."
        )
    return [(f"\n{said}", cites(rows))]


def total(rows: list[Row]) -> float:
    return sum(abs(r.balance or 0.0) for r in rows)


def whole(amount: float) -> str:
    """A rule's round figure as the page writes it: "$250,000", "$7,000"."""
    shown = money(amount)
    return shown[:-3] if shown.endswith(".00") else shown


def cites(rows: list[Row]) -> list[dict[str, Any]]:
    return [r.cite for r in rows]


def _day(row: Row) -> date | None:
    try:
        return date.fromisoformat(str(row.get("date"))[:10])
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Flow:
    """Money that comes or goes on a schedule: a paycheck, a mortgage payment."""

    payee: str  # the employer or the lender, as the rows name it
    amount: float
    per_year: int
    every: str  # "every two weeks"
    rows: tuple[Row, ...]
    stated: bool = False  # said in the question, not seen in the rows

    @property
    def account(self) -> str:
        """The account it comes into or goes out of: "your Chase checking account"."""
        return self.rows[0].label if self.rows else "your account"

    @property
    def latest(self) -> str:
        day = _day(self.rows[0]) if self.rows else None
        return f"{day:%B} {day.day}, {day.year}" if day else ""


def flow(rows: list[Row], keep: str) -> Flow | None:
    """Return the regular flow of the rows whose category or subcategory is `keep`: the
    payee with the most rows, its latest amount, and how often it comes."""
    mine = [r for r in rows if keep in (r.get("category"), r.get("subcategory"))]
    payees: dict[str, list[Row]] = {}
    for row in mine:
        payees.setdefault(str(row.get("merchant_name") or row.get("description")), []).append(row)
    if not payees:
        return None
    payee, group = max(payees.items(), key=lambda item: len(item[1]))
    group.sort(key=lambda r: str(r.get("date")), reverse=True)
    days = [d for d in (_day(r) for r in group) if d]
    gaps = [(a - b).days for a, b in zip(days, days[1:], strict=False) if a != b]
    gap = statistics.median(gaps) if gaps else 30
    per_year, every = next(((n, e) for most, n, e in _SCHEDULES if gap <= most), _MONTHLY)
    return Flow(payee, abs(number(group[0].get("amount")) or 0.0), per_year, every, tuple(group))


def stated_schedule(question: Question) -> tuple[int, str] | None:
    """How often the question says pay comes ("I'm paid every two weeks"): the paychecks a
    year and how the answer says it, or None when it doesn't say."""
    said = question.text.lower()
    return next(((n, e) for pattern, n, e in _STATED if re.search(pattern, said)), None)


def stated_pay(question: Question, amounts: list[float]) -> Flow | None:
    """The pay a question says ("i get paid 2850 every other week"), when the rows have none."""
    if not amounts:
        return None
    said = question.text.lower()
    per_year, every = next(
        ((n, e) for pattern, n, e in _STATED if re.search(pattern, said)), (26, "every two weeks")
    )
    return Flow("your employer", amounts[0], per_year, every, (), stated=True)


def percent_said(text: str) -> float | None:
    """Return a percentage the question names ("10% of each paycheck"), or None."""
    found = re.search(r"(\d+(?:\.\d+)?)\s*(?:%|percent\b)", text.lower())
    return float(found[1]) if found else None


def as_of(rows: list[Row]) -> int | None:
    """Return the latest year the rows speak of (when they synced, or a transaction's date):
    the "now" a rule's years count to."""
    found = [str(r.get("synced_at") or r.get("date") or "")[:4] for r in rows]
    years = [int(y) for y in found if y.isdigit()]
    return max(years) if years else None
