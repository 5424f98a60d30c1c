"""The user's regular outgoings, read from their transactions for the advice answers: the
fixed bills that recur at the same amount every month (rent, the mortgage, subscriptions)
and what they spent in all last month, each figure citing the accounts whose rows it summed.

`bills_queries` plans the two SELECTs; `Outgoings.of` reads their rows back from the turn's
results (told apart from account rows by their columns); `months` says how long an amount of
cash would cover them; `named` picks the bills a question names ("with rent coming out").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...store.spending import SPENDING
from .cite import number
from .figures import Row
from .periods import month_period, month_start
from .spending_ask import WHERE_FROM
from .words import join_words, money

_PAYEE = "COALESCE(merchant_name, description)"
# A bill a person names, and the transaction detail (or payee words) it is.
_BILL_WORDS: dict[str, tuple[str, ...]] = {
    "rent": ("RENT_AND_UTILITIES_RENT", "rent"),
    "mortgage": ("LOAN_PAYMENTS_MORTGAGE_PAYMENT", "mortgage"),
    "car payment": ("LOAN_PAYMENTS_CAR_PAYMENT",),
    "insurance": ("INSURANCE", "insurance"),
    "gym": ("GYMS_AND_FITNESS", "fitness", "gym"),
    "internet": ("INTERNET", "xfinity", "comcast"),
}
_ALL_BILLS = re.compile(r"\b(bills|outgoings|fixed costs|expenses|essentials)\b")


def bills_queries(today: date) -> list[str]:
    """The fixed monthly bills of the last six months, and last month's spending by category."""
    since = month_start(today, 5)
    last = month_period(month_start(today, 1), "last month")
    fixed = (
        f"SELECT {WHERE_FROM}, {_PAYEE} AS merchant, MAX(subcategory) AS subcategory,"
        " COUNT(DISTINCT substr(date, 1, 7)) AS months, ROUND(AVG(amount), 2) AS typical,"
        " MAX(date) AS last_charged, currency FROM transaction_details"
        f" WHERE date >= '{since.isoformat()}' AND {SPENDING} AND amount > 0"
        f" GROUP BY {WHERE_FROM}, {_PAYEE}, currency"
        " HAVING COUNT(DISTINCT substr(date, 1, 7)) >= 3"
        " AND COUNT(*) <= COUNT(DISTINCT substr(date, 1, 7)) + 1"
        " AND MAX(amount) - MIN(amount) <= 0.05 * MAX(amount)"
        " ORDER BY typical DESC"
    )
    spent = (
        f"SELECT {WHERE_FROM}, category, '{last.label}' AS period, COUNT(*) AS transactions,"
        f" ROUND(SUM(amount), 2) AS total, currency FROM transaction_details"
        f" WHERE {last.where()} AND {SPENDING}"
        f" GROUP BY {WHERE_FROM}, category, currency ORDER BY total DESC"
    )
    return [fixed, spent]


def _value(row: Row, column: str) -> float:
    return number(row.get(column)) or 0.0


@dataclass(frozen=True, slots=True)
class Outgoings:
    """The fixed bills (largest first) and last month's spending rows by category."""

    bills: tuple[Row, ...]
    spent: tuple[Row, ...]

    @staticmethod
    def of(rows: list[Row]) -> Outgoings:
        bills = tuple(r for r in rows if r.get("typical") is not None)
        spent = tuple(r for r in rows if r.get("total") is not None and r.get("category"))
        return Outgoings(bills, spent)

    @property
    def monthly(self) -> float:
        return sum(_value(r, "typical") for r in self.bills)

    @property
    def last_month(self) -> float:
        return sum(_value(r, "total") for r in self.spent)

    @property
    def period(self) -> str:
        return next((str(r.get("period")) for r in self.spent), "last month")

    def named(self, text: str) -> tuple[Row, ...]:
        """The bills a question names: "rent", "the mortgage"; all of them for "bills"."""
        lowered = text.lower()
        found = []
        for word, marks in _BILL_WORDS.items():
            if re.search(rf"\b{word}\b", lowered):
                found += [
                    r
                    for r in self.bills
                    if any(
                        m in (r.get("subcategory") or "") or m in (r.get("merchant") or "").lower()
                        for m in marks
                    )
                ]
        if not found and _ALL_BILLS.search(lowered):
            return self.bills
        return tuple(r for k, r in enumerate(found) if all(r is not o for o in found[:k]))


def bill_line(row: Row) -> str:
    """One bill as a list item: "- Rocket Mortgage: $2,140.00 a month, from your Chase
    checking account"."""
    amount = money(_value(row, "typical"), row.currency)
    way = "on" if row.get("account_type") == "credit" or "card" in row.label.lower() else "from"
    return f"- {row.get('merchant')}: {amount} a month, {way} {row.label}\n"


def bill_names(rows: tuple[Row, ...]) -> str:
    """Name bills inside a sentence: "Rocket Mortgage at $2,140.00 a month"."""
    said = [f"{r.get('merchant')} at {money(_value(r, 'typical'))} a month" for r in rows]
    return join_words(said)


def said_bills(text: str, rows: tuple[Row, ...]) -> str:
    """The bills as the question named them: "your rent", "your mortgage", "those bills"."""
    lowered = text.lower()
    named = [w for w in _BILL_WORDS if re.search(rf"\b{w}\b", lowered)]
    return f"your {join_words(named)}" if named else "your regular bills"


def months(amount: float, monthly: float) -> str:
    """How long `amount` covers `monthly`, as a person says it: "about 8.5 months"."""
    if monthly <= 0:
        return "indefinitely"
    span = amount / monthly
    return f"about {span:.1f} months" if span < 24 else f"about {span / 12:.1f} years"


_PAY = re.compile(
    r"\$?(\d[\d,]*(?:\.\d+)?)k?\s*(?:(?:a|per|each|every)\s+)?"
    r"(two weeks|2 weeks|other week|fortnight|biweekly|bi-weekly|week|month|year)\b"
)
_PER_MONTH = {"week": 52 / 12, "month": 1.0, "year": 1 / 12}


def stated_pay(text: str) -> tuple[float, str] | None:
    """The pay a question states ("i make around 2210 every two weeks"): a month's worth, and
    how it was said."""
    match = _PAY.search(text.lower())
    if match is None or not re.search(r"\b(make|earn|paid|pay|income|take home|salary)", text):
        return None
    amount = float(match[1].replace(",", ""))
    every = match[2]
    factor = _PER_MONTH.get(every, 26 / 12)  # two weeks, every other week, a fortnight
    said = "every two weeks" if factor == 26 / 12 else f"a {every}"
    return amount * factor, f"{money(amount)} {said}"
