"""Sums and what-ifs over accounts the person chooses: a total of several named accounts ("add
up my brokerage and my ether wallet", "what do I owe Amex and Citi between them"), one account
less others ("take my savings and subtract every card balance"), and what an account would
be left at after paying others from it ("if I cleared the Sapphire out of my Chase checking").
Each account's figure cites that account's own rows.
"""

from __future__ import annotations

import re

from . import lexicon
from .ask import Question
from .cite import Block
from .figures import Row
from .sides import (
    Computation,
    Measure,
    about_accounts,
    describe,
    figure,
    held,
    measure_of,
    resolve,
    shown,
    side,
    whole,
)
from .words import join_words, money, words

# The words of these questions, so that the typo reader never takes one for another word.
TALLY_WORDS = frozenset(
    [
        "subtract",
        "subtracting",
        "deduct",
        "deducting",
        "minus",
        "wiped",
        "wipe",
        "wiping",
        "cleared",
        "clearing",
        "settled",
        "zeroed",
        "knocked",
        "leftover",
        "remaining",
        "remain",
        "headroom",
        "uninvested",
        "unused",
        "combined",
        "tally",
        "completely",
        "entirely",
        "fully",
    ]
)
_PRONOUNS = frozenset(lexicon.phrases("follow_up", "pronouns"))
_LIST = re.compile(r",\s*|\s+(?:and|plus|with)\s+(?:also\s+)?")
# What is asked next, after the accounts a clause names: "... from checking, what would ..."
_THEN = r"(?: (?:what|how|would|will|then|today|now|and|is|does|do)\b.*)?$"
_PAID = (
    r"(?:paid|pay|paying|cleared|clear|clearing|wiped|wipe|wiping|settled|settle|covered|"
    r"cover|used|use|zeroed|zero|knocked|knock|killed|kill|paid off|cleaned)"
    r"(?: out| off| down)?"
)
_TOTAL = (
    re.compile(
        r"(?:add up|add together|adding up|sum up|total up|tally up|total of|sum of|combined"
        r" value of|combine) (?P<list>.+?)(?: for me| please| together| combined| up)*"
        r"(?: (?:what|how)\b.*)?$"
    ),
    re.compile(
        r"(?:owe|have|got|hold|is there|is in|is on|are)(?: on| in| at| with| across| to)?"
        r" (?P<list>.+?) (?:between them|between the two|between both|together|combined|put"
        r" together|added together|added up|in total|altogether|all together)\b"
    ),
    # "savings and brokerage together, how much is that?": the accounts named first, summed
    re.compile(
        r"^(?:(?:what s|whats|what is|what are|how much is|how much are|tell me) )?(?P<list>.+?)"
        r" (?:together|combined|put together|added together|added up|in total|altogether)"
        r"(?: (?:and |so )?(?:what|how)\b.*)?$"
    ),
    # "between the cash in checking and the unused credit on my card, what's the most I could
    # spend": what the two come to, not how they differ
    re.compile(
        r"^between (?P<list>.+?) (?:what|how)\b(?!.*\b(?:more|less|bigger|larger|smaller|higher"
        r"|lower|difference|gap|which)\b)(?=.*\b(?:most|total|altogether|spend|spent|use)\b)"
    ),
)
_LEFT = (
    re.compile(
        r"(?:if|suppose|supposing|say|after|once|when|were) (?:i |we )?(?:had |were to |was to )?"
        rf"{_PAID} (?P<b>.+?) (?:from|with|using|out of|by using|by taking from) (?P<a>.+?){_THEN}"
    ),
    # "what's left in checking after I pay the card off completely": where it is paid from
    # named first, by what would be left in it
    re.compile(
        r"(?:left|leftover|remain|remaining|remains|be)(?: over)? (?:in|on|at|of) (?P<a>.+?)"
        rf" (?:after|if|once|when) (?:i |we )?(?:had |were to |was to )?{_PAID} (?P<b>.+?)$"
    ),
    # "if I used my savings to pay off the sapphire"
    re.compile(
        r"(?:if|suppose|supposing|say|after|once|when) (?:i |we )?(?:used|use|took|take|tapped|"
        rf"emptied|drew on) (?P<a>.+?) to {_PAID} (?P<b>.+?){_THEN}"
    ),
)
# "could my checking pay that off today", "would savings cover the amex": what it would leave
_COULD = re.compile(
    r"^(?:could|can|would|will|does|do) (?P<a>(?:my |the |our )\S+(?: \S+)?)"
    r" (?:pay off|pay|cover|clear|wipe out|handle) (?P<b>.+?)"
    r"(?: (?:today|now|right now|off|in full|tomorrow|rn|this month))*$"
)
_BANKED = frozenset({"checking", "savings", "depository"})
# "add up my checking and savings then take away everything i owe on cards": a total, less
# others (read before the total alone)
_SUM_LESS = re.compile(
    r"(?:add up|add together|adding up|sum up|total up|tally up|combine|take|start with|total"
    r"|add) (?P<a>.+?)(?: together| up| combined)? (?:and then|and|then) (?:subtract|minus"
    rf"|take away|take off|deduct|remove|knock off|less|take out|knock out) (?P<b>.+?){_THEN}"
)
_QUESTION_WORD = re.compile(r" (?:what|how|would|will|then|today|now|is|does|do)\b")
_RESULT = re.compile(
    r" (left|leftover|remain|remaining|remains|still|afterwards|after that|be at|end up|leave|"
    r"leaves|be in|be there|have|balance|after) "
)
# "net my chase card against my chase checking and savings": the accounts less the card
_NET = re.compile(
    rf"\bnet (?:out |off )?(?P<b>.+?) (?:out |off )?(?:against|from|off|with) (?P<a>.+?){_THEN}"
)
_MINUS = (
    re.compile(
        r"(?:take|start with|starting with|taking) (?P<a>.+?) and (?:subtract|minus|take away|"
        rf"take off|deduct|remove|knock off) (?P<b>.+?){_THEN}"
    ),
    re.compile(rf"(?:subtract|deduct|take away) (?P<b>.+?) from (?P<a>.+?){_THEN}"),
    # "take the freedom card off my checking and savings"
    re.compile(rf"^(?:take|knock) (?P<b>.+?) (?:off|out of) (?P<a>.+?){_THEN}"),
    _NET,
    # "savings minus all my card debt?"
    re.compile(
        r"^(?:what s |whats |what is |what are |how much is |tell me )?(?P<a>.+?)"
        rf" (?:minus|less|take away|after subtracting|after paying) (?P<b>.+?){_THEN}"
    ),
)


