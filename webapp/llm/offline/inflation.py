"""Cash set against inflation: an open question about cash that names inflation ("while
inflation eats it", "losing buying power") is answered with the bundled page's sentence on
what inflation does to cash kept, and what the rate the Fed aims for would take from the
user's own balance in a year, both cited."""

from __future__ import annotations

import re

from . import lexicon
from .ask import Question
from .cite import Block, Result, cite
from .figures import Row
from .scope import padded
from .words import money

KEY = "inflation"  # its page in `[open_guides]`
_GUIDE = lexicon.table("open_guides")[KEY]
_NAMED = tuple(map(str, _GUIDE["when"]))
_RATE = re.compile(r"inflation of (\d+(?:\.\d+)?) percent")


def names_inflation(question: Question) -> bool:
    """Tell whether an open question speaks of inflation (or of the buying power it takes)."""
    return lexicon.has_phrase(padded(question.text), _NAMED)


def inflation_lines(cash: list[Row], results: list[Result]) -> list[Block]:
    """The page's sentence on cash and inflation, then the user's cash at the rate it says
    the Fed aims for; nothing when the page didn't come back."""
    for result in results:
        if result.title != _GUIDE["title"]:
            continue
        for at, text in enumerate(result.texts):
            said = next(
                (s for s in re.split(r"(?<=[.!?])\s+", text) if _GUIDE["sentence"] in s), None
            )
            if said is None:
                continue
            blocks: list[Block] = [
                (f"\n\nOn inflation: {said.strip()}", [cite(result, at, at + 1)])
            ]
            rate = next((m for t in result.texts if (m := _RATE.search(t))), None)
            have = sum(r.balance or 0.0 for r in cash)
            if rate and have > 0:
                share = float(rate[1])
                where = cash[0].label if len(cash) == 1 else "your bank accounts"
                blocks.append(
                    (
                        f"At the {rate[1]} percent the Federal Reserve aims for, the "
                        f"{money(have)} in {where} would lose about {money(have * share / 100)} "
                        "of buying power a year unless it earns at least that in interest; "
                        "what sits above your emergency fund is the part to weigh putting to "
                        "work elsewhere.",
                        [cite(result), *(r.cite for r in cash)],
                    )
                )
            return blocks
    return []
