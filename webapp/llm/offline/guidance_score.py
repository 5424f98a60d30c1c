"""A credit score's rule joined to the user's figures (a guidance.toml topic's `rule`):
the cards' utilization, one of the things a score weighs, and what opening or closing a card
does to it; the score itself is not among the data, and the answer says so."""

from __future__ import annotations

import re

from .cite import Block
from .figures import Row
from .guidance import Case
from .guidance_figures import cites, narrowed, of_kind, total
from .words import join_words, money, percent


def score(case: Case) -> list[Block]:
    """A credit score: the cards' utilization, one of the things it weighs."""
    cards = [r for r in of_kind(case.accounts, "credit") if r.get("credit_limit")]
    cards = narrowed(case.question, cards)
    blocks: list[Block] = []
    if not cards:
        blocks.append(
            (
                "You have no credit cards with a limit linked, so there is no "
                "utilization to look at. ",
                [],
            )
        )
    else:
        owed = total(cards)
        limits = sum(float(r.get("credit_limit") or 0) for r in cards)
        said = (
            f"You owe {money(owed)} against {money(limits)} in credit limits, so "
            f"{percent(owed, limits)} of your available credit is in use"
        )
        if len(cards) > 1:
            each = [
                f"{r.label} ({r.owes} of {money(float(r.get('credit_limit') or 0))})" for r in cards
            ]
            said += f": {join_words(each)}"
        blocks.append((said + ".", cites(cards)))
    blocks.append(("\n\n", []))
    blocks += case.quote(*case.topic.quotes)
    if "card_opened" in case.bearing and cards:
        every = [r for r in of_kind(case.accounts, "credit") if r.get("credit_limit")]
        blocks.append(_opened(case.question.text, every, cards))
    blocks.append(
        (
            "\n"
            + (
                case.topic.unknown
                or "I don't have your credit score or your reports, so I can't say how far it "
                "would move: your payment history and the other things it weighs count too."
            ),
            [],
        )
    )
    return blocks


_CLOSING = re.compile(r"\b(close|closing|closed|cancel|cancelling|canceling)\b", re.I)


def _limit(rows: list[Row]) -> float:
    return sum(float(r.get("credit_limit") or 0) for r in rows)


def _opened(text: str, every: list[Row], named: list[Row]) -> Block:
    """What opening (or closing) a card does to the two things a score weighs that it moves:
    an application is new credit, and its limit changes the share of credit in use (of all
    the cards, less the one named to close, whose balance would still be owed)."""
    owed, limits = total(every), _limit(every)
    if not _CLOSING.search(text):
        return (
            "\nApplying for another card is an application for new credit, which the scores "
            f"weigh, and its limit would add to your {money(limits)}, so the same {money(owed)} "
            "owed would be a smaller share of your available credit. ",
            cites(every),
        )
    if len(named) < len(every) and _limit(named) < limits:
        left = limits - _limit(named)
        return (
            f"\nClosing {join_words([r.label for r in named])} would take "
            f"{money(_limit(named))} off your {money(limits)} in limits: the same "
            f"{money(owed)} owed would then be {percent(owed, left)} of the {money(left)} "
            f"left, not {percent(owed, limits)}. ",
            cites(every),
        )
    return (
        f"\nClosing a card takes its limit off your {money(limits)}, so the same "
        f"{money(owed)} owed would be a larger share of your available credit. ",
        cites(every),
    )
