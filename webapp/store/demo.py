"""The demo users and their accounts (docs/specs.md#the-embedded-default), seeded idempotently.

Every id is derived from a fixed seed, so tests and docs can rely on it: the same
`seed-demo` on any machine gives the same account ids, and running it again changes nothing
but the sync times and the days the transactions fall on (six months back from the day of
seeding: webapp/store/demo_spending.py, from the kinds of rows in demo_spending.toml). Sync
times are set back from the moment of seeding, by a different age per institution, as a
bank sync would have left them; the manual account was never synced.
"""

from __future__ import annotations

import hashlib
import string
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from werkzeug.security import check_password_hash, generate_password_hash

from .demo_spending import demo_transactions
from .schema import (
    crypto_wallets,
    holdings,
    manual_accounts,
    plaid_accounts,
    plaid_items,
    snaptrade_accounts,
    transactions,
    users,
)
from .users import User

DEMO_USERNAMES = ("demo", "alex")
_SEED = "webapp-demo-seed-1"
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def _digest(*parts: str) -> int:
    data = "\x1f".join((_SEED, *parts)).encode()
    return int.from_bytes(hashlib.sha256(data).digest(), "big")


def seeded_token(length: int, *parts: str) -> str:
    """Return `length` (at most 43) base-62 characters derived from the seed and `parts`."""
    number, chars = _digest(*parts), []
    for _ in range(length):
        number, index = divmod(number, 62)
        chars.append(_BASE62[index])
    return "".join(chars)


def seeded_uuid(*parts: str) -> str:
    """Return a version-4-shaped UUID derived from the seed and `parts`."""
    return str(uuid.UUID(int=_digest(*parts) >> 128, version=4))


@dataclass(frozen=True, slots=True)
class _Card:
    name: str
    official_name: str
    type: str
    subtype: str
    current: float
    available: float | None = None
    limit: float | None = None


@dataclass(frozen=True, slots=True)
class _Position:
    ticker: str
    security_name: str
    security_type: str
    quantity: float
    market_value: float


# Balances follow Plaid: a credit account's current balance is the amount owed.
_PLAID: dict[str, dict[str, tuple[_Card, ...]]] = {
    "demo": {
        "American Express": (
            _Card(
                "Credit card",
                "American Express Gold Card",
                "credit",
                "credit card",
                1842.17,
                13157.83,
                15000.00,
            ),
        ),
        "Citi": (
            _Card(
                "Credit card",
                "Citi Double Cash Card",
                "credit",
                "credit card",
                624.50,
                7375.50,
                8000.00,
            ),
        ),
        "Chase": (
            _Card(
                "Sapphire Preferred",
                "Chase Sapphire Preferred Card",
                "credit",
                "credit card",
                2315.40,
                17684.60,
                20000.00,
            ),
            _Card("Checking", "Chase Total Checking", "depository", "checking", 4820.33, 4820.33),
            _Card("Savings", "Chase Savings", "depository", "savings", 18250.00, 18250.00),
        ),
        "Wells Fargo": (
            _Card("Checking", "Everyday Checking", "depository", "checking", 2104.76, 2054.76),
        ),
    },
    "alex": {
        "Bank of America": (
            _Card("Checking", "Adv Plus Banking", "depository", "checking", 3120.44, 3120.44),
            _Card(
                "Credit card",
                "Customized Cash Rewards Visa",
                "credit",
                "credit card",
                410.09,
                4589.91,
                5000.00,
            ),
        ),
    },
}
_BROKERAGE = ("Robinhood", "Individual", 312.55)
_BROKERAGE_POSITIONS = (
    _Position("AAPL", "Apple Inc.", "equity", 25, 5712.50),
    _Position("VTI", "Vanguard Total Stock Market ETF", "etf", 40, 11584.00),
)
_HOME = ("Home", "property", "home", 485000.00)
# How long before seeding each institution (or wallet network) last synced.
_SYNC_AGES: dict[str, timedelta] = {
    "American Express": timedelta(days=1, hours=3),
    "Citi": timedelta(minutes=40),
    "Chase": timedelta(hours=2),
    "Wells Fargo": timedelta(hours=6),
    "Bank of America": timedelta(hours=3),
    "Robinhood": timedelta(minutes=25),
    "Ethereum": timedelta(minutes=10),
}
_WALLET = ("Crypto wallet", "Ethereum", _Position("ETH", "Ether", "crypto", 1.5, 5250.00))


