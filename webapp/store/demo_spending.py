"""Six months of the demo users' transactions, dated back from the day of seeding.

Pure and deterministic: the same user and day give the same rows, ids and amounts on any
machine (amounts vary by a hash of the seed, never by chance). The rows follow Plaid's
shape and sign (a positive amount is money out of the account) and its personal-finance
categories. A card's rows add up to its current balance: each month's charges are paid
from checking on the first of the next month, and this month's charges, the rest of the
card's balance included, are still owed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date, timedelta

DAYS = 183  # about six months
_SEED = "webapp-demo-spending-1"

# (institution, account name): as the demo's Plaid accounts are named.
AccountKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class DemoTransaction:
    """One demo row, before it has a database id."""

    account: AccountKey
    on: date
    name: str
    merchant: str | None
    amount: float
    category: str
    detail: str
    channel: str
    pending: bool = False


def _hash(*parts: object) -> int:
    data = "\x1f".join((_SEED, *(str(part) for part in parts))).encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def _between(low: float, high: float, *parts: object) -> float:
    """Return an amount in [low, high], the same every time for the same `parts`."""
    return round(low + (high - low) * (_hash(*parts) % 10_000) / 9_999, 2)


@dataclass(frozen=True, slots=True)
class _Rule:
    """A kind of row: on which days it happens, on which account, for how much."""

    account: AccountKey
    name: str
    merchant: str | None
    low: float
    high: float
    category: str
    detail: str
    when: Callable[[date], bool]
    channel: str = "in store"


def _monthly(day: int) -> Callable[[date], bool]:
    return lambda on: on.day == day


def _weekly(weekday: int) -> Callable[[date], bool]:
    return lambda on: on.weekday() == weekday


def _fortnightly(anchor: date) -> Callable[[date], bool]:
    return lambda on: (on - anchor).days % 14 == 0


def _some_days(salt: str, one_in: int) -> Callable[[date], bool]:
    return lambda on: _hash(salt, on.isoformat()) % one_in == 0


_FOOD = "FOOD_AND_DRINK"
_GROCERIES = "FOOD_AND_DRINK_GROCERIES"
_RESTAURANT = "FOOD_AND_DRINK_RESTAURANT"
_COFFEE = "FOOD_AND_DRINK_COFFEE"
_PAYDAY = date(2024, 1, 5)  # a Friday: pay comes every other Friday from then on

_CHASE_CHECKING = ("Chase", "Checking")
_SAVINGS = ("Chase", "Savings")
_WELLS = ("Wells Fargo", "Checking")
_AMEX = ("American Express", "Credit card")
_CITI = ("Citi", "Credit card")
_SAPPHIRE = ("Chase", "Sapphire Preferred")
_ALEX_CHECKING = ("Bank of America", "Checking")
_ALEX_CARD = ("Bank of America", "Credit card")

_RULES: dict[str, tuple[_Rule, ...]] = {
    "demo": (
        _Rule(
            _CHASE_CHECKING,
            "ACME CORP PAYROLL",
            "Acme Corp",
            -2850.0,
            -2850.0,
            "INCOME",
            "INCOME_WAGES",
            _fortnightly(_PAYDAY),
            "other",
        ),
        _Rule(
            _CHASE_CHECKING,
            "ROCKET MORTGAGE PAYMENT",
            "Rocket Mortgage",
            2140.0,
            2140.0,
            "LOAN_PAYMENTS",
            "LOAN_PAYMENTS_MORTGAGE_PAYMENT",
            _monthly(2),
            "online",
        ),
        _Rule(
            _CHASE_CHECKING,
            "PG&E WEB ONLINE",
            "PG&E",
            84.0,
            142.0,
            "RENT_AND_UTILITIES",
            "RENT_AND_UTILITIES_GAS_AND_ELECTRICITY",
            _monthly(12),
            "online",
        ),
        _Rule(
            _CHASE_CHECKING,
            "COMCAST XFINITY",
            "Xfinity",
            79.99,
            79.99,
            "RENT_AND_UTILITIES",
            "RENT_AND_UTILITIES_INTERNET_AND_CABLE",
            _monthly(18),
            "online",
        ),
        _Rule(
            _CHASE_CHECKING,
            "ONLINE TRANSFER TO SAVINGS",
            None,
            500.0,
            500.0,
            "TRANSFER_OUT",
            "TRANSFER_OUT_ACCOUNT_TRANSFER",
            _monthly(15),
            "online",
        ),
        _Rule(
            _SAVINGS,
            "ONLINE TRANSFER FROM CHECKING",
            None,
            -500.0,
            -500.0,
            "TRANSFER_IN",
            "TRANSFER_IN_ACCOUNT_TRANSFER",
            _monthly(15),
            "online",
        ),
        _Rule(
            _CHASE_CHECKING,
            "WHOLE FOODS MARKET",
            "Whole Foods Market",
            38.0,
            96.0,
            _FOOD,
            _GROCERIES,
            _weekly(5),
        ),
        _Rule(_WELLS, "SAFEWAY #1234", "Safeway", 42.0, 118.0, _FOOD, _GROCERIES, _weekly(1)),
        _Rule(
            _WELLS,
            "SHELL OIL 5744",
            "Shell",
            38.0,
            61.0,
            "TRANSPORTATION",
            "TRANSPORTATION_GAS",
            _some_days("fuel", 9),
        ),
        _Rule(
            _WELLS,
            "CITY WATER DEPT",
            "City Water",
            46.0,
            71.0,
            "RENT_AND_UTILITIES",
            "RENT_AND_UTILITIES_WATER",
            _monthly(22),
            "online",
        ),
        _Rule(
            _AMEX, "TRADER JOE'S #552", "Trader Joe's", 24.0, 71.0, _FOOD, _GROCERIES, _weekly(6)
        ),
        _Rule(
            _AMEX,
            "CHIPOTLE 1822",
            "Chipotle",
            11.0,
            19.0,
            _FOOD,
            "FOOD_AND_DRINK_FAST_FOOD",
            _some_days("chipotle", 6),
        ),
        _Rule(
            _AMEX,
            "NOPA RESTAURANT",
            "Nopa",
            64.0,
            138.0,
            _FOOD,
            _RESTAURANT,
            _some_days("nopa", 17),
        ),
        _Rule(
            _SAPPHIRE,
            "BLUE BOTTLE COFFEE",
            "Blue Bottle Coffee",
            4.5,
            9.75,
            _FOOD,
            _COFFEE,
            _some_days("coffee", 3),
        ),
        _Rule(
            _SAPPHIRE,
            "LYFT *RIDE",
            "Lyft",
            12.0,
            34.0,
            "TRANSPORTATION",
            "TRANSPORTATION_TAXIS_AND_RIDE_SHARES",
            _some_days("lyft", 11),
            "online",
        ),
        _Rule(
            _CITI,
            "NETFLIX.COM",
            "Netflix",
            15.49,
            15.49,
            "ENTERTAINMENT",
            "ENTERTAINMENT_TV_AND_MOVIES",
            _monthly(7),
            "online",
        ),
        _Rule(
            _CITI,
            "SPOTIFY USA",
            "Spotify",
            11.99,
            11.99,
            "ENTERTAINMENT",
            "ENTERTAINMENT_MUSIC_AND_AUDIO",
            _monthly(14),
            "online",
        ),
        _Rule(
            _CITI,
            "PLANET FITNESS",
            "Planet Fitness",
            24.99,
            24.99,
            "PERSONAL_CARE",
            "PERSONAL_CARE_GYMS_AND_FITNESS_CENTERS",
            _monthly(3),
            "online",
        ),
        _Rule(
            _CITI,
            "APPLE.COM/BILL",
            "Apple",
            2.99,
            2.99,
            "GENERAL_SERVICES",
            "GENERAL_SERVICES_OTHER_GENERAL_SERVICES",
            _monthly(20),
            "online",
        ),
        _Rule(
            _CITI,
            "CHEVRON 0092",
            "Chevron",
            35.0,
            58.0,
            "TRANSPORTATION",
            "TRANSPORTATION_GAS",
            _some_days("chevron", 13),
        ),
    ),
    "alex": (
        _Rule(
            _ALEX_CHECKING,
            "GLOBEX DIRECT DEP",
            "Globex",
            -2210.0,
            -2210.0,
            "INCOME",
            "INCOME_WAGES",
            _fortnightly(_PAYDAY + timedelta(days=7)),
            "other",
        ),
        _Rule(
            _ALEX_CHECKING,
            "OAKWOOD APARTMENTS RENT",
            "Oakwood Apartments",
            1875.0,
            1875.0,
            "RENT_AND_UTILITIES",
            "RENT_AND_UTILITIES_RENT",
            _monthly(1),
            "online",
        ),
        _Rule(
            _ALEX_CHECKING,
            "DUKE ENERGY",
            "Duke Energy",
            61.0,
            104.0,
            "RENT_AND_UTILITIES",
            "RENT_AND_UTILITIES_GAS_AND_ELECTRICITY",
            _monthly(10),
            "online",
        ),
        _Rule(_ALEX_CHECKING, "KROGER #771", "Kroger", 35.0, 92.0, _FOOD, _GROCERIES, _weekly(6)),
        _Rule(
            _ALEX_CARD,
            "HULU",
            "Hulu",
            17.99,
            17.99,
            "ENTERTAINMENT",
            "ENTERTAINMENT_TV_AND_MOVIES",
            _monthly(9),
            "online",
        ),
        _Rule(
            _ALEX_CARD,
            "STARBUCKS 2231",
            "Starbucks",
            4.25,
            8.5,
            _FOOD,
            _COFFEE,
            _some_days("alex-coffee", 4),
        ),
        _Rule(
            _ALEX_CARD,
            "BP GAS 4410",
            "BP",
            31.0,
            52.0,
            "TRANSPORTATION",
            "TRANSPORTATION_GAS",
            _some_days("alex-gas", 12),
        ),
    ),
}

# Where each card's payments come from, and what the card owes today (its current balance).
_CARDS: dict[str, tuple[tuple[AccountKey, AccountKey, float, str], ...]] = {
    "demo": (
        (_AMEX, _CHASE_CHECKING, 1842.17, "AMERICAN EXPRESS AUTOPAY"),
        (_CITI, _CHASE_CHECKING, 624.50, "CITI CARD ONLINE PAYMENT"),
        (_SAPPHIRE, _CHASE_CHECKING, 2315.40, "CHASE CREDIT CRD AUTOPAY"),
    ),
    "alex": ((_ALEX_CARD, _ALEX_CHECKING, 410.09, "BANK OF AMERICA CARD PAYMENT"),),
}

# The purchase that makes up the rest of what each card owes this month.
_BIG_PURCHASES: dict[AccountKey, tuple[str, str, str, str]] = {
    _AMEX: ("DELTA AIR LINES", "Delta Air Lines", "TRAVEL", "TRAVEL_FLIGHTS"),
    _CITI: ("BEST BUY 00412", "Best Buy", "GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE_ELECTRONICS"),
    _SAPPHIRE: ("MARRIOTT HOTELS", "Marriott", "TRAVEL", "TRAVEL_LODGING"),
    _ALEX_CARD: (
        "TARGET 00019",
        "Target",
        "GENERAL_MERCHANDISE",
        "GENERAL_MERCHANDISE_SUPERSTORES",
    ),
}


def _month_start(on: date, back: int = 0) -> date:
    month = on.year * 12 + on.month - 1 - back
    return date(month // 12, month % 12 + 1, 1)


def _trip(username: str, today: date) -> Iterator[DemoTransaction]:
    """A trip two months ago, and a refund of one of its charges."""
    if username != "demo":
        return
    start = _month_start(today, 2) + timedelta(days=9)
    yield DemoTransaction(
        _SAPPHIRE,
        start,
        "UNITED AIRLINES",
        "United Airlines",
        486.20,
        "TRAVEL",
        "TRAVEL_FLIGHTS",
        "online",
    )
    yield DemoTransaction(
        _SAPPHIRE,
        start + timedelta(days=3),
        "HILTON SEATTLE",
        "Hilton",
        612.40,
        "TRAVEL",
        "TRAVEL_LODGING",
        "in store",
    )
    yield DemoTransaction(
        _SAPPHIRE,
        start + timedelta(days=4),
        "PIKE PLACE CHOWDER",
        "Pike Place Chowder",
        38.75,
        _FOOD,
        _RESTAURANT,
        "in store",
    )
    refund_on = start + timedelta(days=12)
    yield DemoTransaction(
        _SAPPHIRE,
        refund_on,
        "HILTON SEATTLE REFUND",
        "Hilton",
        -104.10,
        "TRAVEL",
        "TRAVEL_LODGING",
        "in store",
    )


def demo_transactions(username: str, today: date) -> list[DemoTransaction]:
    """Return `username`'s rows from DAYS before `today` up to `today`, oldest first."""
    first = today - timedelta(days=DAYS)
    rows: list[DemoTransaction] = []
    for offset in range(DAYS + 1):
        on = first + timedelta(days=offset)
        for rule in _RULES.get(username, ()):
            if rule.when(on):
                amount = _between(rule.low, rule.high, username, rule.name, on.isoformat())
                rows.append(
                    DemoTransaction(
                        rule.account,
                        on,
                        rule.name,
                        rule.merchant,
                        amount,
                        rule.category,
                        rule.detail,
                        rule.channel,
                    )
                )
    rows += [row for row in _trip(username, today) if first <= row.on <= today]
    rows += list(_card_payments(username, today, first, rows))
    for index, row in enumerate(rows):
        # A card's charges of the last two days have not posted yet.
        if row.amount > 0 and row.account in _BIG_PURCHASES and (today - row.on).days < 2:
            rows[index] = replace(row, pending=True)
    return sorted(rows, key=lambda row: (row.on, row.account, row.name))


