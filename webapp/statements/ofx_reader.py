"""An OFX or QFX statement, 1.x (SGML) or 2.x (XML), read by `ofxtools`.

`ofxtools` reads the header and the structure and converts each aggregate to typed values.
When it can't, the transactions are looked at one by one, so the refusal can name the
transaction and the field (its FITID, and TRNAMT or DTPOSTED) instead of the library's
own words. OFX signs an amount as the account sees it (a debit is negative); rows are kept
with Plaid's sign (positive is money out).
"""

from __future__ import annotations

import io
import re
from datetime import date
from decimal import Decimal, InvalidOperation
from xml.etree.ElementTree import Element

from ofxtools.models.base import Aggregate
from ofxtools.Parser import OFXTree

from .rows import (
    MAX_ROWS,
    Statement,
    StatementError,
    StatementRow,
    account_mask,
    bounded,
    checked_amount,
    checked_date,
    clean_text,
)

_OFX_DATE = re.compile(r"\d{8}")
_NOT_OFX = "The file is not a statement in OFX format: its header or structure can't be read."


def looks_like_ofx(head: bytes) -> bool:
    """Tell whether a file's first bytes are an OFX 1.x header or an OFX 2.x document."""
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:4096].upper()
    return start.startswith(b"OFXHEADER:") or (start.startswith(b"<?XML") and b"<?OFX" in start)


def _which(element: Element, index: int) -> str:
    fitid = clean_text(element.findtext("FITID") or "", 32)
    return f"Transaction {index}" + (f" (FITID {fitid})" if fitid else "")


def _explain(tree: OFXTree) -> StatementError:
    """Find the first transaction `ofxtools` can't convert, and say which field is wrong."""
    for index, element in enumerate(tree.findall(".//STMTTRN"), start=1):
        try:
            Aggregate.from_etree(element)
        except Exception:  # the library's many kinds of refusal: say which field, not which
            where = _which(element, index)
            amount = (element.findtext("TRNAMT") or "").strip()
            try:
                Decimal(amount)
            except InvalidOperation:
                return StatementError(f"{where}: the TRNAMT field is not an amount.")
            posted = (element.findtext("DTPOSTED") or "").strip()
            if not _OFX_DATE.match(posted):
                return StatementError(f"{where}: the DTPOSTED field is not a date.")
            return StatementError(f"{where}: one of its fields can't be read.")
    return StatementError("The statement's account or balance fields can't be read.")


def read_ofx(data: bytes, today: date) -> Statement:
    """Parse an OFX/QFX file; StatementError names what can't be read."""
    tree = OFXTree()
    try:
        tree.parse(io.BytesIO(data))
    except Exception:  # a malformed header or unbalanced tags, however the library says so
        raise StatementError(_NOT_OFX) from None
    try:
        ofx = tree.convert()
    except Exception:
        raise _explain(tree) from None
    rows: list[StatementRow] = []
    mask = None
    for statement in ofx.statements:
        currency = clean_text(getattr(statement, "curdef", None) or "USD", 3).upper()
        account = getattr(statement, "account", None)
        mask = mask or account_mask(getattr(account, "acctid", None))
        for index, txn in enumerate(statement.transactions, start=1):
            line = len(rows) + 1
            posted = txn.dtposted.date()
            amount = checked_amount(Decimal(txn.trnamt), index, "TRNAMT")
            text = " ".join(str(part) for part in (txn.name, txn.memo) if part)
            rows.append(
                StatementRow(
                    line=line,
                    on=checked_date(posted, index, today),
                    description=clean_text(text) or "(no description)",
                    amount=-amount,
                    currency=currency if re.fullmatch(r"[A-Z]{3}", currency) else "USD",
                )
            )
            if len(rows) > MAX_ROWS:
                break
    return Statement("ofx", bounded(rows), mask)
