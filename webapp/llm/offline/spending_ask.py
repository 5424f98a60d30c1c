"""A question about the user's money over time, as the offline engine reads it, and its SQL.

Self-contained on purpose: the engine's question model will be reworked, and this reading
of "what did I spend on groceries last month?" plugs into it through one call
(`read_spending`). It names what is asked (spending, this month against last, cash flow,
recurring charges, largest purchases, how the month is going), for which period (this
month, last month, a named month, the last 30 days), of which category or merchant, and
whether only the user's uploaded files are meant. The queries read `transaction_details`
and always select `source`, `source_account_id` and `file_id`, so each figure cites the
accounts (or the file) whose rows it summed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal, TypeAlias

# What counts as spending: one rule for the answers and the pages' charts.
from ...store.spending import SPENDING
from .ask import CAN_SPEND, GENERIC, INSTITUTIONS
from .periods import MONTHS, Period, month_period, month_start, named_period, this_month

SpendingKind: TypeAlias = Literal[
    "spend", "categories", "compare", "cash_flow", "income", "recurring", "largest", "overview"
]

# The columns that name where each row came from: an account, or a file of its own.
WHERE_FROM = "source, source_account_id, account_name, institution_name, file_id, file_name"
ROW_COLUMNS = (
    f"{WHERE_FROM}, transaction_id, date, description, merchant_name, category, subcategory,"
    " amount, currency"
)

# (words a person uses, the filter, how the answer names it); more specific first.
_CATEGORIES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("grocery", "groceries", "supermarket"),
        "subcategory = 'FOOD_AND_DRINK_GROCERIES'",
        "groceries",
    ),
    (("coffee", "coffees"), "subcategory = 'FOOD_AND_DRINK_COFFEE'", "coffee"),
    (
        ("dining", "restaurant", "restaurants", "eating out", "eat out", "takeout", "fast food"),
        "subcategory IN ('FOOD_AND_DRINK_RESTAURANT', 'FOOD_AND_DRINK_FAST_FOOD')",
        "dining out",
    ),
    (("food",), "category = 'FOOD_AND_DRINK'", "food and drink"),
    (("gas", "fuel", "petrol", "gasoline"), "subcategory = 'TRANSPORTATION_GAS'", "fuel"),
    (
        ("ride", "rides", "uber", "lyft", "taxi", "taxis"),
        "subcategory = 'TRANSPORTATION_TAXIS_AND_RIDE_SHARES'",
        "rides",
    ),
    (("transportation", "transport"), "category = 'TRANSPORTATION'", "transportation"),
    (
        ("travel", "trip", "trips", "flight", "flights", "hotel", "hotels"),
        "category = 'TRAVEL'",
        "travel",
    ),
    (("rent",), "subcategory = 'RENT_AND_UTILITIES_RENT'", "rent"),
    (("mortgage",), "subcategory = 'LOAN_PAYMENTS_MORTGAGE_PAYMENT'", "the mortgage"),
    (
        ("utilities", "utility", "bills", "electricity"),
        "category = 'RENT_AND_UTILITIES'",
        "bills and utilities",
    ),
    (("entertainment", "streaming"), "category = 'ENTERTAINMENT'", "entertainment"),
    (("shopping", "merchandise"), "category = 'GENERAL_MERCHANDISE'", "shopping"),
    (("gym", "fitness"), "subcategory = 'PERSONAL_CARE_GYMS_AND_FITNESS_CENTERS'", "the gym"),
)
# The words that name a category: what a typo of one is read as (`fuzzy.py`).
CATEGORY_WORDS = frozenset(w for words, _, _ in _CATEGORIES for p in words for w in p.split()) | {
    "cost",
    "costs",
    "costing",
    "spend",
    "spent",
    "spending",
    "paid",
    "expenses",
    "purchases",
    "refund",
    "refunds",
    "refunded",
    "charged",
    "charges",
    "month",
    "months",
    "weeks",
}
_NOT_MERCHANT = frozenset(
    {"the", "a", "my", "all", "last", "this", "past", "average", "least", "most", "in", "for"}
    | set(MONTHS)
    | {w for words, _, _ in _CATEGORIES for phrase in words for w in phrase.split()}
)
_MERCHANT = re.compile(
    r"\b(?:at|on|from|with)\s+([a-z0-9][a-z0-9&.']*(?:\s+[a-z0-9][a-z0-9&.']*)?)"
    # the payee as what was paid: "how much did i pay oakwood", "what have we paid comcast"
    r"|\b(?:pay|paid|paying|give|gave|send|sent)\s+(?!(?:for|off|down|back|out|in|to|into|on"
    r"|it|that|this|them|me|us|you|him|her|my|our|the|a|an|all|so|too|more|less|much|each"
    r"|every|extra|interest|taxes|tax|fees|bills|attention|cash|monthly|yearly)\b)"
    r"([a-z0-9][a-z0-9&.']*(?:\s+[a-z0-9][a-z0-9&.']*)?)"
)
# The payee as who charged: "how much did planet fitness charge me", "what has hulu billed us"
# (its name may hold a category's word: "planet fitness" is a payee, not all the gym's charges)
_CHARGER = re.compile(
    r"\b(?:did|does|do|has|have|will|would)\s+([a-z0-9][a-z0-9&.']*(?:\s+[a-z0-9][a-z0-9&.']*)?)"
    r"\s+(?:charge|charged|bill|billed|cost)\s+(?:me|us)\b"
)
_NOT_CHARGER = frozenset({"the", "a", "an", "my", "our", "your", "it", "they", "that", "this"})


@dataclass(frozen=True, slots=True)
class SpendingAsk:
    """A question about spending over time, read."""

    kind: SpendingKind
    period: Period | None
    category: tuple[str, str] | None = None  # (SQL filter, name)
    merchant: str | None = None
    files_only: bool = False


def _category(text: str) -> tuple[str, str] | None:
    for words, where, name in _CATEGORIES:
        if any(re.search(rf"\b{re.escape(word)}\b", text) for word in words):
            return where, name
    return None


def _merchant(text: str) -> str | None:
    for match in _MERCHANT.finditer(text):
        named = match.group(1) or match.group(2)
        words = [w for w in named.split() if w not in _NOT_MERCHANT]
        # Only the leading words that are not a period or a category ("at Safeway last month").
        kept = []
        for word in named.split():
            if word in _NOT_MERCHANT:
                break
            kept.append(word)
        if kept and words:
            name = re.sub(r"[^a-z0-9&. ]", "", " ".join(kept)).strip()
            if len(name) >= 3:
                return name
    return None


def _charger(text: str) -> str | None:
    """Who charged, named as the one that did: not a bank ("did chase charge me": its fees),
    a card of the user's ("my amex") or a pronoun."""
    found = _CHARGER.search(text)
    if found is None:
        return None
    named = re.sub(r"[^a-z0-9&. ]", "", found[1]).split()
    if not named or named[0] in _NOT_CHARGER or any(w in i for w in named for i in INSTITUTIONS):
        return None
    return " ".join(named) if len(" ".join(named)) >= 3 else None