def _card_payments(
    username: str, today: date, first: date, rows: list[DemoTransaction]
) -> Iterator[DemoTransaction]:
    this_month = _month_start(today)
    for card, payer, owed, memo in _CARDS.get(username, ()):
        charges: dict[date, float] = {}
        for row in rows:
            if row.account == card:
                month = _month_start(row.on)
                charges[month] = charges.get(month, 0.0) + row.amount
        # Each month before this one is paid in full on the first of the next.
        for month, total in sorted(charges.items()):
            if month == this_month:
                continue
            paid_on = _month_start(month, -1)
            if paid_on < first or paid_on > today:
                continue
            amount = round(total, 2)
            yield DemoTransaction(
                card,
                paid_on,
                "PAYMENT THANK YOU",
                None,
                -amount,
                "LOAN_PAYMENTS",
                "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
                "other",
            )
            yield DemoTransaction(
                payer,
                paid_on,
                memo,
                None,
                amount,
                "LOAN_PAYMENTS",
                "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
                "other",
            )
        # What the card owes beyond this month's charges is one larger purchase of this month.
        rest = round(owed - charges.get(this_month, 0.0), 2)
        name, merchant, category, detail = _BIG_PURCHASES[card]
        if rest > 0:
            yield DemoTransaction(
                card, max(this_month, first), name, merchant, rest, category, detail, "in store"
            )
