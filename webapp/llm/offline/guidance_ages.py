"""A guided answer's rule about the age to claim Social Security: the full retirement age
for the year the person was born, and what claiming early or waiting until 70 does to the
monthly benefit, as the page gives it."""

from __future__ import annotations

import re

from . import lexicon
from .cite import Block
from .guidance import Case
from .guidance_figures import cites
from .scope import padded
from .words import join_words, sentence

# Words that weigh claiming later: the page's delayed credits answer them.
_LATER = ("later", "longer", "wait", "waiting", "delay", "delaying", "hold out", "hold off", "70")


def claim_age(case: Case) -> list[Block]:
    """Social Security: the full retirement age for the year the person was born."""
    blocks = case.quote("as early as", case.topic.limit)
    if lexicon.has_phrase(padded(case.question.text), _LATER):
        blocks += case.quote("delayed retirement credits")  # "or hold out longer?"
    age = case.page.number(case.topic.limit, "is")
    since = case.page.number(case.topic.limit, "born in")
    born = [y for y in case.question.years if y < 2010]
    if born and age and since:
        if born[0] >= since:
            blocks.append(
                (
                    f"\nBorn in {born[0]}, your full retirement age is {age}: you turn 62 in "
                    f"{born[0] + 62} and {age} in {born[0] + age}.",
                    [],
                )
            )
            credits = case.page.sentence("delayed retirement credits")
            found = re.search(r"(\d+) percent a year", credits[0]) if credits else None
            yearly = int(found[1]) if found else None
            if yearly and lexicon.has_phrase(padded(case.question.text), _LATER) and age < 70:
                blocks.append(
                    (
                        f" Waiting until 70, in {born[0] + 70}, would add {70 - age} years of "
                        f"credits, about {(70 - age) * yearly} percent more each month than at "
                        f"{age}.",
                        [],
                    )
                )
        else:
            blocks.append(
                (
                    f"\nThe page gives the full retirement age only for people born in {since} "
                    f"or later, not for {born[0]}.",
                    [],
                )
            )
    rows = [r for r in case.accounts if r.balance is not None]  # those it names (the query's)
    if "named" in case.bearing and rows:
        worth = join_words([f"{r.label} holds {r.amount()}" for r in rows])
        blocks.append(
            (
                f"\n{sentence(worth)} today; I can't tell what it will be worth by the time you "
                "claim, and how you draw on it beside Social Security is your choice.",
                cites(rows),
            )
        )
    blocks.append(("\n", []))
    blocks += case.quote(*case.topic.quotes)
    return blocks
