"""An account described as a whole ("tell me about my Citi card", "give me the rundown on my
chase savings"): every figure on record for each account the question names, not its balance
alone. A card: what is owed, its credit limit, the credit left and the share of the limit used;
an account that holds money: its balance, and what of it is available when that differs; a
home: what it is valued at. Each account's sentence cites that account's row."""

from __future__ import annotations

from .cite import Block, number
from .figures import Row
from .words import money, percent, sentence


def _card(row: Row) -> str:
    owed = abs(row.balance or 0.0)
    limit = number(row.get("credit_limit"))
    said = f"{row.label}: you owe {money(owed, row.currency)}"
    if not limit:
        return said + ", with no credit limit on record."
    return (
        f"{said} of its {money(limit, row.currency)} credit limit, leaving"
        f" {money(limit - owed, row.currency)} available ({percent(owed, limit)} of the limit"
        " used)."
    )


def _held(row: Row) -> str:
    if row.owed:
        return f"{row.label}: you owe {row.owes}."
    verb = "is valued at" if row.kind == "property" else "has a balance of"
    said = f"{row.label} {verb} {row.amount()}"
    available = number(row.get("available_balance"))
    if row.kind == "depository" and available is not None and available != row.balance:
        said += f", {money(available, row.currency)} of it available to spend"
    elif row.kind == "investment" and available:
        said += f", {money(available, row.currency)} of it uninvested cash"
    return said + "."


def described(rows: list[Row]) -> list[Block]:
    """Each account's figures on record, one sentence an account, each citing its row."""
    accounts = [r for r in rows if not r.get("ticker") and r.get("account_type")]
    return [
        (sentence(_card(row) if row.kind == "credit" else _held(row)) + "\n", [row.cite])
        for row in accounts
    ]
