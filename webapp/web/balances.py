"""The accounts page's balance sheet: assets and debts apart, their totals, and net worth.

Balances follow the data (docs/specs.md; the demo rows follow Plaid): a credit or loan account's
current balance is the amount owed, so a debt counts at its size whatever its sign, as the
offline engine's net-worth answer counts it. Each currency is added up on its own; nothing
is converted. An account with no balance on record is listed but not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from ..money import as_decimal, currency_code

__all__ = ["DEBT_TYPES", "BalanceSheet", "Group", "Line", "Side", "balance_sheet", "side_of"]

Side = Literal["asset", "debt"]
# Plaid's account types whose balance is owed; every other type (depository, investment,
# property, crypto, other) is something the user has.
DEBT_TYPES = frozenset({"credit", "loan"})


def side_of(account_type: object) -> Side:
    """Return whether an account of this type is a debt or an asset."""
    kind = account_type.strip().lower() if isinstance(account_type, str) else ""
    return "debt" if kind in DEBT_TYPES else "asset"


@dataclass(frozen=True, slots=True)
class Line:
    """One account on the sheet: what it counts for (owed, for a debt), or None."""

    account: Mapping[str, Any]
    amount: Decimal | None
    currency: str


@dataclass(frozen=True, slots=True)
class Group:
    """Assets or debts: their accounts and a total per currency (in first-seen order)."""

    side: Side
    lines: tuple[Line, ...]
    totals: tuple[tuple[str, Decimal], ...]

    @property
    def counted(self) -> int:
        return sum(1 for line in self.lines if line.amount is not None)


@dataclass(frozen=True, slots=True)
class BalanceSheet:
    """Both groups and, per currency, net worth: assets minus debts."""

    assets: Group
    debts: Group
    net_worth: tuple[tuple[str, Decimal], ...]
    uncounted: tuple[Line, ...]

    @property
    def currencies(self) -> tuple[str, ...]:
        return tuple(currency for currency, _ in self.net_worth)


def _line(account: Mapping[str, Any], side: Side) -> Line:
    amount = as_decimal(account.get("current_balance"))
    if amount is not None and side == "debt":
        amount = abs(amount)
    return Line(account, amount, currency_code(account.get("currency")))


def _totals(lines: Iterable[Line]) -> dict[str, Decimal]:
    totals: dict[str, Decimal] = {}
    for line in lines:
        if line.amount is not None:
            totals[line.currency] = totals.get(line.currency, Decimal(0)) + line.amount
    return totals


def balance_sheet(accounts: Sequence[Mapping[str, Any]]) -> BalanceSheet:
    """Split accounts into assets and debts, in their order, and add each side up."""
    sides = [(account, side_of(account.get("account_type"))) for account in accounts]
    assets = tuple(_line(a, "asset") for a, side in sides if side == "asset")
    debts = tuple(_line(a, "debt") for a, side in sides if side == "debt")
    have, owe = _totals(assets), _totals(debts)
    currencies = list(dict.fromkeys([*have, *owe]))
    worth = tuple((c, have.get(c, Decimal(0)) - owe.get(c, Decimal(0))) for c in currencies)
    uncounted = tuple(line for line in (*assets, *debts) if line.amount is None)
    return BalanceSheet(
        Group("asset", assets, tuple(have.items())),
        Group("debt", debts, tuple(owe.items())),
        worth,
        uncounted,
    )
