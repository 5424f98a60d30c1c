"""Regular amounts over a span: a fixed bill or pay the person names, per month, over a year
or over a number of paydays ("how much does the mortgage cost me over a full year?", "netflix +
spotify + gym, what's that per month?", "paid every two weeks by Globex - what's that over a
year, 26 paydays?", "after rent comes out, how much of two paycheques is left over?", "and per
year?" after a question about one bill).

The bills and pay are read from the user's transactions: each payee that charged (or paid) the
same amount in at least three of the last six months, matched against the words the question
names it by. Pay counts in, bills count out; each figure cites the account whose rows it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...store.spending import SPENDING
from ...tool_registry import EXECUTE_SQL
from .ask import GENERIC, documentish, understand
from .cite import Block, Result, number
from .figures import Row, rows_of
from .periods import month_start
from .plan import ToolCall
from .spending_ask import CATEGORY_WORDS, WHERE_FROM
from .words import STOPWORDS, join_words, money, word_set, words

_PAYEE = "COALESCE(merchant_name, description)"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "six": 6, "twelve": 12, "a": 1, "an": 1}
# The span asked: a year, a number of months, per month, or a number of paydays.
_YEAR = re.compile(
    r" (?:per|a|each|every|one|1|the|full|whole) (?:full |whole |calendar )?year"
    r"| annual(?:ly)? | yearly | twelve months | 12 months | over the year "
)
_MONTHS = re.compile(r" (\d+|two|three|four|six) months ")
_MONTH = re.compile(r" (?:per|a|each|every|one) month | monthly | month to month ")
# How often something comes ("paid twice a month"): no span to add it up over.
_HOW_OFTEN = re.compile(
    r" (?:once|twice|two times|three times|\d+ times) (?:a|per|each|every) (?:month|year) "
)
_PAYDAYS = re.compile(
    r" (\d+|one|two|three|four|six|twelve|a) (?:paydays?|pay ?cheques?|pay ?checks?|pay ?days?"
    r"|pay periods?|pays) "
)
# What asks for an amount (not for advice: "could I be putting aside").
_ASKS = re.compile(
    r" (?:how much|how big|how large|what|whats|add up|adds up|come to"
    r"|comes to|total|cost|costs|in total|altogether|left over|left) "
)
_ADVICE = re.compile(r" (?:should|could|can|might) (?:i|we) | afford | putting aside | save ")
# A bill a person names by what it is, and the marks of its rows (subcategory or payee words).
_KINDS: dict[str, tuple[str, ...]] = {
    "rent": ("RENT_AND_UTILITIES_RENT",),
    "mortgage": ("LOAN_PAYMENTS_MORTGAGE_PAYMENT",),
    "gym": ("GYMS_AND_FITNESS",),
    "internet": ("INTERNET",),
    "phone": ("TELEPHONE",),
    "insurance": ("INSURANCE",),
    "paycheque": ("INCOME_WAGES",),
    "paycheques": ("INCOME_WAGES",),
    "paycheck": ("INCOME_WAGES",),
    "paychecks": ("INCOME_WAGES",),
    "salary": ("INCOME_WAGES",),
    "wages": ("INCOME_WAGES",),
    "paydays": ("INCOME_WAGES",),
}
BILL_MARKS = {k: marks for k, marks in _KINDS.items() if "INCOME_WAGES" not in marks}
BILL_KINDS = frozenset(BILL_MARKS)
_SPEND = frozenset({"spend", "spent", "spending", "spends"})
# A bill or pay asked of by its amount, with no span ("how much is my rent again?", "what's
# my paycheck"): a bill a month, pay for one payday. Not what is owed on a loan, nor a month's.
_BILL_NAMES = "|".join(sorted(_KINDS))
_AMOUNT = re.compile(
    r" (?:how much|what|whats|what s|how big|how large) (?:is|s|are|was|does|do i pay|i pay)?"
    r" ?(?:for )?"
    rf"(?:my|our|each|every|a|one) (?:\w+ ){{0,2}}(?:{_BILL_NAMES}) "
)
_NOT_AMOUNT = frozenset(
    {"owe", "owed", "left", "balance", "last", "this", "ago", "since", "increase", "raise", "go"}
    | {"rate", "rates", "interest", "apr", "term", "payoff", "principal", "escrow"}
)
# Words that name no payee: what is left may ("netflix", "globex", "the apple.com bill").
_NOT_NAMES = (
    STOPWORDS
    | GENERIC
    | CATEGORY_WORDS
    | word_set("""
