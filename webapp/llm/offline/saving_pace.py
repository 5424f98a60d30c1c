"""What the user puts into savings on a schedule, read from their transactions, for the
cushion answer when the question weighs it ("am I putting enough into savings each month?",
"should I be moving more than I do into savings every month?"): each regular transfer into a
savings account (the same payer in at least three of the last six months), its usual amount,
cited to its rows, and what a year of it comes to."""

from __future__ import annotations

import re
from datetime import date

from .cite import Block, number
from .figures import Row
from .periods import month_start
from .spending_ask import WHERE_FROM
from .words import count_of, money

# Putting money away on a schedule: "putting enough into savings each month", "monthly".
_PACE = re.compile(
    r"\b(put|putting|puts|move|moving|transfer|transferring|add|adding|save|saving|stash"
    r"|stashing|sock|socking|contribut\w*|deposit\w*)\b.*\b((each|every|a|per) (month|paycheck"
    r"|payday|week)|monthly|weekly|regularly)\b"
)


def _day(iso: str) -> str:
    """ "2026-11-15" -> "November 15, 2026" (as it came, if it is no date)."""
    try:
        day = date.fromisoformat(iso[:10])
    except ValueError:
        return iso
    return f"{day:%B} {day.day}, {day.year}"


def asks_pace(text: str) -> bool:
    """Tell whether a question weighs what the user puts away on a schedule."""
    return _PACE.search(text.lower()) is not None


def pace_query(today: date) -> str:
    """The regular transfers into a savings account over the last six months."""
    since = month_start(today, 5)
    return (
        f"SELECT {WHERE_FROM}, COALESCE(merchant_name, description) AS mover,"
        " COUNT(DISTINCT substr(date, 1, 7)) AS months, ROUND(AVG(-amount), 2) AS moved,"
        " MAX(date) AS last_moved, currency FROM transaction_details"
        f" WHERE date >= '{since.isoformat()}' AND category = 'TRANSFER_IN' AND amount < 0"
        " AND lower(account_name) LIKE '%saving%'"
        f" GROUP BY {WHERE_FROM}, COALESCE(merchant_name, description), currency"
        " HAVING COUNT(DISTINCT substr(date, 1, 7)) >= 3 ORDER BY moved DESC"
    )


def pace_lines(rows: list[Row]) -> list[Block]:
    """Each regular transfer into savings as a sentence, cited to its rows; a plain note
    when there is none."""
    moves = [r for r in rows if r.get("moved") is not None]
    if not moves:
        return [("\n\nI see no regular transfers into a savings account in your transactions.", [])]
    blocks: list[Block] = []
    for r in moves:
        each = number(r.get("moved")) or 0.0
        place = f"{r.get('institution_name')} {str(r.get('account_name')).lower()} account"
        blocks.append(
            (
                f"\n\nYou move {money(each, r.currency)} a month into your {place} "
                f"(in {count_of(int(r.get('months') or 0), 'month')} of the last six, the "
                f"latest on {_day(str(r.get('last_moved')))}): "
                f"{money(12 * each, r.currency)} a year at that pace.",
                [r.cite],
            )
        )
    return blocks
