"""Open questions answered from the user's own figures: which open question a phrase asks
(`read_open`: "how am I doing" in any words, a budget, advice by meaning), and the answers
from balances and holdings alone: the overview (net worth, what is owned and owed account by
account, cash, utilization), "which card should I pay off first", and "should I sell my Apple
stock" (what they hold, against the whole mix when asked, and plainly that the choice is
theirs). Answers that weigh cash against the user's bills are `cash_advice.py`'s. Each figure
cites its rows; nothing here cites a document it didn't read for the question.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias, cast

from . import lexicon
from .advice import advice_kind, stem_phrase
from .advice_figures import paid_from
from .ask import Question
from .cite import Block, Result, cite, number
from .figures import Row
from .inflation import names_inflation
from .words import count_of, money, percent
from .words import sentence as opening

Open: TypeAlias = Literal[
    "overview",
    "afford",
    "payoff",
    "sell",
    "uncovered",
    "plan",
    "cushion",
    "allocate",
    "budget",
    "weight",
]
GUIDES: dict[str, dict[str, str]] = lexicon.table("open_guides")
_UNCOVERED = lexicon.rules("uncovered")
_INDEX_FUNDS = ("index fund", "index funds")
_WHOLE = tuple(stem_phrase(p).strip() for p in lexicon.phrases("open_overview", "whole"))
_MONEY = tuple(stem_phrase(p).strip() for p in lexicon.phrases("open_overview", "money"))
_BUDGET = lexicon.phrases("open_overview", "budget")
_PERSONAL = (" i ", " me ", " my ", " we ", " our ", " us ", " im ", " u ")
_DEFINITION = re.compile(lexicon.table("implied_own")["definition"])


def asks_budget(phrase: str) -> bool:
    """Tell whether a padded phrase asks for the user's budget ("can u help me budget"), not
    what a budget is."""
    return (
        lexicon.has_phrase(phrase, _BUDGET)
        and any(p in phrase for p in _PERSONAL)
        and not _DEFINITION.search(phrase)
    )


def asks_overview(phrase: str) -> bool:
    """Tell whether a padded phrase asks for the whole picture in other words ("health check
    on my money", "a rundown of where I stand"): a word of each group, compared by stem."""
    said = stem_phrase(phrase)
    return lexicon.has_phrase(said, _WHOLE) and lexicon.has_phrase(said, _MONEY)


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
    if names_inflation(question) and {"savings", "checking", "depository", "cash"} & {
        *question.kinds,
        *question.intents,
    }:
        return "cushion", ""  # "is inflation eating my savings?": the cash, against it
    found = advice_kind(phrase, question)
    if found:
        return cast(Open, found), ""
    if asks_budget(phrase):
        return "budget", ""
    if asks_overview(phrase):
        return "overview", ""
    if "holdings" in question.intents and any(f" {w} " in phrase for w in _INDEX_FUNDS):
        return "allocate", ""  # "i have zero investments ... just buy an index fund"
    return None


def _total(rows: list[Row]) -> float:
    return sum(abs(r.balance or 0.0) if r.owed else r.balance or 0.0 for r in rows)


def overview(rows: list[Row]) -> list[Block]:
    """Where the user stands: net worth, what they own and owe account by account, cash and
    credit utilization, each cited."""
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
    for title, group in (("What you own", assets), ("What you owe", owed)):
        if group:
            blocks.append((f"\n{title}, {money(_total(group))} in all:\n", [r.cite for r in group]))
            ranked = sorted(group, key=lambda r: -abs(r.balance or 0.0))
            blocks += [(f"- {r.title}: {money(abs(r.balance or 0.0))}\n", [r.cite]) for r in ranked]
    blocks.append(("\n", []))
    if cash:
        blocks.append(
            (
                f"Your cash is {money(_total(cash))} in {count_of(len(cash), 'bank account')}. ",
                [r.cite for r in cash],
            )
        )
    if cards:
        used = _total(cards)
        limits = sum(number(r.get("credit_limit")) or 0.0 for r in cards)
        blocks.append(
            (
                f"Your credit utilization is {percent(used, limits)}: {money(used)} of "
                f"{money(limits)} in credit limits. ",
                [r.cite for r in cards],
            )
        )
    blocks.append(
        (
            "These are today's balances: they don't show how your spending compares with "
            "your usual month.",
            [],
        )
    )
    return blocks


def guidance(kind: str, results: list[Result], then: bool = False) -> list[Block]:
    """The sentence of the bundled guide an open question quotes, cited to its passage
    (`then`: a further sentence, after one already quoted)."""
    guide = GUIDES.get(kind)
    if guide is None:
        return []
    for result in results:
        for at, text in enumerate(result.texts):
            for sentence in re.split(r"(?<=[.!?])\s+", text):
                if guide["sentence"] in sentence:
                    said = f"{result.title}: {sentence.strip()}"
                    if then:
                        return [(f"It adds: {sentence.strip()}", [cite(result, at, at + 1)])]
                    return [(f"\nWhat the guidance says ({said})", [cite(result, at, at + 1)])]
    return []


def cash_lines(cash: list[Row]) -> list[Block]:
    blocks: list[Block] = [(f"- {r.title}: {money(r.balance or 0.0)}\n", [r.cite]) for r in cash]
    for subtype in dict.fromkeys(r.get("account_subtype") for r in cash):
        same = [r for r in cash if r.get("account_subtype") == subtype]
        if subtype and 1 < len(same) < len(cash):
            total = money(_total(same))
            blocks.append((f"- {subtype.title()} in all: {total}\n", [r.cite for r in same]))
    if len(cash) > 1:
        blocks.append((f"- Cash in all: {money(_total(cash))}\n", [r.cite for r in cash]))
    return blocks


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
    source = paid_from(question.text, cash)  # "using my savings": that account, not all cash
    if source:
        return blocks + _paid_from(source, cards)
    if cash:
        blocks.append(("The cash you could pay it from:\n", []))
        blocks += cash_lines(cash)
        left = _total(cash) - _total(cards)
        blocks.append(
            (
                f"Paying all of it from your cash would leave {money(left)}.\n",
                [r.cite for r in cash + cards],
            )
        )
    return blocks


def _paid_from(source: list[Row], cards: list[Row]) -> list[Block]:
    """What paying the debts out of the account the question names would leave in it."""
    held, owed = _total(source), _total(cards)
    where = source[0].label if len(source) == 1 else "those accounts"
    said = f"{where} ({money(held)})" if len(source) == 1 else f"{where} ({money(held)} in all)"
    cites = [r.cite for r in source + cards]
    if held < owed:
        text = f"Paying all of it from {said} would fall {money(owed - held)} short."
        return [(text + "\n", cites)]
    text = (
        f"Paying all of it from {said} would leave {money(held - owed)} there. Whatever "
        "is left is also your cushion for emergencies, so weigh what the cards cost you in "
        "interest against how much you want to keep set aside."
    )
    return [(text + "\n", cites)]


def _names(question: Question, row: Row) -> bool:
    """Tell whether the question names this account (its institution or its name)."""
    said = set(question.names) | {w for i in question.institutions for w in i.split()}
    place = f"{row.get('institution_name') or ''} {row.get('account_name') or ''}".lower()
    return bool(said & set(place.split()))


def sell(question: Question, rows: list[Row], whole: bool = False) -> list[Block]:
    """What the user holds of a ticker, its share of the portfolio (with the rest of the mix
    when the question weighs it against the whole), and whose choice it is."""
    # The portfolio's rows (a ticker summed over accounts, no account named), when the
    # question weighs a holding against the whole mix: the shares of it cite them.
    mix = {r.get("ticker"): r for r in rows if r.get("ticker") and not r.get("account_name")}
    held = [r for r in rows if r.get("ticker") and r.get("account_name")] or list(mix.values())
    wanted = [r for r in held if r.get("ticker") in question.tickers] or held
    if whole:
        wanted = wanted + [r for r in held if r not in wanted]
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
                [r.cite] + ([mix[r.get("ticker")].cite] if r.get("ticker") in mix else []),
            )
        )
    if whole:
        blocks += _accounts_of(wanted[:1], rows)
    return blocks + _against_debts(question, wanted, rows)


