"""Money as people read it, one way on every page: "$1,842.17", "-$20.00", "1,234.50 EUR".

The same shape as the offline engine's answers (`webapp.llm.offline.words.money`), so a
figure reads alike in the chat and on the accounts pages. Amounts round half up on their
decimal digits (never through binary floats), and a currency other than the dollar keeps its
ISO 4217 code after the number.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext

__all__ = ["as_decimal", "currency_code", "format_money", "format_percent"]

# Currencies whose amounts have no minor unit (ISO 4217 exponent 0) among the common ones.
_NO_DECIMALS = frozenset({"CLP", "ISK", "JPY", "KRW", "VND"})
_MISSING = "—"
# The most whole digits an amount drawn as a number may have: far past any real balance. A
# value past it (a corrupt or hostile row: 1e1000000) is drawn as missing, not as a page of
# digits or an error, and is left out of every total.
LARGEST_DIGITS = 38


def as_decimal(value: object) -> Decimal | None:
    """Return a finite number of at most `LARGEST_DIGITS` whole digits as a Decimal (a float
    by its shortest repr), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, Decimal):
        amount = value if value.is_finite() else None
    elif isinstance(value, int):
        # Compared before converting: a number of thousands of digits is not read at all.
        amount = Decimal(value) if abs(value) < 10**LARGEST_DIGITS else None
    elif isinstance(value, float):
        amount = Decimal(repr(value)) if math.isfinite(value) else None
    else:
        return None
    # adjusted(): the power of ten of the first digit, read without any arithmetic.
    return amount if amount is not None and amount.adjusted() < LARGEST_DIGITS else None


def _round(amount: Decimal, places: int) -> Decimal:
    # Enough precision for every digit of the amount: quantize never fails on a large one.
    with localcontext(prec=max(28, amount.adjusted() + places + 2)):
        return amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def currency_code(currency: object) -> str:
    """Return the ISO code an amount is in; a missing one is the dollar, as the data means it."""
    if not isinstance(currency, str) or currency.strip().lower() in ("", "null", "none"):
        return "USD"
    return currency.strip().upper()


def format_money(value: object, currency: object = "USD", *, signed: bool = False) -> str:
    """Format an amount: `$1,842.17`, `-$20.00`, `1,234.50 EUR`; `+$0.09` when `signed`."""
    amount = as_decimal(value)
    if amount is None:
        return _MISSING
    code = currency_code(currency)
    places = 0 if code in _NO_DECIMALS else 2
    rounded = _round(amount, places)
    sign = "-" if rounded < 0 else "+" if signed and rounded > 0 else ""
    digits = f"{abs(rounded):,.{places}f}"  # abs() also turns -0.00 into 0.00
    return f"{sign}${digits}" if code == "USD" else f"{sign}{digits} {code}"


def format_percent(value: object, *, places: int = 1, signed: bool = False) -> str:
    """Format a percentage: `25.3%`; `+0.05%` when `signed`."""
    amount = as_decimal(value)
    if amount is None:
        return _MISSING
    rounded = _round(amount, places)
    sign = "-" if rounded < 0 else "+" if signed and rounded > 0 else ""
    return f"{sign}{abs(rounded):,.{places}f}%"
