"""One money formatter: pages and the offline engine's answers draw every amount alike, in the
currency's own minor units, rounded half up, with no signed zero and no crash on any value."""

from __future__ import annotations

import re
from decimal import Decimal, localcontext

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.llm.offline.words import money as answer_money
from webapp.money import MISSING, as_decimal, currency_code, format_money, minor_units

CURRENCIES = ("USD", "usd", None, "", "null", "EUR", "gbp", "JPY", "KRW", "BHD", "KWD", "ZZZ")
AMOUNTS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**45), max_value=10**45),
    st.decimals(allow_nan=False, allow_infinity=False, places=4),
)
_SHAPE = re.compile(
    r"^(?P<sign>[-+]?)(?P<dollar>\$?)(?P<digits>[\d,]+(?:\.\d+)?)(?: (?P<code>[A-Z]+))?$"
)


@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(CURRENCIES))
def test_pages_and_answers_draw_an_amount_alike(value: float, currency: str | None) -> None:
    assert answer_money(value, currency) == format_money(value, currency)


@given(AMOUNTS, st.sampled_from(CURRENCIES), st.booleans())
def test_an_amount_reads_back_within_half_a_minor_unit(
    value: float | int | Decimal, currency: str | None, signed: bool
) -> None:
    shown = format_money(value, currency, signed=signed)
    amount = as_decimal(value)
    if amount is None:
        assert shown == MISSING
        return
    match = _SHAPE.match(shown)
    assert match, shown
    code = currency_code(currency)
    assert (match["dollar"] == "$") == (code == "USD")
    assert match["code"] == (None if code == "USD" else code)
    places = minor_units(code)
    fraction = match["digits"].partition(".")[2]
    assert len(fraction) == places
    read = Decimal(match["digits"].replace(",", ""))
    if match["sign"] == "-":
        read = read.copy_negate()
    with localcontext(prec=100):  # the default 28 digits would round a long amount here
        assert abs(read - amount) <= Decimal(1).scaleb(-places) / 2
    if read == 0:  # no signed zero, ever
        assert match["sign"] == ""


@pytest.mark.parametrize(
    ("value", "currency", "shown"),
    [
        (1234.5, "JPY", "1,235 JPY"),
        (2.675, "USD", "$2.68"),
        (-2.675, "USD", "-$2.68"),
        (-0.001, "USD", "$0.00"),
        (-0.4, "JPY", "0 JPY"),
        (1.2345, "BHD", "1.235 BHD"),
        (1.5, "ZZZ", "1.50 ZZZ"),
        (1e1000000, "USD", MISSING),
        (10**1000000, "USD", MISSING),
        (Decimal("1e1000000"), "USD", MISSING),
        (1e37, "USD", "$" + f"{10**37:,}.00"),
    ],
    ids=[
        "yen-has-no-minor-unit",
        "half-up",
        "half-up-away-from-zero",
        "no-negative-zero",
        "no-negative-zero-yen",
        "dinar-has-three",
        "unknown-code-has-two",
        "huge-float",
        "huge-int",
        "huge-decimal",
        "large-but-drawn",
    ],
)
def test_the_cases_the_two_formatters_disagreed_on(
    value: object, currency: str, shown: str
) -> None:
    assert format_money(value, currency) == shown
    if isinstance(value, float):
        assert answer_money(value, currency) == shown


def test_every_digit_of_a_long_amount_is_kept() -> None:
    # Past the decimal module's default 28 digits, abs() would round the last ones away.
    assert format_money(10**28 + 1, "USD") == "$10,000,000,000,000,000,000,000,000,001.00"
    assert format_money(-(10**30 + 1), "JPY") == "-1,000,000,000,000,000,000,000,000,000,001 JPY"
