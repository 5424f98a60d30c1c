"""An emergency fund's size asked in one part and the user's own money against it in another
("how big is an emergency fund supposed to be, and is what i have in savings there yet?",
"what's a good rainy day fund? am I anywhere close?"): one question, the cushion answer (the
cash the question names, how long it lasts on the fixed bills, the three-to-six-month target,
and the guide's sentence, each cited), not a rule quoted and then a balance on its own."""

from __future__ import annotations

import re

from .advice_figures import months_said
from .ask import understand
from .cash_advice import mentions_cushion
from .conversation import questions_of
from .task import Context, Opened, Task

# A part that weighs the user's own money against the target: "is what I have there yet",
# "am I close", "do I have that much", "how far off am I", "does my savings cut it".
_MEASURED = re.compile(
    r"\b(what i have|what ive got|what i got|do i have|have i got|am i|are we|do we have"
    r"|there yet|close|far off|far away|short|that much|enough|cut it|measure up|reach)\b"
)
_CASH = ("savings", "checking", "depository")


def _measures(part: str) -> bool:
    lowered = part.lower().replace("'", "").replace("\u2019", "")
    return _MEASURED.search(lowered) is not None


def read_cushion_whole(text: str, context: Context) -> Task | None:
    """The cushion task of a message whose parts ask the target and the user's standing."""
    if not mentions_cushion(text):
        return None
    parts = questions_of(text)
    if len(parts) != 2:
        return None
    rule, mine = parts
    if months_said(rule):
        return None  # "is 3 months of rent enough?": the months of that bill (guidance_quoted)
    if not mentions_cushion(rule) or mentions_cushion(mine) and not _measures(mine):
        return None
    asked = understand(mine)
    if asked.amounts or asked.tickers or asked.intents and "balances" not in asked.intents:
        return None  # "... and what's my net worth?": a question of its own
    own = bool(set(asked.kinds) & set(_CASH)) or _measures(mine) and asked.own
    if not own:
        return None
    return Opened("cushion", understand(text, own=True), "", context.today)