_CAPITAL = re.compile(r"(?<=[a-z,] )[A-Z][a-z'&]+(?: [A-Z][a-z'&]+)*")


_COST_ME = re.compile(
    r"\b(cost|costs|costing|charged?|billed?|set) (me|us)\b|\b(did|do) (i|we) pay\b"
)


def _named_payee(question: str) -> str | None:
    """A payee named with capitals inside the sentence ("that Seattle Hilton stay"), not an
    institution, a kind of account or a month."""
    for match in _CAPITAL.finditer(question):
        kept = [
            w
            for w in match[0].lower().split()
            if w not in _NOT_MERCHANT and w not in GENERIC and not any(w in i for i in INSTITUTIONS)
        ]
        if kept and all(len(w) >= 3 for w in kept):
            return " ".join(kept)
    return None


_SPEND_WORD = r"\b(spend|spent|spending|expenses?)\b"
# What says money went out.
_SPENT = (
    r"\b(spend|spent|spending|expenses?|cost|costs|costing|paid|pay for|purchases?"
    r"|transactions?)\b"
    r"|\b(did|do) (i|we) pay\b|\b(went|go|goes|gone) on\b|\bset (me|us) back\b"
)
# Each kind of question and what says it, tried in this order.
_KINDS: tuple[tuple[SpendingKind, str], ...] = (
    ("overview", r"\bhow am i doing\b|\bhow('s| is) my (month|spending|budget)\b"),
    ("recurring", r"\b(recurring|subscriptions?|repeating|every month)\b"),
    # "which category did I spend the most on": the categories, largest first
    (
        "categories",
        r"\b(categor(y|ies)|kind of (spending|expenses?))\b.*\b(most|biggest|largest|top)\b"
        r"|\b(most|biggest|largest|top)\b.*\b(categor(y|ies))\b",
    ),
    (
        "largest",
        r"\b(largest|biggest|most expensive|top)\b.*"
        r"\b(purchases?|expenses?|charges?|transactions?|spending)\b",
    ),
    (
        "cash_flow",
        r"\bcash ?flow\b|\bincome\b.*"
        + _SPEND_WORD
        + "|"
        + _SPEND_WORD
        + r".*\b(earn|earned|income|made)\b|\bmoney (in|coming in)\b"
        r"(?! (my|the|your|an?|this|it|them|each|both|which|there|that|those)\b)",
    ),
    # Money coming in alone: "what's my income", "how much did I earn", "did I get paid".
    (
        "income",
        r"\b(income|salary|paychecks?|wages|earn|earned|earnings)\b"
        r"|\b(get|got|getting|been) paid\b|\bpay ?day\b|\b(do|did) (i|we) make\b",
    ),
    (
        "compare",
        r"\bthis month\b.*\b(vs\.?|versus|compared?|against|than)\b.*\blast month\b"
        r"|\b(more|less) than last month\b",
    ),
    (
        "categories",
        r"\b(by category|categories|breakdown|where did my money go|where my money went)\b",
    ),
    ("spend", _SPENT),
)
_PERSONAL = re.compile(r"\b(i|i'm|i've|my|me|mine|we|our|us)\b")
# Someone other than the user paying: "will the sapphire preferred pay for", "does it cover".
_PAYER = re.compile(
    r"\b(will|would|does|do|can|could)\s+(?!(?:i|we|you)\b)(?:[\w']+\s+){1,3}"
    r"(pay|pays|cover|covers|reimburse|reimburses)\b"
)
_RULE_OF_PAY = re.compile(r"\b(tax|taxes|taxed|taxable|deduct\w*|report\w*|withh[eo]ld\w*)\b")
_FILES = re.compile(r"\b(file|files|statement|statements|csv|upload|uploaded)\b")