def debts_named(question: Question) -> tuple[str, ...]:
    """The kinds of debt a question about selling names ("to wipe out my card debt"), which
    what the holding is worth is set against."""
    return tuple(k for k in question.kinds if k in ("credit", "loan", "mortgage"))


def _against_debts(question: Question, wanted: list[Row], rows: list[Row]) -> list[Block]:
    """What the holding asked about is worth against the debts the question names: what
    selling it would clear, before any tax on a gain."""
    kinds = debts_named(question)
    debts = [
        r
        for r in rows
        if r.owed
        and not r.get("ticker")
        and r.balance
        and (r.kind in kinds or r.get("account_subtype") in kinds)
    ]
    if not debts or not wanted:
        return []
    worth = sum(number(r.get("market_value")) or 0.0 for r in wanted[:1])
    owed = _total(debts)
    noun = "credit card" if all(r.kind == "credit" for r in debts) else "debt"
    what = debts[0].label if len(debts) == 1 else f"your {count_of(len(debts), noun)}"
    each = "" if len(debts) == 1 else " (" + ", ".join(f"{r.title} {r.owes}" for r in debts) + ")"
    if worth >= owed:
        left = f"selling it all would clear them with {money(worth - owed)} to spare"
    else:
        left = f"selling it all would leave {money(owed - worth)} still owed"
    return [
        (
            f"Against it, {what} {'owes' if len(debts) == 1 else 'owe'} {money(owed)}{each}: "
            f"{left}, before any tax on a gain (I don't have what you paid for it). "
            "What the debt costs you in interest, against what the holding may earn, is the "
            "trade-off.\n",
            [r.cite for r in debts] + [r.cite for r in wanted[:1]],
        )
    ]


def _place(row: Row) -> tuple[object, ...]:
    keys = ("institution_name", "account_name")
    return tuple(row.get(k) for k in keys)


def _accounts_of(wanted: list[Row], rows: list[Row]) -> list[Block]:
    """The brokerage account a holding sits in, what it is worth in all (uninvested cash
    included) and the holding's share of it."""
    blocks: list[Block] = []
    for held in wanted:
        place = _place(held)
        account = next(
            (
                r
                for r in rows
                if not r.get("ticker") and r.balance is not None and _place(r) == place
            ),
            None,
        )
        if account is None or not account.balance:
            continue
        inside = [r for r in rows if r.get("ticker") and _place(r) == place]
        cash = account.balance - sum(number(r.get("market_value")) or 0.0 for r in inside)
        value = number(held.get("market_value")) or 0.0
        kept = f", {money(cash)} of it uninvested cash" if cash >= 0.01 else ""
        blocks.append(
            (
                f"{opening(account.label)} is worth {account.amount()} in all{kept}: "
                f"{held.get('ticker')} is {percent(value, account.balance)} of it.\n",
                [account.cite, held.cite],
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
