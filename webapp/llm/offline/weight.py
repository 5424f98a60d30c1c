"""How much of what the user owns sits in one place ("is it risky that most of what I own is
tied up in the house?", "too much of my net worth in my 401(k)?"): the account or kind of
account the question names (else the largest), its value and its share of everything their
linked accounts hold, before debts, each figure cited to its rows; then the guide's sentence
on diversifying, and what the answer can't weigh. A holding of shares named by its ticker is
`overview.py`'s sell answer, which sets it against the mix of holdings."""

from __future__ import annotations

from .ask import Question
from .cite import Block
from .figures import Row
from .guidance_figures import narrowed
from .words import join_words, money, percent, sentence


def _value(row: Row) -> float:
    return abs(row.balance or 0.0)


def weighed(question: Question, rows: list[Row], guide: list[Block]) -> list[Block]:
    """The named place's share of all the user owns, then the guide."""
    assets = [r for r in rows if r.balance is not None and not r.owed]
    whole = sum(_value(r) for r in assets)
    if not assets or not whole:
        return [("You have no accounts with a balance linked, so I can't weigh what you own.", [])]
    named = narrowed(question, assets)
    if len(named) == len(assets):  # none named: the largest is what it weighs
        named = [max(assets, key=_value)]
    part = sum(_value(r) for r in named)
    names = join_words([r.label for r in named])
    verb = "is" if len(named) == 1 else "are"
    others = [r for r in assets if r not in named]
    blocks: list[Block] = [
        (
            f"{sentence(names)} {verb} worth {money(part)}: {percent(part, whole)} of the "
            f"{money(whole)} your linked accounts hold, before anything you owe. ",
            [r.cite for r in named],
        )
    ]
    if others:
        rest = join_words([f"{r.label} ({money(_value(r))})" for r in others])
        blocks.append((f"The rest is in {rest}.", [r.cite for r in others]))
    blocks += guide
    blocks.append(
        (
            "\nHow much risk that share is turns on what you need the money for and when, which "
            "your balances don't show: the pages I have give the principle, not a share to aim "
            "for.",
            [],
        )
    )
    return blocks
