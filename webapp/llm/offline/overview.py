"""Open questions answered from the user's own figures: "how am I doing" (net worth, cash,
debts, utilization), "can I afford $2,000", "which card should I pay off first", and "should I
sell my Apple stock" (what they hold, and plainly that the choice is theirs). Each figure
cites its rows; nothing here cites a document it didn't read for the question.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias, cast

from . import lexicon
from .advice import advice_kind
from .ask import Question
from .cite import Block, Result, cite, number
from .figures import Row
from .words import count_of, money, percent

Open: TypeAlias = Literal[
    "overview", "afford", "payoff", "sell", "uncovered", "plan", "cushion", "allocate"
]
GUIDES: dict[str, dict[str, str]] = lexicon.table("open_guides")
_UNCOVERED = lexicon.rules("uncovered")


def read_open(phrase: str, question: Question) -> tuple[Open, str] | None:
    """Return which open question a padded phrase asks (and a reply it carries), or None."""
    if question.tickers or "holdings" in question.intents:
        for rule in _UNCOVERED:
            if rule.pattern.search(phrase):
                return "uncovered", rule.reply
        if lexicon.has_phrase(phrase, lexicon.phrases("open", "sell")):
            return "sell", ""
    kinds: tuple[Open, ...] = ("plan", "payoff", "cushion", "afford", "overview")
    for kind in kinds:
        if lexicon.has_phrase(phrase, lexicon.phrases("open", kind)):
            return kind, ""
    found = advice_kind(phrase, question)
    return (cast(Open, found), "") if found else None


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
            + (
                f"after spending {money(asked)} you would have {money(have - asked)}."
                if have >= asked
                else f"{money(asked)} is {money(asked - have)} more than that: you would be "
                f"{money(asked - have)} short."
            ),
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


def guidance(kind: str, results: list[Result]) -> list[Block]:
    """The sentence of the bundled guide an open question quotes, cited to its passage."""
    guide = GUIDES.get(kind)
    if guide is None:
        return []
    for result in results:
        for at, text in enumerate(result.texts):
            for sentence in re.split(r"(?<=[.!?])\s+", text):
                if guide["sentence"] in sentence:
                    said = f"{result.title}: {sentence.strip()}"
                    return [(f"\nWhat the guidance says ({said})", [cite(result, at, at + 1)])]
    return []


def _cash_lines(cash: list[Row]) -> list[Block]:
    blocks: list[Block] = [(f"- {r.title}: {money(r.balance or 0.0)}\n", [r.cite]) for r in cash]
    for subtype in dict.fromkeys(r.get("account_subtype") for r in cash):
        same = [r for r in cash if r.get("account_subtype") == subtype]
        if subtype and 1 < len(same) < len(cash):
            total = money(_total(same))
            blocks.append((f"- {subtype.title()} in all: {total}\n", [r.cite for r in same]))
    if len(cash) > 1:
        blocks.append((f"- Cash in all: {money(_total(cash))}\n", [r.cite for r in cash]))
    return blocks


def cushion(rows: list[Row], results: list[Result]) -> list[Block]:
    """Cash set aside: what the user keeps where, and the emergency-fund guidance, cited."""
    cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
    if not cash:
        return [("You have no bank accounts linked, so I can't see any cash set aside.", [])]
    blocks: list[Block] = [
        (
            "Whether that is enough, or too much, depends on your monthly expenses, which "
            "balances alone don't show. Here is the cash you keep in each account:\n",
            [],
        ),
        *_cash_lines(cash),
    ]
    return blocks + guidance("cushion", results)


def payoff(question: Question, rows: list[Row]) -> list[Block]:
    """Rank the cards by what is owed, and say what would decide the order."""
    owed = [r for r in rows if r.owed and r.balance is not None]
    named = [r for r in owed if _names(question, r)]
    cards = sorted(named or owed, key=lambda r: -abs(r.balance or 0.0))
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
        blocks.append((f"- {r.title}: {r.owes}{used}\n", [r.cite]))
    if len(cards) > 1:
        blocks.append((f"- Owed in all: {money(_total(cards))}\n", [r.cite for r in cards]))
    cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
    if cash:
        blocks.append(("The cash you could pay it from:\n", []))
        blocks += _cash_lines(cash)
        left = _total(cash) - _total(cards)
        blocks.append(
            (
                f"Paying all of it from your cash would leave {money(left)}.\n",
                [r.cite for r in cash + cards],
            )
        )
    return blocks


def _names(question: Question, row: Row) -> bool:
    """Tell whether the question names this account (its institution or its name)."""
    said = set(question.names) | {w for i in question.institutions for w in i.split()}
    place = f"{row.get('institution_name') or ''} {row.get('account_name') or ''}".lower()
    return bool(said & set(place.split()))


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
        blocks.append(
            (
                f"- {held_as(r)} worth {money(value)}, "
                f"{percent(value, total)} of your holdings, in {r.label}\n",
                [r.cite],
            )
        )
    return blocks


def held_as(row: Row) -> str:
    """What a holding is, as a person says it: "25 shares of AAPL", "1.5 ETH"."""
    quantity = number(row.get("quantity")) or 0.0
    amount = f"{quantity:,.0f}" if quantity == int(quantity) else f"{quantity:,.8f}".rstrip("0")
    if row.get("security_type") == "crypto":
        return f"{amount} {row.get('ticker')}"
    return f"{amount} {'share' if amount == '1' else 'shares'} of {row.get('ticker')}"


def uncovered(reply: str, question: Question, rows: list[Row]) -> list[Block]:
    """Say the documents don't cover it, then what the user holds of it."""
    held = [r for r in rows if r.get("ticker") in question.tickers] or [
        r for r in rows if r.get("ticker")
    ]
    blocks: list[Block] = [(reply + " What you hold:\n", [])]
    for r in held:
        value = number(r.get("market_value")) or 0.0
        blocks.append((f"- {held_as(r)} worth {money(value)}\n", [r.cite]))
    return blocks


def plan(question: Question, rows: list[Row]) -> list[Block]:
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
    held = {r.get("account_subtype") for r in known} | {r.kind for r in known}
    for kind in question.kinds:
        if kind in ("mortgage", "loan") and kind not in held:
            blocks.insert(0, (f"You have no {kind} among your linked accounts. ", []))
    for title, group in (("Cash", cash), ("Debts", owed), ("Investments", invested)):
        if group:
            blocks.append((f"- {title}: {money(_total(group))}\n", [r.cite for r in group]))
    return blocks
