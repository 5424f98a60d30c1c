"""Messages answered as one task, whatever their parts: a sum come in and what to do with it
(`windfall.py`), both ends of a kind of account and the gap between them (`ends.py`), which
ticker moved more (`moves.py`), and whether the last figure counts an account
(`included.py`)."""

from __future__ import annotations

from .card_charge import read_card_charge
from .conversation import questions_of
from .cushion_whole import read_cushion_whole
from .ends import read_ends
from .included import read_included
from .months_left import read_months_left
from .moves import read_moves
from .task import Context, Task
from .windfall import Windfall, read_windfall


def read_whole(text: str, context: Context) -> Task | None:
    """Return the one task a whole message is, or None when its parts are read one by one."""
    came_in = read_windfall(text)
    if came_in is not None:  # "a $3,000 bonus: what's the most sensible thing to do with it?"
        return Windfall(text, came_in, context.today)
    if len(questions_of(text)) == 1 and (charged := read_card_charge(text)):
        return charged  # "would putting a $900 couch on my visa hurt my score?"
    left = read_months_left(text, context.today)
    if left is not None:  # "after a $3k trip, would savings still cover 3 months of rent?"
        return left
    return (
        read_ends(text)  # "which card has the biggest balance, the smallest, the gap?"
        or read_moves(text, context.earlier, context.market)
        or read_included(text, context.earlier)
        or read_cushion_whole(text, context)  # "how big should it be, and am I there yet?"
    )