def _kind(text: str) -> SpendingKind | None:
    return next((kind for kind, cue in _KINDS if re.search(cue, text)), None)


def read_spending(question: str, today: date) -> SpendingAsk | None:
    """Read `question` as a question about spending over time, or None when it is not one."""
    text = " " + re.sub(r"\s+", " ", question.lower()) + " "
    charger = _charger(text)
    # what a payee charged: "what did hulu bill me", "how much has planet fitness charged us"
    kind = _kind(text) or ("spend" if charger else None)
    if CAN_SPEND.search(text):
        return None  # "how much can I still spend on my card": its available credit
    if kind is None or not (_PERSONAL.search(text) or named_period(text, today)):
        return None  # "What is cash flow?" asks what a word means, not about their money
    files_only = _FILES.search(text) is not None
    period = named_period(text, today)
    category = None if charger else _category(text)
    if kind == "income" and _RULE_OF_PAY.search(text):
        return None  # "I get paid in cash, is that taxable?": a rule about pay, not its sum
    if kind == "spend" and _PAYER.search(text) and not re.search(_SPEND_WORD, text):
        return None  # "will the sapphire pay for a hotel?": what a card covers, not spending
    merchant = None if category else charger or _merchant(text)
    payee = None if category or merchant else _named_payee(question)
    if payee and _COST_ME.search(text):
        merchant = payee  # "what did that Seattle Hilton stay cost me"
    vague = kind == "spend" and category is None and period is None and not files_only
    named = merchant is not None and merchant == payee  # a payee's cost, whenever it was
    if vague and not named and not re.search(r"\b(spend|spent|spending)\b", text):
        return None  # "what did I pay for the house?" is not this engine's to answer
    if (
        period is None
        and not merchant  # "that Hilton stay": whenever it was
        and not files_only
        and kind in ("spend", "categories", "largest", "cash_flow", "income")
    ):
        period = Period(
            "in the last 30 days", today - timedelta(days=29), today + timedelta(days=1)
        )
    return SpendingAsk(kind, period, category, merchant, files_only)


