"""Small readings the advice answers share: a count of months a question names ("3 months of
rent", "six months' worth of mortgage payments"), and the account a question says money would
come out of ("using my savings", "out of checking")."""

from __future__ import annotations

import re

from .figures import Row

_SPELLED = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a": 1,
}  # fmt: skip
_COUNT = r"(\d{1,2}|" + "|".join(k for k in _SPELLED if k != "a") + r")"
_MONTHS = re.compile(_COUNT + r"[\s-]+months?\b", re.IGNORECASE)
_RANGE = re.compile(_COUNT + r"\s*(?:to|-|or|and)\s*" + _COUNT + r"[\s-]+months?\b", re.IGNORECASE)


def months_said(text: str) -> int | None:
    """The count of months a question names ("3 months of rent", "six-month fund"), or None;
    "3 to 6 months" names a range, not one count."""
    found = _MONTHS.findall(text)
    if len(found) != 1 or _RANGE.search(text):
        return None
    said = found[0].lower()
    count = int(said) if said.isdigit() else _SPELLED[said]
    return count if 0 < count <= 24 else None


# "using my savings", "from my checking", "out of the wells fargo account": where it comes from.
_SOURCE = re.compile(
    r"\b(?:using|use|with|from|out of|outta|draining|drain|dip into|dipping into|raid|raiding)"
    r"\s+(?:(?:my|the|our|all|of|some)\s+){0,3}((?:\w+\s+){0,2}?)(savings|checking|cash)\b",
    re.IGNORECASE,
)


def paid_from(text: str, cash: list[Row]) -> list[Row]:
    """The bank accounts the question says money would come out of ("nuke my cards using my
    savings"), or [] when it names none (or none of that kind is linked)."""
    found = _SOURCE.search(text)
    if found is None or found[2].lower() == "cash":
        return []
    kind, place = found[2].lower(), found[1].lower().split()
    rows = [r for r in cash if (r.get("account_subtype") or "").lower() == kind]
    if place:
        named = [r for r in rows if set(place) & _words_of(r)]
        rows = named or rows
    return rows


def _words_of(row: Row) -> set[str]:
    return set(str(row.get("institution_name")).lower().split())