per year years yearly annual annually month months monthly full whole twelve over total cost
costs come comes add adds left leftover paydays payday paid pay every two weeks week fortnight
after out goes go what whats that so ok
""")
)
_NOT_PAYEE = frozenset({"com", "bill", "the", "my", "inc", "usa", "web", "online", "payment"})


@dataclass(frozen=True, slots=True)
class Span:
    """How long the question adds the amounts up over: months, or a number of paydays."""

    months: float | None
    paydays: int | None
    said: str


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS.get(word, 1)


def read_span(text: str) -> Span | None:
    """The span a question adds regular amounts over, or None when it names none."""
    phrase = _HOW_OFTEN.sub(" ", " " + " ".join(words(text)) + " ")
    paydays = _PAYDAYS.search(phrase)
    if paydays:
        n = _count(paydays[1])
        return Span(None, n, f"over {n} paydays" if n > 1 else "for one payday")
    months = _MONTHS.search(phrase)
    if _YEAR.search(phrase):
        return Span(12.0, None, "over a year")
    if months:
        return Span(float(_count(months[1])), None, f"over {_count(months[1])} months")
    if _MONTH.search(phrase):
        return Span(1.0, None, "a month")
    return None


def asks_regular(text: str) -> bool:
    """Tell a question that adds up regular bills or pay over a span from advice."""
    phrase = " " + " ".join(words(text)) + " "
    return (
        read_span(text) is not None
        and _ASKS.search(phrase) is not None
        and _ADVICE.search(phrase) is None
    )


def regular_query(today: date) -> str:
    """The payees of the last six months with the same amount in three months or more."""
    since = month_start(today, 5)
    return (
        f"SELECT {WHERE_FROM}, {_PAYEE} AS merchant, MAX(description) AS description,"
        " MAX(subcategory) AS subcategory, COUNT(*) AS charges,"
        " COUNT(DISTINCT substr(date, 1, 7)) AS months, ROUND(AVG(amount), 2) AS typical,"
        " currency FROM transaction_details"
        f" WHERE date >= '{since.isoformat()}' AND (({SPENDING} AND amount > 0)"
        " OR category = 'INCOME')"
        f" GROUP BY {WHERE_FROM}, {_PAYEE}, currency"
        " HAVING COUNT(DISTINCT substr(date, 1, 7)) >= 3"
        " AND MAX(amount) - MIN(amount) <= 0.05 * MAX(ABS(amount))"
        " ORDER BY typical DESC"
    )


def _payee_words(row: Row) -> set[str]:
    said = f"{row.get('merchant') or ''} {row.get('description') or ''}"
    return {w for w in words(said) if len(w) >= 3 and w not in _NOT_PAYEE}


# What the person earns, said without naming the pay ("how much do I make a month", "my
# monthly income", "what do I bring home", "my take-home"): every regular payment coming in.
_EARNS = frozenset({"make", "earn", "earns", "earning", "earnings", "income", "incomes"})
_TAKE_HOME = re.compile(r" (?:take|takes|bring|brings) home ")


def _earnings_asked(text: str) -> bool:
    phrase = " " + " ".join(words(text)) + " "
    return bool(set(phrase.split()) & _EARNS) or _TAKE_HOME.search(phrase) is not None


def named(text: str, rows: list[Row]) -> list[Row]:
    """The regular payees a question names, in its order: by payee name or by kind of bill;
    the pay coming in first when the question asks what the person earns."""
    found: list[Row] = []
    if _earnings_asked(text):
        found += [r for r in rows if (number(r.get("typical")) or 0.0) < 0]
    for word in words(text):
        marks = _KINDS.get(word, ())
        for row in rows:
            by_kind = any(m in (row.get("subcategory") or "") for m in marks)
            if (by_kind or word in _payee_words(row)) and all(row is not f for f in found):
                found.append(row)
    return found


def _per_month(row: Row) -> float:
    """A payee's amount a month: pay every two weeks comes 26 times a year."""
    typical = abs(number(row.get("typical")) or 0.0)
    charges, months = number(row.get("charges")) or 1.0, number(row.get("months")) or 1.0
    return typical * 26 / 12 if charges / months > 1.7 else typical


def per_month(row: Row) -> float:
    """A recurring payee's amount a month (pay every two weeks: 26 a year, over twelve)."""
    return _per_month(row)


def _times(row: Row, span: Span) -> tuple[float, str]:
    """What a payee comes to over the span, and how it was counted."""
    typical = abs(number(row.get("typical")) or 0.0)
    if span.paydays is not None:
        income = (number(row.get("typical")) or 0.0) < 0
        count = span.paydays if income else 1
        return typical * count, f"{money(typical)} x {count}" if count > 1 else money(typical)
    months = span.months or 1.0
    per = _per_month(row)
    if per != typical and months == 12:
        return typical * 26, f"{money(typical)} every two weeks x 26"
    if months == 1:
        if per == typical:
            return per, f"{money(typical)} a month"
        return per, f"{money(typical)} every two weeks x 26 / 12"
    return per * months, f"{money(per)} a month x {months:g}"


