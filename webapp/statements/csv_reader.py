"""A bank's CSV export: a header row, then one transaction a line.

The columns are found by name, as common bank exports spell them: a date, a description,
and either one signed amount or separate debit and credit columns. A signed amount follows
the banks' own convention (negative is money out); rows are kept with Plaid's (positive is
money out), so the sign flips. A file whose header names none of them, or any line that
can't be read, is refused whole, naming the column or the line.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

from .rows import (
    MAX_ROWS,
    StatementError,
    StatementRow,
    bounded,
    checked_amount,
    checked_date,
    clean_text,
)

DATE_NAMES = (
    "date",
    "transaction date",
    "trans date",
    "posted date",
    "posting date",
    "post date",
    "booking date",
    "value date",
    "trade date",
)
DESCRIPTION_NAMES = (
    "description",
    "transaction description",
    "payee",
    "name",
    "merchant",
    "merchant name",
    "details",
    "narrative",
    "memo",
    "reference",
)
AMOUNT_NAMES = ("amount", "transaction amount", "amount usd", "value", "net amount")
DEBIT_NAMES = (
    "debit",
    "debits",
    "debit amount",
    "withdrawal",
    "withdrawals",
    "money out",
    "paid out",
)
CREDIT_NAMES = ("credit", "credits", "credit amount", "deposit", "deposits", "money in", "paid in")
CATEGORY_NAMES = ("category",)
CURRENCY_NAMES = ("currency", "ccy")
_DATE_FORMATS = (
    "%Y-%m-%d",
    "%m/%d/%Y",
    "%m/%d/%y",
    "%Y/%m/%d",
    "%d.%m.%Y",
    "%Y%m%d",
    "%d %b %Y",
    "%b %d, %Y",
)
_NOT_NAME = re.compile(r"[^a-z0-9]+")
_MONEY_NOISE = re.compile(r"[\s$€£,]")
_DECIMAL_COMMA = re.compile(r"[-(]?[$€£]?\s?\d{1,3}(?:\.\d{3})*,\d{2}\)?")


def _key(name: str) -> str:
    return _NOT_NAME.sub(" ", name.lower()).strip()


def _find(header: list[str], names: tuple[str, ...]) -> int | None:
    keys = [_key(cell) for cell in header]
    for name in names:
        if name in keys:
            return keys.index(name)
    return None


def parse_date(text: str, line: int) -> date:
    """Read one date cell in any of the formats bank exports use."""
    cell = text.strip()
    for form in _DATE_FORMATS:
        try:
            return datetime.strptime(cell, form).date()
        except ValueError:
            continue
    raise StatementError(f'Line {line}: "{clean_text(cell, 40)}" is not a date.')


def parse_money(text: str, line: int, field: str) -> Decimal | None:
    """Read one amount cell: `$1,234.50`, `-12.00`, `(12.00)`; None for an empty cell."""
    cell = text.strip()
    if _DECIMAL_COMMA.fullmatch(cell):
        # `1.234,50` (a European export): the comma is the decimal point.
        cell = cell.replace(".", "").replace(",", ".")
    cell = _MONEY_NOISE.sub("", cell)
    if not cell:
        return None
    negative = cell.startswith("(") and cell.endswith(")")
    cell = cell.strip("()")
    try:
        value = Decimal(cell)
    except InvalidOperation:
        raise StatementError(
            f'Line {line}: the {field} "{clean_text(text, 40)}" is not an amount.'
        ) from None
    return checked_amount(-value if negative else value, line, field)


def _cell(row: list[str], index: int | None) -> str:
    return row[index] if index is not None and index < len(row) else ""


# Columns a person names on the upload form, for a bank whose names are not recognised.
ColumnNames = Mapping[str, str]
MAPPED = ("date", "description", "amount")


def read_csv(text: str, today: date, names: ColumnNames | None = None) -> tuple[StatementRow, ...]:
    """Parse a CSV statement's text; StatementError names what can't be read."""
    sample = text[:8192]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, ",;\t|")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    try:
        header = next(reader, None)
        if header is None:
            raise StatementError("The file is empty.")
        columns = _columns(header, names or {})
        rows: list[StatementRow] = []
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            rows.append(_row(row, line, columns, today))
            if len(rows) > MAX_ROWS:
                break
    except csv.Error:
        raise StatementError(f"Line {reader.line_num}: the line is not valid CSV.") from None
    return bounded(rows)


_Columns = tuple[int, int, int | None, int | None, int | None, int | None, int | None]


def _named(header: list[str], names: ColumnNames, field: str) -> int | None:
    """Find the column the person named for `field`; refuse a name the header lacks."""
    wanted = _key(names.get(field) or "")
    if not wanted:
        return None
    found = _find(header, (wanted,))
    if found is None:
        shown = clean_text(names.get(field), 40)
        raise StatementError(f'The first line has no column "{shown}" (named for the {field}).')
    return found


def _columns(header: list[str], names: ColumnNames) -> _Columns:
    given = {field: _named(header, names, field) for field in MAPPED}
    when = given["date"] if given["date"] is not None else _find(header, DATE_NAMES)
    what = given["description"]
    if what is None:
        what = _find(header, DESCRIPTION_NAMES)
    amount = given["amount"] if given["amount"] is not None else _find(header, AMOUNT_NAMES)
    debit, credit = _find(header, DEBIT_NAMES), _find(header, CREDIT_NAMES)
    if when is None:
        raise StatementError("The first line names no date column (such as Date or Posted Date).")
    if what is None:
        raise StatementError(
            "The first line names no description column (such as Description or Payee)."
        )
    if amount is None and debit is None and credit is None:
        raise StatementError("The first line names no amount column (Amount, or Debit and Credit).")
    return (
        when,
        what,
        amount,
        debit,
        credit,
        _find(header, CATEGORY_NAMES),
        _find(header, CURRENCY_NAMES),
    )


def _row(row: list[str], line: int, columns: _Columns, today: date) -> StatementRow:
    when, what, amount_at, debit_at, credit_at, category_at, currency_at = columns
    on = checked_date(parse_date(_cell(row, when), line), line, today)
    if amount_at is not None:
        signed = parse_money(_cell(row, amount_at), line, "amount")
        if signed is None:
            raise StatementError(f"Line {line}: the amount is empty.")
        amount = -signed  # the bank's money out (negative) is Plaid's positive
    else:
        debit = parse_money(_cell(row, debit_at), line, "debit")
        credit = parse_money(_cell(row, credit_at), line, "credit")
        if debit is None and credit is None:
            raise StatementError(f"Line {line}: both the debit and the credit are empty.")
        amount = abs(debit or Decimal(0)) - abs(credit or Decimal(0))
    currency = clean_text(_cell(row, currency_at), 3).upper()
    return StatementRow(
        line=line,
        on=on,
        description=clean_text(_cell(row, what)) or "(no description)",
        amount=amount,
        currency=currency if re.fullmatch(r"[A-Z]{3}", currency) else "USD",
        category=clean_text(_cell(row, category_at), 64) or None,
    )
