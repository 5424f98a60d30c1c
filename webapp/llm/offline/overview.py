"""Open questions answered from the user's own figures: "how am I doing" (net worth, cash,
debts, utilization), "can I afford $2,000", "which card should I pay off first", and "should I
sell my Apple stock" (what they hold, and plainly that the choice is theirs). Each figure
cites its rows; nothing here cites a document it didn't read for the question.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from . import lexicon
from .ask import Question
from .cite import Block, number
from .figures import Row
from .words import count_of, money, percent

Open: TypeAlias = Literal["overview", "afford", "payoff", "sell", "uncovered", "plan"]
_UNCOVERED = lexicon.rules("uncovered")


def read_open(phrase: str, question: Question) -> tuple[Open, str] | None:
    """Return which open question a padded phrase asks (and a reply it carries), or None."""
    if question.tickers or "holdings" in question.intents:
        for rule in _UNCOVERED:
            if rule.pattern.search(phrase):
                return "uncovered", rule.reply
        if lexicon.has_phrase(phrase, lexicon.phrases("open", "sell")):
            return "sell", ""
    kinds: tuple[Open, ...] = ("plan", "payoff", "afford", "overview")
    for kind in kinds:
        if lexicon.has_phrase(phrase, lexicon.phrases("open", kind)):
            return kind, ""
    return None


def _total(rows: list[Row]) -> float:
    return sum(abs(r.balance or 0.0) if r.owed else r.balance or 0.0 for r in rows)


def overview(rows: list[Row]) -> list[Block]:
    """Where the user stands: net worth, cash, debts and credit utilization, each cited."""
    known = [r for r in rows if r.balance is not None]
    if not known:
        return [("You have no accounts linked yet, so there is nothing to sum up.", [])]
    assets = [r for r in known if not r.owed]
    owed = [r for r in known if r.owed]
    cash = [r for r in known if r.kind == "depository"]
    cards = [r for r in known if r.kind == "credit" and number(r.get("credit_limit"))]
    blocks: list[Block] = [
        ("Here is where you stand today, from your linked accounts' current balances:\n", []),
        (
            f"- Net worth: {money(_total(assets) - _total(owed))} "
            f"({money(_total(assets))} in assets minus {money(_total(owed))} in debts)\n",
            [r.cite for r in known],
        ),
    ]
    if cash:
        blocks.append(
            (
                f"- Cash: {money(_total(cash))} in {count_of(len(cash), 'bank account')}\n",
                [r.cite for r in cash],
            )
        )
    if owed:
        blocks.append(
            (
                f"- Debts: {money(_total(owed))} on {count_of(len(owed), 'account')}\n",
                [r.cite for r in owed],
            )
        )
    if cards:
        used = _total(cards)
        limits = sum(number(r.get("credit_limit")) or 0.0 for r in cards)
        blocks.append(
            (
                f"- Credit utilization: {percent(used, limits)} of {money(limits)} in "
                "credit limits\n",
                [r.cite for r in cards],
            )
        )
    blocks.append(
        (
            "These are balances, not a budget: I can't see whether this month's spending is "
            "above or below your usual from balances alone.",
            [],
        )
    )
    return blocks


def afford(question: Question, rows: list[Row]) -> list[Block]:
    """Set an amount against the cash the user has, and what they owe."""
    cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
    owed = [r for r in rows if r.owed and r.balance is not None]
    if not question.amounts:
        return [
            ("How much would it cost? Ask with the amount, and I'll set it against your cash.", [])
        ]
    asked = question.amounts[0]
    have = _total(cash)
    blocks: list[Block] = [
        (
            f"You have {money(have)} in cash across {count_of(len(cash), 'bank account')}; "
            f"after spending {money(asked)} you would have {money(have - asked)}.",
            [r.cite for r in cash],
        )
    ]
    if owed:
        blocks.append(
            (f"You also owe {money(_total(owed))} on your cards and loans.", [r.cite for r in owed])
        )
    blocks.append(
        (
            "Whether it's wise depends on your budget and on keeping an emergency fund "
            "(often three to six months of expenses) untouched.",
            [],
        )
    )
    return blocks


def payoff(rows: list[Row]) -> list[Block]:
    """Rank the cards by what is owed, and say what would decide the order."""
    cards = sorted(
        (r for r in rows if r.owed and r.balance is not None),
        key=lambda r: -abs(r.balance or 0.0),
    )
    if not cards:
        return [("You have no credit cards or loans with a balance, so nothing to pay off.", [])]
    blocks: list[Block] = [
        (
            "I don't have your cards' interest rates, and paying the highest interest rate "
            "first saves the most; paying the smallest balance first clears a card soonest. "
            "Here is what you owe on each, largest first:\n",
            [],
        )
    ]
    for r in cards:
        limit = number(r.get("credit_limit"))
        used = f" ({percent(abs(r.balance or 0.0), limit)} of its limit)" if limit else ""
        blocks.append((f"- {r.label}: {r.owes}{used}\n", [r.cite]))
    return blocks


def sell(question: Question, rows: list[Row]) -> list[Block]:
    """What the user holds of a ticker, its share of the portfolio, and whose choice it is."""
    held = [r for r in rows if r.get("ticker")]
    wanted = [r for r in held if r.get("ticker") in question.tickers] or held
    total = sum(number(r.get("market_value")) or 0.0 for r in held)
    blocks: list[Block] = [
        (
            "I can't tell you whether to buy or sell a particular stock: that depends on "
            "your goals, taxes and timeline. Here is what you hold:\n",
            [],
        )
    ]
    for r in wanted:
        value = number(r.get("market_value")) or 0.0
        quantity = number(r.get("quantity")) or 0.0
        blocks.append(
            (
                f"- {quantity:,.0f} shares of {r.get('ticker')} worth {money(value)}, "
                f"{percent(value, total)} of your holdings, in {r.label}\n",
                [r.cite],
            )
        )
    return blocks


def uncovered(reply: str, question: Question, rows: list[Row]) -> list[Block]:
    """Say the documents don't cover it, then what the user holds of it."""
    held = [r for r in rows if r.get("ticker") in question.tickers] or [
        r for r in rows if r.get("ticker")
    ]
    blocks: list[Block] = [(reply + " What you hold:\n", [])]
    for r in held:
        value = number(r.get("market_value")) or 0.0
        quantity = number(r.get("quantity")) or 0.0
        blocks.append(
            (f"- {quantity:,.0f} shares of {r.get('ticker')} worth {money(value)}\n", [r.cite])
        )
    return blocks


def plan(rows: list[Row]) -> list[Block]:
    """Debt or investing: what decides it, then what the user has and owes, each cited."""
    known = [r for r in rows if r.balance is not None]
    cash = [r for r in known if r.kind == "depository"]
    owed = [r for r in known if r.owed]
    invested = [r for r in known if r.kind in ("investment", "crypto")]
    blocks: list[Block] = [
        (
            "I can't give personal investment advice, and the answer turns on interest rates "
            "I don't have: paying off a card that charges more than your investments are "
            "likely to earn is a sure return, and an emergency fund of three to six months of "
            "expenses usually comes before either. Here is what you have and owe:\n",
            [],
        )
    ]
    for title, group in (("Cash", cash), ("Debts", owed), ("Investments", invested)):
        if group:
            blocks.append((f"- {title}: {money(_total(group))}\n", [r.cite for r in group]))
    return blocks
