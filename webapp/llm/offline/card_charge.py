"""A purchase put on a card, weighed against the credit score ("would putting a $1,500 tv on
my credit card mess up my credit?", "will charging 800 to the amex hurt my score?"): what the
card would owe after it, against its limit, its utilization before and after (and that of all
the cards, when there are several), each cited to the card's row, and the credit-score page's
sentence on keeping balances low, cited to its page. The score itself isn't in the data, and
the answer says so.

Read by meaning: an amount, a card (a kind, an institution or a card's name), a verb of
putting it on the card, and a word of what the score or the credit might suffer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...tool_registry import EXECUTE_PYTHON, EXECUTE_SQL
from .ask import Question, understand
from .cite import Block, Result, number
from .figures import Row, rows_of
from .overview import GUIDES, guidance
from .plan import ACCOUNT_COLUMNS, ToolCall, article_code
from .words import amounts, bare_amounts, money, percent

_CARDS = (
    f"SELECT {ACCOUNT_COLUMNS}, credit_limit FROM account_details WHERE account_type = 'credit'"
    " ORDER BY account_name, institution_name"
)
_PUT = re.compile(
    r"\b(put|putting|puts|charge|charging|charged|swipe|swiping|stick|sticking|throw|throwing"
    r"|buy|buying|pay for|paying for|run up|running up|use|using)\b"
)
_ON_CARD = re.compile(r"\b(on|to|with)\s+(my|the|a|our)?\s*(\w+\s+){0,3}?(card|cards|visa|amex)\b")
_HARM = re.compile(
    r"\b(credit score|my score|the score|score|my credit|mess up|messes up|wreck|wrecks|screw up"
    r"|mess with|hurt|hurts|ding|damage|ruin|tank|affect|impact|bad for|drop|lower)\b"
)


def read_card_charge(text: str) -> CardCharge | None:
    """The task of a purchase put on a card and weighed against the credit, or None."""
    lowered = text.lower()
    if not (_PUT.search(lowered) and _HARM.search(lowered)):
        return None
    question = understand(text)
    on_card = _ON_CARD.search(lowered) or (question.institutions and " on " in f" {lowered} ")
    if not on_card:
        return None  # "on the citi": a card by its bank's name
    if "credit" not in lowered and not re.search(r"\b(score|utili[sz]ation)\b", lowered):
        return None
    found = amounts(text) or [a for a in bare_amounts(text) if a >= 20]
    if len(found) != 1:
        return None
    return CardCharge(question, found[0])


def _named(question: Question, card: Row) -> bool:
    said = set(question.names) | {w for i in question.institutions for w in i.split()}
    place = f"{card.get('institution_name') or ''} {card.get('account_name') or ''}".lower()
    return bool(said & set(place.split()))


def _limit(card: Row) -> float:
    return number(card.get("credit_limit")) or 0.0


@dataclass(frozen=True)
class CardCharge:
    """The task of a purchase put on a card: the cards with their limits, the score page."""

    question: Question
    amount: float

    def calls(self) -> list[ToolCall]:
        code = article_code([GUIDES["credit_use"]["title"]])
        return [ToolCall(EXECUTE_SQL, {"query": _CARDS}), ToolCall(EXECUTE_PYTHON, {"code": code})]

    def write(self, results: list[Result]) -> list[Block]:
        cards = [r for r in rows_of(results) if r.owed and r.balance is not None]
        if not cards:
            return [("You have no credit cards linked, so there is no card to weigh it on.", [])]
        named = [r for r in cards if _named(self.question, r)]
        blocks: list[Block] = []
        for card in named or cards:
            blocks += self._one(card)
        limited = [r for r in cards if _limit(r)]
        if len(cards) > 1 and len(limited) == len(cards) and len(named or cards) == 1:
            owed = sum(abs(r.balance or 0.0) for r in cards)
            limits = sum(_limit(r) for r in cards)
            blocks.append(
                (
                    f"Across all your cards, what you use of your credit would go from "
                    f"{percent(owed, limits)} to {percent(owed + self.amount, limits)} "
                    f"({money(owed + self.amount)} of {money(limits)}). ",
                    [r.cite for r in cards],
                )
            )
        blocks.append(
            (
                "How much of your available credit you use is one of the things scores weigh, "
                "so a higher balance could lower a score until it is paid down. I don't have "
                "your credit score itself.",
                [],
            )
        )
        return blocks + guidance("credit_use", results)

    def _one(self, card: Row) -> list[Block]:
        owed = abs(card.balance or 0.0)
        after = owed + self.amount
        text = (
            f"Putting {money(self.amount)} on {card.label} would take what it owes from "
            f"{money(owed)} to {money(after)}"
        )
        limit = _limit(card)
        if limit:
            text += (
                f", against its {money(limit)} limit: its utilization would go from "
                f"{percent(owed, limit)} to {percent(after, limit)}"
            )
            if after > limit:
                text += f", {money(after - limit)} over the limit, which the card may decline"
        return [(text + ". ", [card.cite])]
