"""Money as people read it, one way everywhere: "$1,842.17", "-$20.00", "1,234.50 EUR".

The one formatter of amounts: the pages (a Jinja global, `templates/_money.html`), the offline
engine's answers (`webapp.llm.offline.words.money`) and so the answer's Copy, which copies the
answer's text, all draw a figure through `format_money`.

- Minor units are the currency's own, from Unicode CLDR as `babel.numbers` carries them:
  two for the dollar and the euro, none for the yen, three for the Bahraini dinar. A code
  CLDR doesn't know gets two.
- Rounding: an amount is read as the decimal it is written as (a float by its shortest repr,
  never through binary digits) and rounded half up, a tie going away from zero, the way people
  round by hand: 2.675 is $2.68, 1234.5 JPY is 1,235 JPY. (Banker's rounding, half even, is
  for ledgers that add rounded figures; nothing adds what this module draws.)
- Zero has no sign: -0.001 USD is "$0.00", never "-$0.00".
- A value that is not a finite number, or has more than `LARGEST_DIGITS` whole digits (a
  corrupt or hostile row: 1e1000000), is drawn as missing ("—"), not as a page of digits or
  an error, and is left out of every total.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext

from babel.numbers import get_currency_precision

__all__ = [
    "LARGEST_DIGITS",
    "MISSING",
    "as_decimal",
    "currency_code",
    "format_money",
    "format_percent",
    "minor_units",
]

MISSING = "—"
# The most whole digits an amount drawn as a number may have: far past any real balance.
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


def minor_units(code: str) -> int:
    """Return how many decimal places amounts in `code` are drawn with (CLDR's digits)."""
    return int(get_currency_precision(code))


def format_money(value: object, currency: object = "USD", *, signed: bool = False) -> str:
    """Format an amount: `$1,842.17`, `-$20.00`, `1,235 JPY`; `+$0.09` when `signed`."""
    amount = as_decimal(value)
    if amount is None:
        return MISSING
    code = currency_code(currency)
    places = minor_units(code)
    rounded = _round(amount, places)
    sign = "-" if rounded < 0 else "+" if signed and rounded > 0 else ""
    digits = f"{rounded.copy_abs():,.{places}f}"  # exact at any length; -0.00 becomes 0.00
    return f"{sign}${digits}" if code == "USD" else f"{sign}{digits} {code}"


def format_percent(value: object, *, places: int = 1, signed: bool = False) -> str:
    """Format a percentage: `25.3%`; `+0.05%` when `signed`."""
    amount = as_decimal(value)
    if amount is None:
        return MISSING
    rounded = _round(amount, places)
    sign = "-" if rounded < 0 else "+" if signed and rounded > 0 else ""
    return f"{sign}{rounded.copy_abs():,.{places}f}%"
