"""The tables, as SQLAlchemy Core objects, and the names the query service relies on.

The migrations in `webapp/migrations/versions/` create these tables; this module only
describes them for queries. Keep the two in step (tests/test_store_schema.py checks it).
"""

from __future__ import annotations

import sqlalchemy as sa

# The views the model may query (docs/specs.md#tools-and-data); nothing else is readable.
QUERY_VIEWS: tuple[str, ...] = (
    "account_details",
    "holding_details",
    "public_holding_details",
    "transaction_details",
)

# PostgreSQL: the role that owns the views (row-level security applies to it) and the
# read-only role the model's SQL runs under (it may select the views and nothing else).
VIEW_OWNER_ROLE = "webapp_views"
QUERY_ROLE = "webapp_query"
# The per-transaction setting (PostgreSQL) that names the user the views show.
USER_SETTING = "webapp.user_id"
# The per-connection SQL function (SQLite) that names the user the views show.
USER_FUNCTION = "current_user_id"

metadata = sa.MetaData()

_MONEY = sa.Numeric(18, 2, asdecimal=False)
_QUANTITY = sa.Numeric(28, 8, asdecimal=False)


def _created_at() -> sa.Column[object]:
    return sa.Column(
        "created_at",
        sa.DateTime(timezone=True),
        nullable=False,
        server_default=sa.func.current_timestamp(),
    )


def _synced_at() -> sa.Column[object]:
    # When a sync last wrote the row (UTC); NULL until one does. Sources show it as the
    # figures' age, rather than the moment a question read them.
    return sa.Column("synced_at", sa.DateTime(timezone=True))


