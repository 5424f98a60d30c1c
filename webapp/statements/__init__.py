"""Uploaded bank statements: CSV or OFX/QFX in, clean Plaid-signed rows out.

The type is sniffed from the content, never from the file's name: OFX by its header, CSV
otherwise (text with a header row). Binary content, text in no encoding a bank uses, a
file over its row bound, or any line that can't be read is refused whole with a
`StatementError` whose message names the line or field; nothing of it is kept.
"""

from __future__ import annotations

from datetime import date

from .categories import categorize
from .csv_reader import MAPPED, ColumnNames, read_csv
from .ofx_reader import looks_like_ofx, read_ofx
from .rows import MAX_ROWS, Statement, StatementError, StatementRow, account_mask, clean_text

__all__ = [
    "MAPPED",
    "MAX_ROWS",
    "ColumnNames",
    "Statement",
    "StatementError",
    "StatementRow",
    "account_mask",
    "categorize",
    "clean_text",
    "parse_statement",
]


def _text(data: bytes) -> str:
    if b"\x00" in data[:65536]:
        raise StatementError("The file is not a CSV or OFX statement: it holds binary data.")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise StatementError("The file is not text in an encoding a bank export uses.")


def parse_statement(data: bytes, today: date, names: ColumnNames | None = None) -> Statement:
    """Read a statement file's bytes; raise StatementError when any of it can't be read.

    `names` maps `date`, `description` and `amount` to a CSV's own column names, where the
    person gave them (a bank export whose names are not recognised).
    """
    if not data.strip():
        raise StatementError("The file is empty.")
    if looks_like_ofx(data[:4096]):
        return read_ofx(data, today)
    return Statement("csv", read_csv(_text(data), today, names))