def _filters(ask: SpendingAsk, period: Period | None) -> list[str]:
    where = [] if period is None else [period.where()]
    if ask.files_only:
        where.append("file_id IS NOT NULL")
    if ask.category is not None:
        where.append(ask.category[0])
    for word in (ask.merchant or "").split():  # "seattle hilton": "HILTON SEATTLE" too
        pattern = "'%" + word.replace("'", "''") + "%'"
        where.append(f"(lower(description) LIKE {pattern} OR lower(merchant_name) LIKE {pattern})")
    return where


def spending_queries(ask: SpendingAsk, today: date) -> list[str]:
    """Return the SELECTs the question's figures need (one `execute_sql` call each)."""
    if ask.kind in ("compare", "overview"):
        now, before = this_month(today), month_period(month_start(today, 1), "last month")
        span = Period("", before.start, now.end)
        where = " AND ".join([*_filters(ask, span), SPENDING, "amount > 0"])
        bucket = (
            f"CASE WHEN date >= '{now.start.isoformat()}' THEN 'this month' ELSE 'last month' END"
        )
        queries = [
            f"SELECT {WHERE_FROM}, {bucket} AS period, COUNT(*) AS transactions,"
            f" ROUND(SUM(amount), 2) AS total, currency FROM transaction_details WHERE {where}"
            f" GROUP BY {WHERE_FROM}, {bucket}, currency ORDER BY period DESC, total DESC"
        ]
        if ask.kind == "overview":
            queries.append(_cash_flow(ask, now))
        return queries
    if ask.kind in ("cash_flow", "income"):
        return [_cash_flow(ask, ask.period)]
    if ask.kind == "recurring":
        since = month_start(today, 5)
        where = " AND ".join(
            [f"date >= '{since.isoformat()}'", *_filters(ask, None), SPENDING, "amount > 0"]
        )
        payee = "COALESCE(merchant_name, description)"
        return [
            f"SELECT {WHERE_FROM}, {payee} AS merchant, COUNT(*) AS charges,"
            " COUNT(DISTINCT substr(date, 1, 7)) AS months, ROUND(AVG(amount), 2) AS typical,"
            " MAX(date) AS last_charged, currency FROM transaction_details"
            f" WHERE {where} GROUP BY {WHERE_FROM}, {payee}, currency"
            " HAVING COUNT(DISTINCT substr(date, 1, 7)) >= 3"
            " AND COUNT(*) <= COUNT(DISTINCT substr(date, 1, 7)) + 1"
            " AND MAX(amount) - MIN(amount) <= 0.05 * MAX(amount)"
            " ORDER BY typical DESC"
        ]
    where = " AND ".join([*_filters(ask, ask.period), SPENDING])
    if ask.kind == "largest":
        return [
            f"SELECT {ROW_COLUMNS} FROM transaction_details WHERE {where} AND amount > 0"
            " ORDER BY amount DESC, date DESC LIMIT 5"
        ]
    # The rows, to cite (a file's preview marks them), and their sums, for the figures: the
    # query service shows the model at most 40 rows of one account, the sums stand for all.
    return [
        f"SELECT {ROW_COLUMNS} FROM transaction_details WHERE {where}"
        " ORDER BY date, transaction_id",
        f"SELECT {WHERE_FROM}, category, COUNT(*) AS transactions, ROUND(SUM(amount), 2) AS total,"
        f" currency FROM transaction_details WHERE {where}"
        f" GROUP BY {WHERE_FROM}, category, currency",
    ]


def _cash_flow(ask: SpendingAsk, period: Period | None) -> str:
    where = " AND ".join([*_filters(ask, period), f"(category = 'INCOME' OR ({SPENDING}))"])
    flow = "CASE WHEN category = 'INCOME' THEN 'income' ELSE 'spending' END"
    return (
        f"SELECT {WHERE_FROM}, {flow} AS flow, COUNT(*) AS transactions,"
        f" ROUND(SUM(amount), 2) AS total, currency FROM transaction_details WHERE {where}"
        f" GROUP BY {WHERE_FROM}, {flow}, currency ORDER BY flow, total DESC"
    )
