"""The offline engine's answers about money over time, each figure citing the rows it summed.

One call plans the tool calls (`spending_calls`) and one writes the answer from their results
(`spending_answer`); `webapp/llm/offline/model.py` hands a question here when
`read_spending` reads it as one. Rows arrive as the query service cited them: one source
per account (or per file, for a file's own rows), one block per row, so a figure's
citations are exactly the rows, and so the accounts or the file, it added up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import date
from typing import Any

from ...tool_registry import EXECUTE_SQL
from .ask import ALIASES, GENERIC, INSTITUTIONS
from .cite import Block, Result
from .figures import Row, rows_of
from .periods import PERIOD_WORDS, named_period, period_again
from .plan import ToolCall
from .spending_ask import (
    _NOT_MERCHANT,
    SpendingAsk,
    _category,
    read_spending,
    spending_queries,
)
from .words import count_of, money

__all__ = [
    "SpendingAsk",
    "follow_spending",
    "read_spending",
    "spending_answer",
    "spending_calls",
]


def spending_calls(ask: SpendingAsk, today: date) -> list[ToolCall]:
    """Return the `execute_sql` calls the question needs."""
    return [ToolCall(EXECUTE_SQL, {"query": query}) for query in spending_queries(ask, today)]


def _amount(row: Row, column: str = "amount") -> float:
    try:
        return float(row.get(column) or 0)
    except ValueError:
        return 0.0


def _where(row: Row) -> str:
    """Where a row came from, as a person names it: "Checking at Chase", "nov.csv"."""
    if row.get("file_name") and not row.get("institution_name"):
        return str(row.get("file_name"))
    return row.label


def _currency(rows: Iterable[Row]) -> str:
    return next((str(r.currency) for r in rows if r.currency), "USD")


def _cites(rows: Iterable[Row]) -> list[dict[str, Any]]:
    return [row.cite for row in rows]


def _by_place(rows: list[Row]) -> dict[str, list[Row]]:
    places: dict[str, list[Row]] = {}
    for row in rows:
        places.setdefault(_where(row), []).append(row)
    return places


def _what(ask: SpendingAsk) -> str:
    if ask.category is not None:
        return f" on {ask.category[1]}"
    if ask.merchant:
        return f" at {ask.merchant.title()}"
    return ""


def _when(ask: SpendingAsk) -> str:
    if ask.period is None:
        return " in your uploaded statements" if ask.files_only else ""
    return f" {ask.period.label}" + (" in your uploaded statements" if ask.files_only else "")


def _nothing(ask: SpendingAsk) -> list[Block]:
    return [(f"I found no spending{_what(ask)}{_when(ask)} in your transactions.", [])]


def _spend(
    ask: SpendingAsk, rows: list[Row], sums: list[Row], *, by_category: bool = False
) -> list[Block]:
    """Say what was spent: the figures from the sums (every row counted), the citations from
    the rows (a file's preview marks them), else from the sums' own rows."""
    if not sums:
        return _nothing(ask)
    currency = _currency(sums)
    cited = _by_place(rows)

    def cites(group: list[Row]) -> list[dict[str, Any]]:
        places = {_where(r) for r in group}
        mine = [r for place in places for r in cited.get(place, [])]
        return _cites(mine or group)

    def total(group: list[Row]) -> float:
        return round(sum(_amount(r, "total") for r in group), 2)

    def counted(group: list[Row]) -> int:
        return sum(int(_amount(r, "transactions")) for r in group)

    places = _by_place(sums)
    where = (
        f"from {next(iter(places))}"
        if len(places) == 1
        else f"across {count_of(len(places), 'account')}"
    )
    blocks: list[Block] = [
        (
            f"You spent {money(total(sums), currency)}{_what(ask)}{_when(ask)}:"
            f" {count_of(counted(sums), 'transaction')} {where}.\n\n",
            cites(sums),
        )
    ]
    refunds = [r for r in rows if _amount(r) < 0]
    if ask.merchant and refunds:  # "once the refund came through": what it was, net
        charged = money(sum(_amount(r) for r in rows if _amount(r) > 0), currency)
        back = money(-sum(_amount(r) for r in refunds), currency)
        blocks.append((f"That is {charged} charged less {back} refunded.\n\n", _cites(rows)))
    if by_category:
        groups: dict[str, list[Row]] = {}
        for row in sums:
            name = (row.get("category") or "OTHER").replace("_", " ").lower().capitalize()
            groups.setdefault(name, []).append(row)
        ranked = sorted(groups.items(), key=lambda item: -total(item[1]))
        for name, group in ranked:
            line = f"- {name}: {money(total(group), currency)}\n"
            blocks.append((line, cites(group)))
        return blocks
    if len(places) > 1:
        for place, group in places.items():
            spent = money(total(group), currency)
            blocks.append(
                (f"- {place}: {spent} ({count_of(counted(group), 'transaction')})\n", cites(group))
            )
    return blocks


def _largest(ask: SpendingAsk, rows: list[Row]) -> list[Block]:
    if not rows:
        return _nothing(ask)
    blocks: list[Block] = [(f"Your largest purchases{_what(ask)}{_when(ask)}:\n\n", [])]
    for row in rows:
        line = (
            f"- {row.get('date')}: {row.get('description')}, "
            f"{money(_amount(row), row.currency)} ({_where(row)})\n"
        )
        blocks.append((line, [row.cite]))
    return blocks


def _recurring(ask: SpendingAsk, rows: list[Row]) -> list[Block]:
    if not rows:
        return [("I found no charges that recur every month in your transactions.", [])]
    currency = _currency(rows)
    monthly = sum(_amount(r, "typical") for r in rows)
    blocks: list[Block] = [
        (
            f"You have {count_of(len(rows), 'recurring charge')}, about "
            f"{money(monthly, currency)} a month together:\n\n",
            _cites(rows),
        )
    ]
    for row in rows:
        line = (
            f"- {row.get('merchant')}: {money(_amount(row, 'typical'), row.currency)} a month "
            f"({_where(row)}, last on {row.get('last_charged')})\n"
        )
        blocks.append((line, [row.cite]))
    return blocks


def _totals(rows: list[Row], key: str, value: str) -> list[Row]:
    return [r for r in rows if r.get(key) == value]


def _compare(ask: SpendingAsk, rows: list[Row]) -> list[Block]:
    now, before = _totals(rows, "period", "this month"), _totals(rows, "period", "last month")
    if not now and not before:
        return _nothing(ask)
    currency = _currency(rows)
    spent_now = sum(_amount(r, "total") for r in now)
    spent_before = sum(_amount(r, "total") for r in before)
    blocks: list[Block] = [
        (f"This month so far you've spent {money(spent_now, currency)}{_what(ask)}. ", _cites(now)),
        (f"Last month you spent {money(spent_before, currency)} in all. ", _cites(before)),
    ]
    if spent_before:
        change = spent_now - spent_before
        word = "more" if change > 0 else "less"
        blocks.append(
            (f"That is {money(abs(change), currency)} {word} than last month so far.", [])
        )
    return blocks


def _cash_flow(ask: SpendingAsk, rows: list[Row], label: str | None = None) -> list[Block]:
    income, spending = _totals(rows, "flow", "income"), _totals(rows, "flow", "spending")
    if not rows:
        return [(f"I found no income or spending{_when(ask)} in your transactions.", [])]
    currency = _currency(rows)
    earned = -sum(_amount(r, "total") for r in income)
    spent = sum(_amount(r, "total") for r in spending)
    when = label if label is not None else _when(ask).strip()
    net = earned - spent
    blocks: list[Block] = []
    blocks.append((f"Money in {when}: {money(earned, currency)} of income. ", _cites(income)))
    blocks.append((f"Money out: {money(spent, currency)} of spending. ", _cites(spending)))
    verdict = "more than you spent" if net >= 0 else "less than you spent"
    blocks.append((f"You took in {money(abs(net), currency)} {verdict}.", []))
    return blocks


def _income(ask: SpendingAsk, rows: list[Row]) -> list[Block]:
    """The money that came in over the period, per account it came into."""
    income = _totals(rows, "flow", "income")
    if not income:
        return [(f"I found no income{_when(ask)} in your transactions.", [])]
    currency = _currency(income)
    earned = -sum(_amount(r, "total") for r in income)
    deposits = sum(int(_amount(r, "transactions")) for r in income)
    blocks: list[Block] = [
        (
            f"You took in {money(earned, currency)} of income{_when(ask)}: "
            f"{count_of(deposits, 'deposit')}"
            + (f" into {_where(income[0])}.\n" if len(income) == 1 else ".\n"),
            _cites(income),
        )
    ]
    if len(income) > 1:
        for row in income:
            blocks.append(
                (f"- {_where(row)}: {money(-_amount(row, 'total'), currency)}\n", [row.cite])
            )
    return blocks


def spending_answer(ask: SpendingAsk, results: list[Result]) -> list[Block]:
    """Write the answer from this turn's results, each figure citing the rows it summed."""
    errors = [str(r.block["error"]) for r in results if r.index is None]
    by_query: list[list[Row]] = []
    for result in results:
        if result.index is not None and result.tool == EXECUTE_SQL:
            by_query.append(rows_of([result]))
    rows = [row for group in by_query for row in group]
    if errors and not rows:
        return [("I couldn't read your transactions: " + errors[0], [])]
    if ask.kind == "largest":
        ranked = sorted(rows, key=lambda r: -_amount(r))[:5]
        return _largest(ask, ranked)
    if ask.kind == "recurring":
        return _recurring(ask, rows)
    if ask.kind == "compare":
        return _compare(ask, rows)
    if ask.kind == "cash_flow":
        return _cash_flow(ask, rows)
    if ask.kind == "income":
        return _income(ask, rows)
    if ask.kind == "overview":
        flows = [r for r in rows if r.get("flow")]
        periods = [r for r in rows if r.get("period")]
        blocks = _compare(ask, periods)
        blocks[-1] = (blocks[-1][0] + "\n\n", blocks[-1][1])
        return blocks + _cash_flow(ask, flows, "this month")
    listed = [r for r in rows if r.get("transaction_id") is not None]
    sums = [r for r in rows if r.get("transaction_id") is None and r.get("total") is not None]
    return _spend(ask, listed, sums, by_category=ask.kind == "categories")


_FOLLOW = re.compile(
    r"^(?:and|what about|how about|same for|same thing for|also|then)\s+(?P<rest>.+)$"
)


def follow_spending(question: str, before: str, today: date) -> tuple[SpendingAsk, str] | None:
    """ "and hulu?" after "what did I pay in rent last month?": the same question, of the
    payee or category it names instead, with the sentence that says what was assumed."""
    text = " ".join(re.findall(r"[a-z0-9&']+", question.lower()))
    found = _FOLLOW.match(text)
    asked = read_spending(before, today)
    if not found or asked is None or asked.kind != "spend" or len(text.split()) > 6:
        return None
    rest = " " + found["rest"] + " "
    when = period_again(rest, asked.period, today)
    if when is not None and set(rest.split()) <= PERIOD_WORDS | set(when.label.lower().split()):
        # "and the month before that?", "and in october?": the same question, another period
        return replace(asked, period=when), f"Taking that as the same question, {when.label}:"
    if set(rest.split()) <= PERIOD_WORDS:
        return None  # "and the month after?" this month: no such month yet, and no payee
    category = _category(rest)
    if category is not None:
        ask = replace(asked, category=category, merchant=None)
    else:
        named = [w for w in rest.split() if w not in _NOT_MERCHANT and w not in GENERIC]
        banks = [ALIASES.get(w, w) for w in named]
        if (
            not named
            or named_period(rest, today)
            or any(b in i for b in banks for i in INSTITUTIONS)
        ):
            return None
        ask = replace(asked, category=None, merchant=" ".join(named))
    what = category[1] if category else ask.merchant.title() if ask.merchant else ""
    said = f", {asked.period.label}" if asked.period else ""
    return ask, f"Taking that as the same question{said}, for {what}:"
