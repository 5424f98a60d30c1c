"""A charge of the user's that a question names by its payee ("the Hilton Seattle charge",
"Hulu keeps charging my visa", "a Target charge on my card", "stuff I returned to Target"),
and that payee's rows on the user's cards, which a card rule's answer sets beside the rule.

The payee is read from the words around a charge: the one or two words before a charge's
noun ("the hilton seattle charge") or verb ("hulu keeps charging"), or after a preposition
that follows one ("a charge from amazon", "returned some stuff to target"), less the words
that name no payee (a card, an institution, "the store"). Which of those words really name
a payee is for the user's rows to say: the query finds the card charges whose payee holds
one of them, and the answer keeps the payee that holds the most.
"""

from __future__ import annotations

from datetime import date, timedelta

from .ask import ALIASES, GENERIC, INSTITUTIONS, KIND_PHRASES, Question
from .cite import Block, number
from .figures import Row
from .guidance_figures import named
from .spending_ask import ROW_COLUMNS
from .words import STOPWORDS, count_of, join_words, money, word_set, words

_NOUNS = word_set(
    "charge charges transaction transactions purchase purchases subscription bill refund refunds"
)
_VERBS = word_set(
    "charging charged charges billing billed overcharged overcharging debited refunded credited"
)
# What comes after a charge before its payee: "charged me at", "returned some stuff to".
_AFTER = _NOUNS | _VERBS | word_set("bought purchased returned refunded paid ordered")
_TO_PAYEE = word_set("from at to by with")
# Between a payee and its verb: "hulu keeps charging", "delta has been billing".
_BETWEEN = word_set("keeps keep kept has have been is was just still double also")
_NOT_PAYEE = (
    STOPWORDS
    | GENERIC
    | _NOUNS
    | _VERBS
    | _BETWEEN
    | _TO_PAYEE
    | {w for name in (*INSTITUTIONS, *ALIASES) for w in name.split()}
    | {w for cue, _ in KIND_PHRASES for w in cue.split()}
    | word_set("amex debit store shop merchant company issuer they them he she it")
)
# The user's card charges of the last six months whose payee holds a word the question says.
_SINCE = timedelta(days=183)
_CARDS = "source_account_id IN (SELECT source_account_id FROM account_details"
_CARDS += " WHERE account_type = 'credit')"


def _payee_word(word: str) -> bool:
    return len(word) >= 3 and not word.isdigit() and word not in _NOT_PAYEE


def _before(said: list[str], at: int) -> list[str]:
    """The one or two payee words just before position `at` (none if the first isn't one)."""
    kept: list[str] = []
    for word in reversed(said[max(at - 2, 0) : at]):
        if not _payee_word(word):
            break
        kept.insert(0, word)
    return kept


def payee_words(text: str) -> tuple[str, ...]:
    """Return the words of a question that may name the payee of one of its charges."""
    said = words(text)
    found: list[str] = []
    for at, word in enumerate(said):
        if word in _NOUNS:
            found += _before(said, at)
        if word in _VERBS:
            start = at
            while start and said[start - 1] in _BETWEEN:
                start -= 1
            found += _before(said, start)
        if word in _AFTER:
            ahead = said[at + 1 : at + 5]
            to = next((k for k, w in enumerate(ahead) if w in _TO_PAYEE), None)
            if to is not None:
                found += [w for w in said[at + 2 + to : at + 4 + to] if _payee_word(w)]
    return tuple(dict.fromkeys(w for w in found if _payee_word(w)))


def charges_query(names: tuple[str, ...], today: date) -> str:
    """The SELECT of the user's card charges and refunds whose payee holds one of `names`."""
    payee = "' ' || lower(COALESCE(merchant_name, '') || ' ' || description) || ' '"
    match = " OR ".join(f"{payee} LIKE '% {w.replace(chr(39), '')} %'" for w in names)
    since = (today - _SINCE).isoformat()
    return (
        f"SELECT {ROW_COLUMNS}, 1 AS named_payee FROM transaction_details"
        f" WHERE ({match}) AND {_CARDS} AND date >= '{since}' ORDER BY date LIMIT 40"
    )


def _payee(row: Row) -> str:
    return str(row.get("merchant_name") or row.get("description") or "")


def _day(row: Row) -> str:
    try:
        when = date.fromisoformat(str(row.get("date"))[:10])
    except ValueError:
        return str(row.get("date"))
    return f"{when:%B} {when.day}"


def named_charges(names: tuple[str, ...], rows: list[Row]) -> list[Row]:
    """Return the rows of the payee that holds the most of the question's words."""

    def held(payee: str) -> int:
        of = {
            w
            for r in rows
            if _payee(r) == payee
            for w in words(f"{r.get('merchant_name') or ''} {r.get('description') or ''}")
        }
        return len(set(names) & of)

    best = max((held(_payee(r)) for r in rows), default=0)
    return [r for r in rows if best and held(_payee(r)) == best]


def _at(question: Question, rows: list[Row]) -> tuple[list[Row], list[Block]]:
    """The rows at the institution or on the card the question names, else all of them,
    saying so when the payee charged none there ("netflix charged my amex": it was the Citi)."""
    there = named(question, rows)
    if there or not question.institutions or not rows:
        return there or rows, []
    places = join_words([i.title() for i in question.institutions])
    return rows, [(f"I found no {_payee(rows[0])} charges at {places}. ", [])]


def charges_said(question: Question, rows: list[Row]) -> list[Block]:
    """Say what the payee the question names charged (and refunded) on the user's cards."""
    kept, blocks = _at(question, named_charges(payee_words(question.text), rows))
    for place in dict.fromkeys(r.label for r in kept):
        mine = [r for r in kept if r.label == place]
        payee = _payee(mine[0])
        paid = [r for r in mine if (number(r.get("amount")) or 0.0) > 0]
        back = [r for r in mine if (number(r.get("amount")) or 0.0) < 0]
        amounts = {number(r.get("amount")) for r in paid}
        days = join_words([_day(r) for r in paid])
        if len(paid) > 1 and len(amounts) == 1:
            each = money(number(paid[0].get("amount")) or 0.0)
            text = f"{payee} charged {place} {each} each time, {count_of(len(paid), 'time')}"
            text += f" in the last six months (on {days})"
        elif paid:
            said = [f"{money(number(r.get('amount')) or 0.0)} on {_day(r)}" for r in paid]
            text = f"{payee} charged {place} {join_words(said)}"
        else:
            text = f"{payee} made no charge on {place} in the last six months"
        if back:
            refunds = [f"{money(-(number(r.get('amount')) or 0.0))} on {_day(r)}" for r in back]
            text += f", and refunded {join_words(refunds)}"
        blocks.append((text + ". ", [r.cite for r in mine]))
    return blocks
