"""Periods of time as people name them: this month, last month, a named month, the last 30
days, and a period named against one asked before ("and the month before that?"). Each is
days from its start up to (not including) its end, and the words that name it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_ABBREVIATIONS = {name[:3]: index for index, name in enumerate(MONTHS, start=1)}
_MONTH = re.compile(
    r"\b(" + "|".join(MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b"
    r"(?:\s+(\d{4}))?"
)


@dataclass(frozen=True, slots=True)
class Period:
    """Days from `start` up to (not including) `end`, and how a person names them."""

    label: str
    start: date
    end: date

    def where(self) -> str:
        """Return the SQL condition on the ISO `date` column (text compares as dates do)."""
        return f"date >= '{self.start.isoformat()}' AND date < '{self.end.isoformat()}'"


def month_start(day: date, back: int = 0) -> date:
    """Return the first day of the month `back` months before `day`'s."""
    index = day.year * 12 + day.month - 1 - back
    return date(index // 12, index % 12 + 1, 1)


def month_period(first: date, label: str | None = None) -> Period:
    """Return the calendar month that starts on `first`."""
    named = f"{MONTHS[first.month - 1].capitalize()} {first.year}"
    return Period(f"{label} ({named})" if label else named, first, month_start(first, -1))


def this_month(today: date) -> Period:
    """Return this month so far."""
    return Period(
        f"this month ({MONTHS[today.month - 1].capitalize()} {today.year}, so far)",
        month_start(today),
        today + timedelta(days=1),
    )


def _named_month(text: str, today: date) -> Period | None:
    match = _MONTH.search(text)
    if match is None:
        return None
    word = match.group(1)
    month = MONTHS.index(word) + 1 if word in MONTHS else _MONTH_ABBREVIATIONS[word[:3]]
    year = int(match.group(2)) if match.group(2) else today.year
    if not match.group(2) and month > today.month:
        year -= 1  # "in November", asked in March: the November just gone
    return month_period(date(year, month, 1))


def named_period(text: str, today: date) -> Period | None:
    """The period a question names: the last 30 days, last month, this month, a month."""
    if re.search(r"\b(last|past)\s+(30|thirty)\s+days\b", text):
        return Period("in the last 30 days", today - timedelta(days=29), today + timedelta(days=1))
    if re.search(r"\b(last|previous|past)\s+month\b", text):
        return month_period(month_start(today, 1), "last month")
    if re.search(r"\bthis\s+month\b|\bso far\b", text):
        return this_month(today)
    named = _named_month(text, today)
    if named is not None:
        return Period(f"in {named.label}", named.start, named.end)
    return None


# A period named against the one asked before: "the month before that", "the previous one".
_EARLIER = re.compile(
    r"\b(?:(?:month|one|period|\d+(?: days)?) (?:before|prior|earlier)"
    r"|(?:previous|prior|preceding|earlier) (?:month|one)"
    r"|(?:a|one) month (?:before|earlier|prior))\b"
)
_LATER = re.compile(r"\b(?:(?:month|one) (?:after|later)|following month|(?:a|one) month later)\b")
# The words of a period asked again, which name no payee or category.
PERIOD_WORDS = frozenset(
    {"month", "months", "day", "days", "one", "period", "before", "prior", "earlier", "previous"}
    | {"preceding", "after", "later", "following", "that", "it", "then", "this", "those", "the"}
    | {"a", "in", "for", "of"}
)


def period_again(text: str, before: Period | None, today: date) -> Period | None:
    """The period a follow-up asks of the same question: one named against the period before
    ("and the month before that?": the calendar month before it; a span of days: as many
    days before it), or one named outright ("and in october?")."""
    back, ahead = _EARLIER.search(text), _LATER.search(text)
    if before is not None and (back or ahead):
        ends = month_start(before.end - timedelta(days=1))
        whole = before.start.day == 1 and ends == before.start
        if whole or before.label.startswith("this month"):
            first = month_start(before.start, 1 if back else -1)
            if first > today:
                return None
            return month_period(first, "the month before" if back else "the month after")
        days = before.end - before.start
        start = before.start - days if back else before.end
        last = start + days - timedelta(days=1)
        shown = f"{start:%B} {start.day} to {last:%B} {last.day}, {last.year}"
        side = "before" if back else "after"
        return Period(f"in the {days.days} days {side} that ({shown})", start, start + days)
    return named_period(text, today)