# "Citi balance, Sapphire balance, and which one's higher?": the two, compared
_WHICH = re.compile(
    r"^(?P<list>.+?),?\s+(?:and\s+|so\s+)?(?:which|what)(?:\s+one|\s+of them|\s+of the two)?"
    r"(?:'s|\s+is|\s+s)?\s+(?:the\s+)?(?:higher|bigger|larger|more|greater|lower|smaller|less"
    r"|highest|biggest|largest)\b"
)


_PARTICLE = re.compile(
    r"(?: (?:off|out|down|in full|completely|complete|entirely|fully|totally|today|now|rn"
    r"|right now|tomorrow))+$"
)


def _items(listed: str) -> list[str]:
    """The accounts a list names, without what the verb says of them ("it off in full")."""
    found = (_PARTICLE.sub("", i.strip()) for i in _LIST.split(listed.strip()))
    return [i for i in found if i and i != "the"]


def _named(text: str) -> bool:
    """A side names accounts ("my ether wallet": a kind, though ETH is a ticker; "the
    Sapphire": a name the user's data may hold), or points back at the last question's ("it")."""
    found = side(text)
    if held(found) and not found.kinds:
        return False  # "my stocks": holdings, summed by `compute.py`
    named = found.kinds or found.institutions or found.names or about_accounts(found)
    return bool(named) or text.strip() in _PRONOUNS


def read_tally(text: str, phrase: str) -> Computation | None:
    """Return a total, a difference of chosen accounts or a what-if the question asks, or None."""
    said = " ".join(words(text.replace(",", " and ")))  # "A, B and C": each one
    which = _WHICH.search(text.lower().strip())
    items = _items(which["list"].replace(" vs ", " and ")) if which else []
    if len(items) == 2 and all(map(_named, items)):
        return Computation("difference", tuple(side(i) for i in items))
    less = _SUM_LESS.search(said)
    if less:
        summed, taken = _items(less["a"]), _items(less["b"])
        if summed and taken and all(map(_named, [*summed, *taken])):
            return Computation("minus", (side(" and ".join(summed)), *(side(p) for p in taken)))
    for pattern in _TOTAL:
        found = pattern.search(said)
        items = _items(found["list"]) if found else []
        if len(items) > 1 and all(map(_named, items)):
            measure = measure_of(side(text))
            measure = measure if measure in ("available", "limit") else "balance"
            sides = tuple(side(i) for i in items)
            # each side measured its own way: "the cash in checking and the unused credit"
            measures = tuple(measure_of(s) for s in sides)
            if "available" in measures and len(set(measures)) > 1:
                mixed: tuple[Measure, ...] = tuple(
                    m if m in ("available", "limit") else "balance" for m in measures
                )
                return Computation("total", sides, measures=mixed)
            return Computation("total", sides, measure)
    for op, patterns in (("left", (*_LEFT, _COULD)), ("minus", _MINUS)):
        for pattern in patterns:
            found = pattern.search(said)
            if not found or (op == "left" and not _RESULT.search(phrase) and pattern is not _COULD):
                continue
            paid = _items(found["b"])
            base = _PARTICLE.sub("", _extended(said, found).strip())
            if pattern is _COULD and not _pays_for(base, paid):
                continue
            if _named(base) and paid and all(map(_named, paid)):
                sides = (side(base), *(side(p) for p in paid))
                if pattern is _NET and _owes(sides[0]) and not any(map(_owes, sides[1:])):
                    sides = (side(" and ".join(paid)), side(base))  # the debt is netted off
                return Computation("left" if op == "left" else "minus", sides)
    return None


