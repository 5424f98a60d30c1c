"""What a statement file becomes: its rows, Plaid-signed, every text cleaned and masked.

A row's text comes from a stranger's file, so it is made plain before it is kept: control
characters and lone surrogates go, spaces collapse, a leading formula sign (`=`, `+`, `-`,
`@`) is defused as OWASP advises for CSV injection, and a run of 8 or more digits (a card
or account number) keeps only its last four. Amounts and dates outside what a household
statement can hold are refused, naming the line.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Literal, TypeAlias

StatementFormat: TypeAlias = Literal["csv", "ofx"]

MAX_ROWS = 5000
MAX_TEXT = 255
# The largest single amount a personal statement plausibly holds.
MAX_AMOUNT = Decimal("100000000")
EARLIEST = date(1970, 1, 1)
_DIGIT_RUN = re.compile(r"(?<![0-9])[0-9](?:[ -]?[0-9]){7,}(?![0-9])")
_SPACES = re.compile(r"\s+")
_FORMULA_START = ("=", "+", "-", "@")


class StatementError(ValueError):
    """The file can't be read; the message, in plain words, names the line or field."""


@dataclass(frozen=True, slots=True)
class StatementRow:
    """One transaction of a statement: Plaid's sign (a positive amount is money out)."""

    line: int
    on: date
    description: str
    amount: Decimal
    currency: str
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Statement:
    """A parsed file: its format, its rows, and the account number it names, masked."""

    format: StatementFormat
    rows: tuple[StatementRow, ...]
    account_mask: str | None = None


def mask_number(text: str) -> str:
    """Return `text` with each run of 8+ digits (spaces or dashes between) masked to its last 4."""

    def masked(match: re.Match[str]) -> str:
        digits = re.sub(r"[^0-9]", "", match.group(0))
        return "****" + digits[-4:]

    return _DIGIT_RUN.sub(masked, text)


def clean_text(value: object, limit: int = MAX_TEXT) -> str:
    """Return `value` as one plain, bounded line of text, safe to keep and to show."""
    text = value if isinstance(value, str) else "" if value is None else str(value)
    kept = []
    for char in text:
        kind = unicodedata.category(char)
        if kind == "Cs":  # a lone surrogate: no encoding can write it
            continue
        kept.append(" " if kind in ("Cc", "Cf", "Zl", "Zp") else char)
    plain = _SPACES.sub(" ", "".join(kept)).strip()
    plain = mask_number(plain)
    if plain.startswith(_FORMULA_START):
        plain = "'" + plain
    return plain[:limit]


def account_mask(value: object) -> str | None:
    """Return the last four characters of an account number as `****1234`, or None."""
    digits = re.sub(r"[^0-9A-Za-z]", "", value) if isinstance(value, str) else ""
    return "****" + digits[-4:] if digits else None


def checked_amount(value: Decimal, line: int, field: str) -> Decimal:
    """Return `value` to the cent, or refuse one that no statement holds."""
    if not value.is_finite() or abs(value) >= MAX_AMOUNT:
        raise StatementError(f"Line {line}: the {field} is not an amount a statement can hold.")
    try:
        return value.quantize(Decimal("0.01"))
    except InvalidOperation:
        raise StatementError(f"Line {line}: the {field} can't be read as an amount.") from None


def checked_date(value: date, line: int, today: date) -> date:
    """Return `value`, or refuse a date before 1970 or more than a year ahead."""
    if value < EARLIEST or value.year > today.year + 1:
        raise StatementError(f"Line {line}: the date {value.isoformat()} is out of range.")
    return value


def bounded(rows: list[StatementRow]) -> tuple[StatementRow, ...]:
    """Return the rows, refusing an empty file or one longer than MAX_ROWS."""
    if not rows:
        raise StatementError("The file has no transactions.")
    if len(rows) > MAX_ROWS:
        raise StatementError(f"The file has more than {MAX_ROWS} transactions.")
    return tuple(rows)
