"""What a trip came to ("What did the Seattle trip come to once the Hilton refund is taken
off?", "how much did my Denver vacation cost"), from the user's transactions.

A trip is read from the rows, not from a list: the charges whose payee or memo names the place,
and around them, from a week before the first to the last, the one-off charges (payees seen only
in that span: the flight, a restaurant there), refunds counted off. Routine payees (the coffee
shop, the gym) are left out because they also charge outside the span. The answer says that is
how it was counted; each figure cites the account whose rows it summed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ...store.spending import SPENDING
from ...tool_registry import EXECUTE_SQL
from .ask import GENERIC
from .cite import Block, Result, number
from .figures import Row, rows_of
from .periods import month_start
from .plan import ToolCall
from .spending_ask import CATEGORY_WORDS, WHERE_FROM
from .words import STOPWORDS, a_or_an, join_words, money, word_set, words

_TRIP = r"(?:trip|trips|vacation|holiday|getaway|weekend away)"
_PLACE_FIRST = re.compile(rf"\b([a-z][a-z.'-]+(?: [a-z][a-z.'-]+)?) {_TRIP}\b")
_PLACE_AFTER = re.compile(rf"\b{_TRIP} (?:to|in) ([a-z][a-z.'-]+(?: [a-z][a-z.'-]+)?)\b")
_NOT_PLACE = (
    STOPWORDS
    | GENERIC
    | word_set("last recent business road work big little family weekend whole entire summer")
    | word_set("winter spring fall ski beach that this our my the a cost costs come came set")
    | word_set("total add adds spent spend run ran me us once after before")
)
_PAYEE = "COALESCE(merchant_name, description)"
# What asks what it cost, not what a card covers on it ("how much is covered on my Italy trip").
_COST = (
    r"\b(?:cost|costs|costing|come to|came to|coming to|spend|spent|set me back|add up|adds up"
    r"|added up|in total|all in|ran me|run me|total)\b"
    r"|\bhow much (?:was|were|did|has|have)\b"
)
_BEFORE = timedelta(days=7)  # a trip's flight or booking, up to a week before its first charge


def _place(text: str) -> str | None:
    lowered = " ".join(words(text))
    for pattern in (_PLACE_FIRST, _PLACE_AFTER):
        for found in pattern.finditer(lowered):
            kept = [w for w in found[1].split() if w not in _NOT_PLACE]
            if kept and all(len(w) >= 3 for w in kept):
                return " ".join(kept)
    return None


def _day(text: object) -> date | None:
    try:
        return date.fromisoformat(str(text)[:10])
    except ValueError:
        return None


@dataclass(frozen=True)
class Trip:
    """The task: each payee's rows of the last six months, summed, and the trip's among them:
    those around the charges naming its place, or the payees the question names ("the united
    flight, the hilton and the chowder place")."""

    place: str | None
    today: date
    payees: frozenset[str] = frozenset()

    def calls(self) -> list[ToolCall]:
        since = month_start(self.today, 5)
        query = (
            f"SELECT {WHERE_FROM}, {_PAYEE} AS merchant, MIN(description) AS first_memo,"
            " MAX(description) AS last_memo, MIN(date) AS first_date, MAX(date) AS last_date,"
            " COUNT(*) AS transactions, ROUND(SUM(amount), 2) AS total,"
            " ROUND(SUM(CASE WHEN amount < 0 THEN -amount ELSE 0 END), 2) AS refunded,"
            f" currency FROM transaction_details WHERE date >= '{since.isoformat()}'"
            f" AND {SPENDING} GROUP BY {WHERE_FROM}, {_PAYEE}, currency ORDER BY first_date"
        )
        return [ToolCall(EXECUTE_SQL, {"query": query})]

    def write(self, results: list[Result]) -> list[Block]:
        rows = [r for r in rows_of(results) if r.get("first_date") and r.get("total")]
        if self.place is None:
            return self._named(rows)
        place = self.place

        def names_place(row: Row) -> bool:
            said = f"{row.get('merchant')} {row.get('first_memo')} {row.get('last_memo')}"
            return f" {place} " in " " + " ".join(words(said)) + " "

        anchors = [r for r in rows if names_place(r)]
        firsts = [d for r in anchors if (d := _day(r.get("first_date")))]
        lasts = [d for r in anchors if (d := _day(r.get("last_date")))]
        if not firsts or not lasts:
            return [
                (
                    f"I found no charges naming {place.title()} in your transactions of the"
                    " last six months, so I can't tell which charges were that trip.",
                    [],
                )
            ]
        start, end = min(firsts) - _BEFORE, max(lasts)

        def inside(row: Row) -> bool:
            first, last = _day(row.get("first_date")), _day(row.get("last_date"))
            return bool(first and last and start <= first and last <= end)

        trip = [r for r in rows if r in anchors or inside(r)]
        total = sum(number(r.get("total")) or 0.0 for r in trip)
        refunded = sum(number(r.get("refunded")) or 0.0 for r in trip)
        back = ""
        if refunded:
            refunds = [str(r.get("merchant")) for r in trip if number(r.get("refunded"))]
            back = f", after {money(refunded)} refunded by {join_words(refunds)}"
        span = f"{min(firsts) - _BEFORE:%B} {(min(firsts) - _BEFORE).day} to {end:%B} {end.day}"
        blocks: list[Block] = [
            (
                f"Your {place.title()} trip came to {money(total)}{back}.\n",
                [r.cite for r in trip],
            ),
            (
                f"I counted the charges naming {place.title()} and the one-off charges around"
                f" them ({span}); payees that also charge outside those days are left out:\n",
                [],
            ),
        ]
        for row in trip:
            net = money(number(row.get("total")) or 0.0)
            off = number(row.get("refunded"))
            note = f", net of {a_or_an(money(off))} {money(off)} refund" if off else ""
            line = f"- {row.get('merchant')}: {net}{note} ({row.label})\n"
            blocks.append((line, [row.cite]))
        return blocks

    def _named(self, rows: list[Row]) -> list[Block]:
        """The trip as the payees the question names: each one's charges, net of refunds."""
        trip = [r for r in rows if _payee_words(r) & self.payees]
        if not trip:
            return [
                (
                    "I found no charges from the places you named in your transactions of the"
                    " last six months.",
                    [],
                )
            ]
        total = sum(number(r.get("total")) or 0.0 for r in trip)
        refunded = sum(number(r.get("refunded")) or 0.0 for r in trip)
        back = f", after {money(refunded)} refunded" if refunded else ""
        blocks: list[Block] = [
            (
                f"Your trip came to {money(total)}{back}, counting the charges you named:\n",
                [r.cite for r in trip],
            )
        ]
        for row in trip:
            net = money(number(row.get("total")) or 0.0)
            off = number(row.get("refunded"))
            note = f", net of {a_or_an(money(off))} {money(off)} refund" if off else ""
            blocks.append((f"- {row.get('merchant')}: {net}{note} ({row.label})\n", [row.cite]))
        return blocks


def _payee_words(row: Row) -> set[str]:
    said = f"{row.get('merchant')} {row.get('first_memo')} {row.get('last_memo')}"
    return {w for w in words(said) if len(w) >= 4 and w not in _NOT_PAYEE}


# Words a question says of a trip that name no payee ("the united flight", "minus the refund").
_NOT_PAYEE = (
    _NOT_PLACE
    | CATEGORY_WORDS
    | word_set("couple months month weeks week ago back flight flights hotel stay place minus")
    | word_set("refund refunds refunded plus including include charges charge bill spot")
)


def read_trip(text: str, today: date) -> Trip | None:
    """Read a question about what a trip to a place cost (or a trip whose payees it names),
    or None."""
    place = _place(text)
    asks = re.search(_COST, text, re.IGNORECASE)
    if place and asks:
        return Trip(place, today)
    if not asks or not re.search(rf"\b{_TRIP}\b", text, re.IGNORECASE):
        return None
    payees = frozenset(w for w in words(text) if len(w) >= 4 and w not in _NOT_PAYEE)
    return Trip(None, today, payees) if payees else None