@dataclass(frozen=True)
class Regular:
    """The task: the regular payees' query, and their amounts over the span."""

    text: str
    span: Span
    today: date
    note: str = ""

    def calls(self) -> list[ToolCall]:
        return [ToolCall(EXECUTE_SQL, {"query": regular_query(self.today)})]

    def write(self, results: list[Result]) -> list[Block]:
        rows = [r for r in rows_of(results) if r.get("typical") is not None]
        chosen = named(self.text, rows)
        note: list[Block] = [(self.note + "\n", [])] if self.note else []
        if not chosen:
            return [
                *note,
                (
                    "I couldn't find that among the bills and pay that recur in your"
                    " transactions of the last six months.",
                    [],
                ),
            ]
        figures = [(row, *_times(row, self.span)) for row in chosen]
        pay = [f for f in figures if (number(f[0].get("typical")) or 0.0) < 0]
        bills = [f for f in figures if (number(f[0].get("typical")) or 0.0) >= 0]
        lines: list[Block] = [
            (f"- {row.get('merchant')}: {money(total)} ({how}, {row.label})\n", [row.cite])
            for row, total, how in figures
        ]
        cites = [row.cite for row in chosen]
        paid_in = sum(t for _, t, _ in pay)
        paid_out = sum(t for _, t, _ in bills)
        names = join_words([str(r.get("merchant")) for r, _, _ in bills])
        if pay and bills:
            left = paid_in - paid_out
            said = (
                f"Your pay {self.span.said} comes to {money(paid_in)}; after {names}"
                f" ({money(paid_out)}), {money(left)} is left over."
            )
        elif pay:
            said = f"Your pay from {join_words([str(r.get('merchant')) for r, _, _ in pay])}"
            said += f" comes to {money(paid_in)} {self.span.said}."
        else:
            said = f"{names} come{'s' if len(bills) == 1 else ''} to {money(paid_out)}"
            said += f" {self.span.said}" + (" in total." if len(bills) > 1 else ".")
        return [*note, (said + "\n", cites), *lines]


# A payee's charge asked of by its amount: "what's my hulu bill", "how much does netflix cost
# me", "how much is the spotify subscription" (the payee's name is for the rows to match).
_CHARGE = re.compile(
    r" (?:how much|what|whats|what s) (?:is|s|was)? ?(?:my|the|our) (?P<a>\w+ ){1,2}"
    r"(?:bill|subscription|membership|charge|payment) "
    r"| how much (?:does|do|is) (?:my |the )?(?P<b>\w+ ){1,2}(?:cost|costing|charge|charging)"
    r"(?: me| us)? "
    # "how much do i pay for hulu", "what am i paying for spotify", "what do we pay comcast"
    r"| (?:how much|what) (?:do|does|am|are) (?:i|we) (?:pay|paying) (?:for |to )?"
    r"(?!(?:in|on|off|down|back|at|into|out|over|up|with) )(?:my |the |our )?"
    r"(?P<c>\w+ ){1,2}(?:a month |each month |every month |per month |monthly )?$"
)


def _unspanned(text: str) -> Span | None:
    """The span of a bill or pay asked of by its amount alone: a bill a month, pay a payday."""
    phrase = " " + " ".join(words(text)) + " "
    said = set(phrase.split())
    if said & (_NOT_AMOUNT | _SPEND) or documentish(text):
        return None
    if _AMOUNT.search(phrase):
        return Span(1.0, None, "a month") if said & BILL_KINDS else Span(None, 1, "for one payday")
    if _TAKE_HOME.search(phrase) and _ASKS.search(phrase) and not _ADVICE.search(phrase):
        return Span(None, 1, "for one payday")  # "what's my take home pay"
    charge = _CHARGE.search(phrase)
    asked = understand(text)
    if charge is None or asked.kinds or asked.institutions or asked.tickers:
        return None
    payee = set((charge["a"] or charge["b"] or charge["c"] or "").split())
    return Span(1.0, None, "a month") if payee - _NOT_NAMES - _NOT_PAYEE_WORDS else None


_NOT_PAYEE_WORDS = frozenset(
    {"it", "that", "this", "a", "an", "card", "credit", "minimum", "car", "recurring", "regular"}
    | {"biggest", "largest", "latest", "last", "next", "usual", "typical", "average", "total"}
)


_ALONE = re.compile(r"^(?:and |so |ok |what about |how about )?(?:what s that |whats that )?")


def read_regular(text: str, earlier: tuple[str, ...], today: date) -> Regular | None:
    """Read a question that adds up regular bills or pay over a span; a span alone ("and per
    year?") is the last question's bill over it."""
    span = read_span(text) or _unspanned(text)
    if span is None:
        return None
    if read_span(text) is None:
        return Regular(text, span, today)
    if not asks_regular(text) and len(words(text)) > 4:
        return None
    said = set(words(text))
    if said & _SPEND:
        return None  # "how much do I spend a month on groceries": the spending answers
    if not said & set(_KINDS) and not _earnings_asked(text):
        # No bill named by kind: a payee's name may be ("netflix", "globex"), but not a
        # ticker, an account or a rule ("the 401k limit per year", "the irs penalty a month")
        asked = understand(text)
        if documentish(text) or asked.tickers or asked.kinds or asked.institutions:
            return None
    if said & set(_KINDS) or said - _NOT_NAMES or _earnings_asked(text):
        return Regular(text, span, today) if asks_regular(text) else None
    if not earlier:
        return None
    last = earlier[-1]
    return Regular(f"{last} {text}", span, today, f"Taking that as the same bill, {span.said}:")