def _upsert(
    connection: Connection, table: sa.Table, key: Mapping[str, object], values: Mapping[str, object]
) -> int:
    """Insert the row with `key`, or update it in place so its id stays the same."""
    where = sa.and_(*(table.c[name] == value for name, value in key.items()))
    row_id = connection.execute(sa.select(table.c.id).where(where)).scalar_one_or_none()
    if row_id is None:
        insert = table.insert().values(**key, **values).returning(table.c.id)
        return int(connection.execute(insert).scalar_one())
    connection.execute(table.update().where(table.c.id == row_id).values(**values))
    return int(row_id)


def _seed_user(connection: Connection, username: str, password: str) -> User:
    row = connection.execute(
        sa.select(users.c.id, users.c.password_hash).where(users.c.username == username)
    ).first()
    clerk_id = "user_" + seeded_token(27, "clerk", username)
    if row is None:
        insert = users.insert().values(
            username=username, password_hash=generate_password_hash(password), clerk_id=clerk_id
        )
        return User(int(connection.execute(insert.returning(users.c.id)).scalar_one()), username)
    # Salted hashes differ each time: rehash only when the password really changed.
    if not check_password_hash(row.password_hash, password):
        connection.execute(
            users.update()
            .where(users.c.id == row.id)
            .values(password_hash=generate_password_hash(password))
        )
    return User(int(row.id), username)


def _holding(
    connection: Connection,
    user_id: int,
    ref: str,
    ref_id: int,
    position: _Position,
    synced_at: datetime,
) -> None:
    _upsert(
        connection,
        holdings,
        {"user_id": user_id, ref: ref_id, "ticker": position.ticker},
        {
            "security_name": position.security_name,
            "security_type": position.security_type,
            "quantity": position.quantity,
            "market_value": position.market_value,
            "currency": "USD",
            "synced_at": synced_at,
        },
    )


def _seed_plaid(connection: Connection, user: User, now: datetime) -> None:
    for institution, accounts in _PLAID[user.username].items():
        item = _upsert(
            connection,
            plaid_items,
            {"item_id": seeded_token(37, "plaid-item", user.username, institution)},
            {
                "user_id": user.id,
                "access_token": "access-sandbox-"
                + seeded_uuid("token", user.username, institution),
                "clerk_id": "user_" + seeded_token(27, "clerk", user.username),
                "institution_name": institution,
            },
        )
        for card in accounts:
            _upsert(
                connection,
                plaid_accounts,
                {"account_id": seeded_token(37, "plaid", user.username, institution, card.name)},
                {
                    "user_id": user.id,
                    "item_ref": item,
                    "name": card.name,
                    "official_name": card.official_name,
                    "institution_name": institution,
                    "type": card.type,
                    "subtype": card.subtype,
                    "current_balance": card.current,
                    "available_balance": card.available,
                    "credit_limit": card.limit,
                    "currency": "USD",
                    "synced_at": now - _SYNC_AGES[institution],
                },
            )


