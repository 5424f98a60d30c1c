"""A judgement asked of the figure the last answer gave ("is that decent for someone in their
late thirties, or am I behind?" after "what's my net worth?"): the same figures again, each
cited, saying what was assumed, and plainly what the answer can't judge. The bundled
documents hold no benchmarks by age or income, so the answer doesn't invent one: it says so,
and what would tell (the figure's make-up, the user's goals)."""

from __future__ import annotations

import re

from . import lexicon
from .ask import Question
from .scope import padded

_POINTING = lexicon.phrases("follow_up", "pronouns")
# Words that weigh a figure: "decent", "normal for my age", "am I behind", "on track".
_WEIGHED = re.compile(
    r" (decent|good|great|bad|normal|average|typical|healthy|ok|okay|alright|reasonable|enough"
    r"|a lot|too much|too little|too low|too high|low|high|behind|ahead|on track|on course"
    r"|respectable|solid|poor|worrying) "
)
_AGE = re.compile(
    r" (age|my age|years old|\d\d|twenties|thirties|forties|fifties|sixties|20s|30s|40s|50s"
    r"|60s|peers|people like me|someone like me) "
)
_NAMED = {
    "net_worth": "net worth",
    "cash": "cash",
    "debts": "debt",
    "utilization": "credit utilization",
    "balances": "balance",
    "holdings": "holdings",
}


def read_judged(text: str, last: Question | None) -> tuple[str, str] | None:
    """Return (the note that says what was assumed, the closing paragraph) when a short
    follow-up asks a judgement of the last answer's figures, or None."""
    phrase = padded(text)
    if last is None or not last.about_data or len(text.split()) > 16:
        return None
    if not (lexicon.has_phrase(phrase, _POINTING) and _WEIGHED.search(phrase)):
        return None
    measure = next((_NAMED[i] for i in last.intents if i in _NAMED), "figures")
    note = f"Taking that as your {measure}, from your last question:"
    if _AGE.search(phrase):
        closing = (
            f"Whether that is good for your age I can't say from what I have: the documents I "
            f"have give no benchmarks of {measure} by age, and averages hide a wide spread. "
            "What tells you more is what it is made of and whether it is moving toward your "
            "own goals."
        )
    else:
        closing = (
            f"The documents I have give no benchmark to judge that {measure} by, so I can't "
            "say whether it is good or bad; that depends on your goals and what you spend."
        )
    return note, closing
