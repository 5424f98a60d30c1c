"""Advice about cash against the user's regular outgoings: can they afford an amount (out of
the account they name, with the bills they say are still to come out), how long their cash
would last and how big an emergency fund to aim for, and a budget from their transactions.
Each figure cites its rows (balances, or the transactions it summed); the bundled guide's
sentence comes last, cited to its page. What is assumed is said.
"""

from __future__ import annotations

import re

from .ask import Question
from .bills import Outgoings, bill_line, bill_names, months, said_bills, stated_pay
from .cite import Block
from .figures import Row
from .overview import cash_lines
from .saving_pace import asks_pace, pace_lines
from .words import count_of, money

_CUSHION_WORDS = re.compile(r"\b(cushion|emergenc\w*|rainy day|safety net|nest egg|buffer)\b")


def _total(rows: list[Row] | tuple[Row, ...]) -> float:
    return sum(abs(r.balance or 0.0) for r in rows)


def cash_of(question: Question, rows: list[Row]) -> list[Row]:
    """The cash the question means: the kind of account it names (its savings), else all."""
    cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
    places = [r for r in cash if (r.get("institution_name") or "").lower() in question.institutions]
    cash = places or cash  # "out of my wells fargo checking"
    named = [r for r in cash if r.get("account_subtype") in question.kinds]
    kinds = {r.get("account_subtype") for r in named}
    return named if len(kinds) == 1 else cash  # "just my checking"; both kinds: all of it


def _cash_sentence(cash: list[Row]) -> Block:
    if len(cash) == 1:
        return (f"You have {cash[0].amount()} in {cash[0].label}", [cash[0].cite])
    return (
        f"You have {money(_total(cash))} across {count_of(len(cash), 'bank account')}",
        [r.cite for r in cash],
    )


def mentions_cushion(text: str) -> bool:
    """Tell whether a question speaks of an emergency fund or cushion."""
    return _CUSHION_WORDS.search(text.lower()) is not None


def afford(question: Question, rows: list[Row], guide: list[Block]) -> list[Block]:
    """Set an amount against the cash the question means, less the bills it names."""
    cash = cash_of(question, rows)
    if not question.amounts:
        return [
            ("How much would it cost? Ask with the amount, and I'll set it against your cash.", [])
        ]
    if not cash:
        return [("You have no bank accounts linked, so I can't see the cash to pay it from.", [])]
    asked, have = question.amounts[0], _total(cash)
    spend = Outgoings.of(rows)
    due = spend.named(question.text)
    owed_bills = sum(float(r.get("typical") or 0) for r in due)
    text, cites = _cash_sentence(cash)
    blocks: list[Block] = [(text + ". ", cites)]
    if due:
        blocks.append(
            (
                f"Taking {said_bills(question.text, due)} as still to come out of it "
                f"({bill_names(due)} in your transactions), {money(owed_bills)} of that is "
                "spoken for. ",
                [r.cite for r in due],
            )
        )
    left = have - asked - owed_bills
    after = f"After {money(asked)}" + (" and those bills" if due else "")
    blocks.append(
        (
            f"{after} you would have {money(left)} left. "
            if left >= 0
            else f"{after} you would be {money(-left)} short. ",
            [r.cite for r in cash + list(due)],
        )
    )
    every = len(cash) == len([r for r in rows if r.kind == "depository"])
    if left >= 0 and spend.bills and not due and (every or guide):
        blocks.append(_target(spend, left))  # the bills it is also drawn on, by month
    if guide:
        return blocks + guide
    blocks.append(
        (
            "Whether it's wise depends on your budget and on keeping an emergency fund "
            "(often three to six months of expenses) untouched.",
            [],
        )
    )
    return blocks


def _target(spend: Outgoings, left: float | None = None) -> Block:
    """Three to six months of the fixed bills, as figures (against what is left, if told)."""
    if not spend.bills:
        return ("", [])
    monthly, cites = spend.monthly, [r.cite for r in spend.bills]
    if left is not None:
        if left < 3 * monthly:
            return (
                f"What is left would be under three months of your fixed bills "
                f"({money(monthly)} a month, {money(3 * monthly)} for three months). ",
                cites,
            )
        return (
            f"What is left would still cover {months(left, monthly)} of your fixed bills "
            f"({money(monthly)} a month). ",
            cites,
        )
    return (
        f"Three to six months of your fixed bills ({money(monthly)} a month) is "
        f"{money(3 * monthly)} to {money(6 * monthly)}.",
        cites,
    )


def cushion_left(rows: list[Row]) -> list[Block]:
    """After paying off every debt from cash: what is left, against the fixed bills."""
    cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
    owed = [r for r in rows if r.owed and r.balance is not None]
    spend = Outgoings.of(rows)
    if not (cash and spend.bills):
        return []
    text, cites = _target(spend, _total(cash) - _total(owed))
    return [(text.replace("What is left would", "As an emergency fund, what is left would"), cites)]


# Where the money should be kept ("should it stay in savings or sit in my brokerage?"), and
# not how much or how long: the place is the question, the outgoings don't answer it.
_WHERE = re.compile(r"\b(where|stay|stays|instead of|rather than|move it|moving it)\b")
_MEASURE = re.compile(
    r"\b(enough|too (much|little)|how (long|many|much|big)|last|cover|big|target|aim|months?)\b"
)