def _seed_transactions(connection: Connection, user: User, now: datetime) -> None:
    """Replace the user's synced transactions with six months dated back from `now`."""
    refs = {
        (row.institution_name, row.name): int(row.id)
        for row in connection.execute(
            sa.select(
                plaid_accounts.c.id, plaid_accounts.c.institution_name, plaid_accounts.c.name
            ).where(plaid_accounts.c.user_id == user.id)
        )
    }
    rows: dict[str, dict[str, object]] = {}
    for index, row in enumerate(demo_transactions(user.username, now.date())):
        # The id says the day and the row, so an id seeded again is the same row: a second
        # seeding on the same day changes nothing, a later one replaces what moved.
        txn_id = seeded_token(37, "txn", user.username, row.on.isoformat(), str(index), row.name)
        rows[txn_id] = {
            "user_id": user.id,
            "transaction_id": txn_id,
            "plaid_account_ref": refs[row.account],
            "date": row.on.isoformat(),
            "authorized_date": row.on.isoformat(),
            "name": row.name,
            "merchant_name": row.merchant,
            "amount": row.amount,
            "currency": "USD",
            "category": row.category,
            "category_detail": row.detail,
            "pending": row.pending,
            "payment_channel": row.channel,
        }
    # Only the synced rows: an uploaded statement's rows (file_ref set) stay as they are.
    synced = sa.and_(transactions.c.user_id == user.id, transactions.c.file_ref.is_(None))
    kept = set(connection.execute(sa.select(transactions.c.transaction_id).where(synced)).scalars())
    stale = kept - rows.keys()
    if stale:
        connection.execute(
            transactions.delete().where(synced, transactions.c.transaction_id.in_(stale))
        )
    new = [values for txn_id, values in rows.items() if txn_id not in kept]
    if new:
        connection.execute(transactions.insert(), new)


def _seed_demo_extras(connection: Connection, user: User, now: datetime) -> None:
    brokerage, name, cash = _BROKERAGE
    synced = now - _SYNC_AGES[brokerage]
    account = _upsert(
        connection,
        snaptrade_accounts,
        {"snaptrade_account_id": seeded_uuid("snaptrade", user.username, brokerage, name)},
        {
            "user_id": user.id,
            "brokerage_name": brokerage,
            "name": name,
            "account_type": "investment",
            "account_subtype": "brokerage",
            "total_value": round(cash + sum(p.market_value for p in _BROKERAGE_POSITIONS), 2),
            "cash_balance": cash,
            "currency": "USD",
            "synced_at": synced,
        },
    )
    for position in _BROKERAGE_POSITIONS:
        _holding(connection, user.id, "snaptrade_account_ref", account, position, synced)
    home, kind, subtype, value = _HOME
    _upsert(
        connection,
        manual_accounts,
        {"manual_account_uuid": seeded_uuid("manual", user.username, home)},
        {
            "user_id": user.id,
            "name": home,
            "institution_name": None,
            "account_type": kind,
            "account_subtype": subtype,
            "current_balance": value,
            "currency": "USD",
        },
    )
    wallet_name, network, coin = _WALLET
    synced = now - _SYNC_AGES[network]
    address = "0x" + format(_digest("wallet", user.username) >> 96, "040x")
    wallet = _upsert(
        connection,
        crypto_wallets,
        {"user_id": user.id, "network": network, "address": address},
        {
            "name": wallet_name,
            "current_balance": coin.market_value,
            "currency": "USD",
            "synced_at": synced,
        },
    )
    _holding(connection, user.id, "crypto_wallet_ref", wallet, coin, synced)


def seed_demo(
    engine: Engine, password: str = "demo", *, now: datetime | None = None
) -> dict[str, User]:
    """Create or refresh the demo users `demo` and `alex` and their accounts; return them.

    Sync times and six months of transactions are counted back from `now` (the moment of
    seeding unless given).
    """
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    seeded: dict[str, User] = {}
    with engine.begin() as connection:
        for username in DEMO_USERNAMES:
            user = _seed_user(connection, username, password)
            _seed_plaid(connection, user, moment)
            _seed_transactions(connection, user, moment)
            if username == "demo":
                _seed_demo_extras(connection, user, moment)
            seeded[username] = user
    return seeded