def _pays_for(base: str, paid: list[str]) -> bool:
    """ "could my checking pay that off": a bank account that pays accounts (or what the last
    question named), not a card that covers a rental car."""
    banked = set(side(base).kinds) & _BANKED
    paying = [side(p) for p in paid]
    return bool(banked) and all(p.kinds or p.institutions or points_back(p) for p in paying)


def _owes(one: Question) -> bool:
    """A side that names only debts ("my chase card", "what I owe")."""
    debts = {"credit", "loan", "mortgage"}
    return bool(one.kinds) and set(one.kinds) <= debts or whole(one) == "debts"


def _extended(said: str, found: re.Match[str]) -> str:
    """The account a clause pays from, with the accounts an "and" adds to it before the question
    ("... against my chase checking and savings, whats left": both, not checking alone)."""
    named = found["a"]
    if found.start("b") > found.end("a"):
        return named  # "take my savings and subtract ...": what follows is what is taken
    tail = said[found.end("a") :]
    while tail.startswith(" and "):
        ask = _QUESTION_WORD.search(tail, 4)
        piece = tail[5 : ask.start() if ask else None].strip()
        piece = piece.removesuffix(" and").strip()
        if not piece or not _named(piece) or points_back(side(piece)):
            break
        named = f"{named} and {piece}"
        tail = tail[5 + len(piece) :] if ask is None else tail[ask.start() :]
        if ask is not None:
            break
    return named


def points_back(one: object) -> bool:
    """Tell a side that only points at the last question's accounts ("it", "them")."""
    text = getattr(one, "text", "")
    return isinstance(text, str) and text.removeprefix("my ").strip(" ?.!,") in _PRONOUNS


def _line(row: Row) -> str:
    owed = " owed" if row.owed else ""
    return f"- {row.title}: {shown(row, 'balance')}{owed}\n"


def write_tally(c: Computation, rows: list[Row]) -> list[Block]:
    """Write a total or a what-if, each account's figure citing its own rows."""
    found = [resolve(s, rows) for s in c.sides]
    missing = [s for s, f in zip(c.sides, found, strict=True) if not f]
    if missing:
        return [(f"I couldn't find {describe(missing[0])} among your linked accounts.", [])]
    chosen = list({id(r): r for f in found for r in f}.values())
    lines: list[Block] = [(_line(r), [r.cite]) for r in chosen]
    cites = [r.cite for r in chosen]
    note: list[Block] = [(c.note + "\n", [])] if c.note else []
    if c.op == "total" and c.measures:
        return [*note, *_mixed(c, found)]
    if c.op == "total":
        total = sum(figure(r, c.measure) or 0.0 for r in chosen)
        owed = all(r.owed for r in chosen)
        named = join_words([r.label for r in chosen])
        said = {
            "available": f"you have {money(total)} of available credit on",
            "limit": f"your credit limits come to {money(total)} on",
        }.get(c.measure, f"you owe {money(total)} on" if owed else f"{money(total)} is in")
        if c.measure != "balance":
            lines = [(f"- {r.title}: {shown(r, c.measure)}\n", [r.cite]) for r in chosen]
        return [*note, (f"Together, {said} {named}.\n", cites), *lines]
    base = found[0]
    paid = [r for r in chosen if all(r is not b for b in base)]
    start = sum(figure(r, "balance") or 0.0 for r in base)
    out = sum(figure(r, "balance") or 0.0 for r in paid)
    rest = start - out
    where = join_words([r.label for r in base])
    what = join_words([f"{r.label} ({shown(r, 'balance')})" for r in paid])
    if c.op == "minus":
        debt = "what you owe on " if all(r.owed for r in paid) else ""
        names = join_words([r.label for r in paid])
        said = (
            f"{where} ({money(start)}) minus {debt}{names} ({money(out)}) comes to {money(rest)}."
        )
    elif rest >= 0:
        said = f"Paying off {what} from {where} ({money(start)}) would leave {money(rest)} there."
    else:
        said = (
            f"Paying off {what} from {where} ({money(start)}) would need {money(-rest)}"
            " more than it holds."
        )
    return [*note, (said[:1].upper() + said[1:] + "\n", cites), *lines]


_SAID = {"available": "unused credit", "limit": "credit limit", "balance": "balance"}


def _mixed(c: Computation, found: list[list[Row]]) -> list[Block]:
    """A total of sides each measured its own way (a balance and a card's unused credit)."""
    parts = [
        (r, c.measured(i))
        for i, rows in enumerate(found)
        for r in rows
        if figure(r, c.measured(i)) is not None
    ]
    total = sum(figure(r, m) or 0.0 for r, m in parts)
    said = join_words([f"the {_SAID[m]} on {r.label} ({shown(r, m)})" for r, m in parts])
    return [
        (f"Together that comes to {money(total)}: {said}.\n", [r.cite for r, _ in parts]),
    ]