def _owner() -> sa.Column[int]:
    return sa.Column(
        "user_id",
        sa.Integer,
        sa.ForeignKey("users.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )


def _ref(name: str, table: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer, sa.ForeignKey(f"{table}.id", ondelete="CASCADE"))


users = sa.Table(
    "users",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("username", sa.String(64), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(255), nullable=False),
    # A secret external id: it never leaves the server, and no view shows it.
    sa.Column("clerk_id", sa.String(64), nullable=False, unique=True),
    _created_at(),
)

api_tokens = sa.Table(
    "api_tokens",
    metadata,
    sa.Column("token_hash", sa.String(64), primary_key=True),
    _owner(),
    _created_at(),
)

plaid_items = sa.Table(
    "plaid_items",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    sa.Column("item_id", sa.String(64), nullable=False, unique=True),
    sa.Column("access_token", sa.String(128), nullable=False),
    sa.Column("clerk_id", sa.String(64), nullable=False),
    sa.Column("institution_name", sa.String(128), nullable=False),
    _created_at(),
)

plaid_accounts = sa.Table(
    "plaid_accounts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    sa.Column(
        "item_ref", sa.Integer, sa.ForeignKey("plaid_items.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("account_id", sa.String(64), nullable=False, unique=True),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("official_name", sa.String(128)),
    sa.Column("institution_name", sa.String(128), nullable=False),
    sa.Column("type", sa.String(32), nullable=False),
    sa.Column("subtype", sa.String(32)),
    sa.Column("current_balance", _MONEY),
    sa.Column("available_balance", _MONEY),
    sa.Column("credit_limit", _MONEY),
    sa.Column("currency", sa.String(3), nullable=False),
    _created_at(),
    _synced_at(),
)

snaptrade_accounts = sa.Table(
    "snaptrade_accounts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    sa.Column("snaptrade_account_id", sa.String(64), nullable=False, unique=True),
    sa.Column("brokerage_name", sa.String(128), nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("account_type", sa.String(32), nullable=False),
    sa.Column("account_subtype", sa.String(32)),
    sa.Column("total_value", _MONEY),
    sa.Column("cash_balance", _MONEY),
    sa.Column("currency", sa.String(3), nullable=False),
    _created_at(),
    _synced_at(),
)

manual_accounts = sa.Table(
    "manual_accounts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    sa.Column("manual_account_uuid", sa.String(64), nullable=False, unique=True),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("institution_name", sa.String(128)),
    sa.Column("account_type", sa.String(32), nullable=False),
    sa.Column("account_subtype", sa.String(32)),
    sa.Column("current_balance", _MONEY),
    sa.Column("currency", sa.String(3), nullable=False),
    _created_at(),
)

crypto_wallets = sa.Table(
    "crypto_wallets",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    sa.Column("address", sa.String(128), nullable=False),
    sa.Column("network", sa.String(32), nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("current_balance", _MONEY),
    sa.Column("currency", sa.String(3), nullable=False),
    _created_at(),
    _synced_at(),
    sa.UniqueConstraint("user_id", "network", "address", name="uq_crypto_wallets_address"),
)

holdings = sa.Table(
    "holdings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    # Exactly one of the four names the account (or wallet) that holds the position.
    _ref("plaid_account_ref", "plaid_accounts"),
    _ref("snaptrade_account_ref", "snaptrade_accounts"),
    _ref("manual_account_ref", "manual_accounts"),
    _ref("crypto_wallet_ref", "crypto_wallets"),
    sa.Column("ticker", sa.String(32), nullable=False),
    sa.Column("security_name", sa.String(128)),
    sa.Column("security_type", sa.String(32), nullable=False),
    sa.Column("quantity", _QUANTITY, nullable=False),
    sa.Column("market_value", _MONEY),
    sa.Column("currency", sa.String(3), nullable=False),
    _created_at(),
    _synced_at(),
    sa.CheckConstraint(
        "(CASE WHEN plaid_account_ref IS NULL THEN 0 ELSE 1 END"
        " + CASE WHEN snaptrade_account_ref IS NULL THEN 0 ELSE 1 END"
        " + CASE WHEN manual_account_ref IS NULL THEN 0 ELSE 1 END"
        " + CASE WHEN crypto_wallet_ref IS NULL THEN 0 ELSE 1 END) = 1",
        name="ck_holdings_one_account",
    ),
)

# An uploaded statement (CSV, OFX/QFX): a user file whose parsed rows are transactions.
statement_files = sa.Table(
    "statement_files",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    # The public id: in URLs (`/files/<file_id>`) and in citations (`silvia://your-file/...`).
    sa.Column("file_id", sa.String(32), nullable=False, unique=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("format", sa.String(8), nullable=False),
    sa.Column("row_count", sa.Integer, nullable=False),
    # The account number the statement names, as `****1234`: never the whole number.
    sa.Column("account_mask", sa.String(8)),
    # The account chosen at upload, or NULL: then the rows are the file's own.
    _ref("plaid_account_ref", "plaid_accounts"),
    _created_at(),
)

# Plaid's shape and sign: a positive `amount` is money out of the account, a negative one in.
transactions = sa.Table(
    "transactions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    _owner(),
    sa.Column("transaction_id", sa.String(64), nullable=False, unique=True),
    _ref("plaid_account_ref", "plaid_accounts"),
    _ref("file_ref", "statement_files"),
    # ISO dates (YYYY-MM-DD) as text: the same comparisons work on both databases.
    sa.Column("date", sa.String(10), nullable=False),
    sa.Column("authorized_date", sa.String(10)),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("merchant_name", sa.String(255)),
    sa.Column("amount", _MONEY, nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("category", sa.String(64)),
    sa.Column("category_detail", sa.String(96)),
    sa.Column("pending", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("payment_channel", sa.String(16)),
    _created_at(),
    sa.CheckConstraint(
        "plaid_account_ref IS NOT NULL OR file_ref IS NOT NULL",
        name="ck_transactions_account_or_file",
    ),
)

# The tables whose rows belong to one user and reach the model only through the views.
FINANCIAL_TABLES: tuple[sa.Table, ...] = (
    plaid_items,
    plaid_accounts,
    snaptrade_accounts,
    manual_accounts,
    crypto_wallets,
    holdings,
    statement_files,
    transactions,
)
