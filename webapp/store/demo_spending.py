"""Six months of the demo users' transactions, dated back from the day of seeding.

Pure and deterministic: the same user and day give the same rows, ids and amounts on any
machine (amounts vary by a hash of the seed, never by chance). The rows follow Plaid's
shape and sign (a positive amount is money out of the account) and its personal-finance
categories. A card's rows add up to its current balance: each month's charges are paid
from checking on the first of the next month, and this month's charges, the rest of the
card's balance included, are still owed. What happens (the kinds of rows, the cards, a
trip) is data, read once from `demo_spending.toml`; how it is dated and paid is here.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

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
    channel: str


@dataclass(frozen=True, slots=True)
class _Card:
    """A card: who pays it, what it owes today, and the purchase that makes up the rest."""

    card: AccountKey
    payer: AccountKey
    owes: float
    memo: str
    rest: tuple[str, str, str, str]  # name, merchant, category, detail


@dataclass(frozen=True, slots=True)
class _Demo:
    """One user's demo: the kinds of rows, the cards, and a trip (rows by day of the trip)."""

    rules: tuple[_Rule, ...] = ()
    cards: tuple[_Card, ...] = ()
    trip: tuple[tuple[int, DemoTransaction], ...] = ()


def _when(spec: Mapping[str, Any]) -> Callable[[date], bool]:
    """Return the days a rule's `when` names (the forms are listed in demo_spending.toml)."""
    match spec:
        case {"monthly": int(day)}:
            return lambda on: on.day == day
        case {"weekly": int(weekday)}:
            return lambda on: on.weekday() == weekday
        case {"fortnightly": date() as anchor}:
            return lambda on: (on - anchor).days % 14 == 0
        case {"one_day_in": int(one_in), "salt": str(salt)}:
            return lambda on: _hash(salt, on.isoformat()) % one_in == 0
    raise ValueError(f"demo_spending.toml: a rule's `when` is none of the known forms: {spec!r}")


def _amounts(value: float | list[float]) -> tuple[float, float]:
    low, high = value if isinstance(value, list) else (value, value)
    return float(low), float(high)


def _load(text: str) -> dict[str, _Demo]:
    """Read the demo users' rows, cards and trips from the TOML of demo_spending.toml."""
    data = tomllib.loads(text)
    accounts: dict[str, AccountKey] = {
        short: (str(where), str(name)) for short, (where, name) in data["accounts"].items()
    }
    demos: dict[str, _Demo] = {}
    for username, user in data["users"].items():
        rules = tuple(
            _Rule(
                accounts[rule["account"]],
                rule["name"],
                rule.get("merchant"),
                *_amounts(rule["amount"]),
                rule["category"],
                rule["detail"],
                _when(rule["when"]),
                rule["channel"],
            )
            for rule in user.get("rules", ())
        )
        cards = tuple(
            _Card(
                accounts[card["card"]],
                accounts[card["payer"]],
                float(card["owes"]),
                card["memo"],
                (rest["name"], rest["merchant"], rest["category"], rest["detail"]),
            )
            for card in user.get("cards", ())
            for rest in (card["rest"],)
        )
        trip = tuple(
            (
                int(row["day"]),
                DemoTransaction(
                    accounts[row["account"]],
                    date.min,  # dated when the trip is placed (`_trip`)
                    row["name"],
                    row.get("merchant"),
                    float(row["amount"]),
                    row["category"],
                    row["detail"],
                    row["channel"],
                ),
            )
            for row in user.get("trip", ())
        )
        demos[username] = _Demo(rules, cards, trip)
    return demos


_DEMOS = _load(Path(__file__).with_name("demo_spending.toml").read_text(encoding="utf-8"))
# Every demo card: a card's charges of the last two days have not posted yet.
_CARD_ACCOUNTS = frozenset(card.card for demo in _DEMOS.values() for card in demo.cards)


def _month_start(on: date, back: int = 0) -> date:
    month = on.year * 12 + on.month - 1 - back
    return date(month // 12, month % 12 + 1, 1)


def _trip(demo: _Demo, today: date) -> Iterator[DemoTransaction]:
    """A trip that starts on the tenth of the month two months ago (a refund included)."""
    start = _month_start(today, 2) + timedelta(days=9)
    for day, row in demo.trip:
        yield replace(row, on=start + timedelta(days=day))


def demo_transactions(username: str, today: date) -> list[DemoTransaction]:
    """Return `username`'s rows from DAYS before `today` up to `today`, oldest first."""
    demo = _DEMOS.get(username, _Demo())
    first = today - timedelta(days=DAYS)
    rows: list[DemoTransaction] = []
    for offset in range(DAYS + 1):
        on = first + timedelta(days=offset)
        for rule in demo.rules:
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
    rows += [row for row in _trip(demo, today) if first <= row.on <= today]
    rows += list(_card_payments(demo, today, first, rows))
    for index, row in enumerate(rows):
        # A card's charges of the last two days have not posted yet.
        if row.amount > 0 and row.account in _CARD_ACCOUNTS and (today - row.on).days < 2:
            rows[index] = replace(row, pending=True)
    return sorted(rows, key=lambda row: (row.on, row.account, row.name))


def _card_payments(
    demo: _Demo, today: date, first: date, rows: list[DemoTransaction]
) -> Iterator[DemoTransaction]:
    this_month = _month_start(today)
    for card in demo.cards:
        charges: dict[date, float] = {}
        for row in rows:
            if row.account == card.card:
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
                card.card,
                paid_on,
                "PAYMENT THANK YOU",
                None,
                -amount,
                "LOAN_PAYMENTS",
                "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
                "other",
            )
            yield DemoTransaction(
                card.payer,
                paid_on,
                card.memo,
                None,
                amount,
                "LOAN_PAYMENTS",
                "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
                "other",
            )
        # What the card owes beyond this month's charges is one larger purchase of this month.
        rest = round(card.owes - charges.get(this_month, 0.0), 2)
        name, merchant, category, detail = card.rest
        if rest > 0:
            on = max(this_month, first)
            yield DemoTransaction(card.card, on, name, merchant, rest, category, detail, "in store")