def asks_where(text: str) -> bool:
    """Tell whether a question about a cushion asks only where to keep it."""
    said = text.lower()
    return _WHERE.search(said) is not None and _MEASURE.search(said) is None


def cushion(question: Question, rows: list[Row], guide: list[Block]) -> list[Block]:
    """How long the cash would last on the user's outgoings, and what to aim for; asked only
    where to keep it, what it holds and the guide's word on where."""
    cash = cash_of(question, rows)
    if not cash:
        return [("You have no bank accounts linked, so I can't see any cash set aside.", [])]
    if asks_where(question.text):
        text, cites = _cash_sentence(cash)
        return [(text + ".\n", cites), *guide]
    spend = Outgoings.of(rows)
    have = _total(cash)
    text, cites = _cash_sentence(cash)
    blocks: list[Block] = [(text + (":\n" if len(cash) > 1 else "."), cites)]
    if len(cash) > 1:
        blocks += cash_lines(cash)
    if asks_pace(question.text):  # "am I putting enough into savings each month?"
        blocks += pace_lines(rows)
    if not spend.bills and not spend.spent:
        blocks.append(
            (
                "\n\nHow long that lasts depends on your monthly expenses, and I found no "
                "regular bills in your transactions to measure them by.",
                [],
            )
        )
        return blocks + guide
    named = spend.named(question.text)
    if named and named != spend.bills:
        part = sum(float(r.get("typical") or 0) for r in named)
        blocks.append(
            (
                f"\n\nOn {said_bills(question.text, named)} alone ({bill_names(named)}), "
                f"{money(have)} would last {months(have, part)}.",
                [r.cite for r in named] + cites,
            )
        )
    if spend.bills:
        blocks.append(("\n\nYour fixed bills each month, from your transactions:\n", []))
        blocks += [(bill_line(r), [r.cite]) for r in spend.bills]
        blocks.append(
            (
                f"Those come to {money(spend.monthly)} a month: {money(have)} would cover "
                f"them for {months(have, spend.monthly)}. ",
                [r.cite for r in spend.bills] + cites,
            )
        )
    if spend.last_month > 0:
        blocks.append(
            (
                f"Counting everything you spent {spend.period}, {money(spend.last_month)}, "
                f"it would last {months(have, spend.last_month)}. ",
                [r.cite for r in spend.spent] + cites,
            )
        )
    target = _target(spend)
    if target[0]:
        blocks.append(("\n\n" + target[0] + " ", target[1]))
        if have < 3 * spend.monthly:
            short = money(3 * spend.monthly - have)
            blocks.append((f"What you have is {short} short of three months. ", target[1] + cites))
        elif have < 6 * spend.monthly:
            short = money(6 * spend.monthly - have)
            said = f"What you have is past three months of them, {short} short of six. "
            blocks.append((said, target[1] + cites))
        else:
            blocks.append(("What you have is past six months of them. ", target[1] + cites))
        blocks.append(
            (
                "That counts only the fixed bills: food, fuel and other essentials come on top, "
                "so the full target is higher.",
                [],
            )
        )
    return blocks + guide


def budget(question: Question, rows: list[Row], guide: list[Block]) -> list[Block]:
    """A budget's first lines from the transactions: pay, fixed bills, the rest by category."""
    spend = Outgoings.of(rows)
    if not spend.bills and not spend.spent:
        return [
            (
                "I found no transactions in your linked accounts to build a budget from.",
                [],
            ),
            *guide,
        ]
    blocks: list[Block] = []
    pay = stated_pay(question.text)
    if pay:
        monthly = "" if pay[1].endswith(" a month") else f": about {money(pay[0])} a month"
        blocks.append((f"You said you make {pay[1]}{monthly}.\n\n", []))
    if spend.bills:
        blocks.append(("Your fixed bills each month, from your transactions:\n", []))
        blocks += [(bill_line(r), [r.cite]) for r in spend.bills]
        blocks.append(
            (
                f"- Fixed bills in all: {money(spend.monthly)} a month\n",
                [r.cite for r in spend.bills],
            )
        )
    if spend.spent:
        by_category: dict[str, list[Row]] = {}
        for r in spend.spent:
            by_category.setdefault(str(r.get("category")), []).append(r)
        ranked = sorted(by_category.items(), key=lambda kv: -sum(_sum(r) for r in kv[1]))
        blocks.append((f"\nWhere your money went {spend.period}:\n", []))
        for category, group in ranked:
            name = category.replace("_", " ").capitalize()
            blocks.append(
                (f"- {name}: {money(sum(_sum(r) for r in group))}\n", [r.cite for r in group])
            )
        blocks.append(
            (
                f"- Spent in all: {money(spend.last_month)}\n",
                [r.cite for r in spend.spent],
            )
        )
        if pay:
            left = pay[0] - spend.last_month
            verdict = f"{money(left)} to spare" if left >= 0 else f"you {money(-left)} short"
            blocks.append(
                (
                    f"\nAgainst the pay you gave, that month's spending leaves {verdict}, "
                    "before anything goes to savings. This counts only your linked accounts: "
                    "cash and other accounts don't show here.\n",
                    [r.cite for r in spend.spent],
                )
            )
    return blocks + guide


def _sum(row: Row) -> float:
    return float(row.get("total") or 0)
