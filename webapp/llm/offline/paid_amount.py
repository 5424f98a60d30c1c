"""An amount the person supposes paid into or out of one account, and what that account would
be at: "if I send $200 to my Visa, what will I still owe on it?" (what is owed, less the
payment), "say I put 500 into savings, how much is in there then?" (the balance, plus it),
"if I took $1,000 out of checking, what's left?" (the balance, less it). Arithmetic on today's
figures, each citing the account's own rows.
"""

from __future__ import annotations

import re

from .cite import Block
from .figures import Row
from .sides import Computation, describe, figure, resolve, side
from .words import amounts, bare_amounts, join_words, money, sentence, words

# What is asked after the account a clause names: "... my visa, what will I still owe?"
_ASKS = r"(?: (?:what|whats|how|hows|would|will|then|is|does|do|and|where|wheres)\b.*)?$"
# "if I send / pay / put / throw $200 to / toward / into / on my visa"
_IN = re.compile(
    r"(?:^| )(?:if|suppose|supposing|say|after|once|when|what if) (?:i |we )?(?:were to |was to )?"
    r"(?:send|sent|pay|paid|put|make|made|throw|threw|move|moved|transfer|transferred|add"
    r"|added|deposit|deposited|drop|dropped|knock|knocked)(?: a| another| an extra| extra)?"
    r"(?: payment of)? (?P<amount>\d[\d ]*(?:k| k| grand)?)(?: payment| more)?"
    r"(?: dollars| bucks)? (?P<way>to|toward|towards|into|in|on|onto|off|against|at) (?P<a>.+?)"
    + _ASKS
)
# "if I take / pull / withdraw / spend $1,000 out of / from checking"
_OUT = re.compile(
    r"(?:^| )(?:if|suppose|supposing|say|after|once|when|what if) (?:i |we )?(?:were to |was to )?"
    r"(?:take|took|pull|pulled|withdraw|withdrew|spend|spent|move|moved|transfer|transferred"
    r"|use|used)(?: out)? (?P<amount>\d[\d ]*(?:k| k| grand)?)(?: dollars| bucks)?"
    r" (?:out of|from|off) (?P<a>.+?)(?: (?:to|into|for|on)\b.*?)?" + _ASKS
)
# What asks the account's figure after it: "still owe", "left", "be at", "how much is in".
_AFTER = re.compile(
    r" (?:owe|owed|owing|left|leftover|remain|remaining|remains|balance|be at|end up|leave"
    r"|leaves|be in|be there|in there|in it|on it|have|then|after) "
)


def read_paid_amount(text: str) -> Computation | None:
    """Return an amount supposed paid into (`goal` > 0) or out of (`goal` < 0) one account,
    when the question asks what the account would be at; or None."""
    said = " ".join(words(text))
    found = amounts(text) or bare_amounts(text)
    if len(found) != 1 or not _AFTER.search(f" {said} "):
        return None
    out = _OUT.search(said)
    into = None if out else _IN.search(said)
    match = out or into
    if match is None:
        return None
    account = side(match["a"])
    if not (account.kinds or account.institutions or account.names):
        return None
    if account.tickers or len(account.kinds) > 1:
        return None  # "put $500 into VTI": a holding; "into checking and savings": which?
    return Computation("pay", (account,), goal=found[0] if into else -found[0])


def write_paid_amount(c: Computation, rows: list[Row]) -> list[Block]:
    """Write what the account would be at, citing its rows: an amount paid to a debt lowers
    what is owed; put into an account, raises its balance; taken out, lowers it."""
    (one,) = c.sides
    found = resolve(one, rows)
    if not found:
        return [(f"I couldn't find {describe(one)} among your linked accounts.", [])]
    if len(found) > 1:
        names = join_words([r.label for r in found]).replace(" and ", " or ")
        return [(f"Which account do you mean? {sentence(describe(one))} could be {names}.", [])]
    (row,) = found
    amount, goal = abs(c.goal or 0.0), c.goal or 0.0
    now = figure(row, "balance") or 0.0
    if row.owed:
        after = now - goal  # a payment lowers what is owed; a charge raises it
        what = f"Paying {money(amount)} toward" if goal > 0 else f"Adding {money(amount)} to"
        said = f"{what} {row.label} ({money(now)} owed) would leave {money(after)} owed on it."
        if after < 0:
            said = (
                f"{what} {row.label} ({money(now)} owed) would pay it off with"
                f" {money(-after)} to spare, a credit on the card."
            )
    elif goal > 0:
        said = f"Putting {money(amount)} into {row.label} ({money(now)}) would bring it to"
        said += f" {money(now + goal)}."
    elif now + goal >= 0:
        said = f"Taking {money(amount)} out of {row.label} ({money(now)}) would leave"
        said += f" {money(now + goal)} there."
    else:
        said = f"Taking {money(amount)} out of {row.label} ({money(now)}) would need"
        said += f" {money(-(now + goal))} more than it holds."
    return [(sentence(said) + "\n", [row.cite])]
