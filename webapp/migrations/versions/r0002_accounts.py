"""Accounts, holdings, the views the model queries, and (PostgreSQL) the security behind them.

Revision ID: 0002
Revises: 0001

SQLite: each view keeps only the rows of `current_user_id()`, a function every connection
defines; the query service's authorizer lets the model's SQL read base tables only
through these views. PostgreSQL: the views belong to `webapp_views`, a role that owns no
table, so the row-level-security policies below apply to every read through them (no
FORCE needed: that is only for a table's owner); the model's SQL runs as `webapp_query`,
which may select the views and nothing else.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

_MONEY = sa.Numeric(18, 2)
_USER_OWNED = (
    "plaid_items",
    "plaid_accounts",
    "snaptrade_accounts",
    "manual_accounts",
    "crypto_wallets",
    "holdings",
)
# What the view owner may read; plaid_items (item ids, access tokens) is not among them.
_VIEW_SOURCES = (
    "plaid_accounts",
    "snaptrade_accounts",
    "manual_accounts",
    "crypto_wallets",
    "holdings",
)
_VIEWS = ("account_details", "holding_details", "public_holding_details")
_PG_USER = "NULLIF(current_setting('webapp.user_id', true), '')::integer"
_SQLITE_USER = "current_user_id()"


def _owner() -> list[sa.Column[int]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "user_id",
            sa.Integer,
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
    ]


def _created_at() -> sa.Column[object]:
    return sa.Column(
        "created_at",
        sa.DateTime(timezone=True),
        nullable=False,
        server_default=sa.func.current_timestamp(),
    )


def _ref(name: str, table: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer, sa.ForeignKey(f"{table}.id", ondelete="CASCADE"))


def _create_tables() -> None:
    op.create_table(
        "plaid_items",
        *_owner(),
        sa.Column("item_id", sa.String(64), nullable=False, unique=True),
        sa.Column("access_token", sa.String(128), nullable=False),
        sa.Column("clerk_id", sa.String(64), nullable=False),
        sa.Column("institution_name", sa.String(128), nullable=False),
        _created_at(),
    )
    op.create_table(
        "plaid_accounts",
        *_owner(),
        sa.Column(
            "item_ref",
            sa.Integer,
            sa.ForeignKey("plaid_items.id", ondelete="CASCADE"),
            nullable=False,
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
    )
    op.create_table(
        "snaptrade_accounts",
        *_owner(),
        sa.Column("snaptrade_account_id", sa.String(64), nullable=False, unique=True),
        sa.Column("brokerage_name", sa.String(128), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("account_type", sa.String(32), nullable=False),
        sa.Column("account_subtype", sa.String(32)),
        sa.Column("total_value", _MONEY),
        sa.Column("cash_balance", _MONEY),
        sa.Column("currency", sa.String(3), nullable=False),
        _created_at(),
    )
    op.create_table(
        "manual_accounts",
        *_owner(),
        sa.Column("manual_account_uuid", sa.String(64), nullable=False, unique=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("institution_name", sa.String(128)),
        sa.Column("account_type", sa.String(32), nullable=False),
        sa.Column("account_subtype", sa.String(32)),
        sa.Column("current_balance", _MONEY),
        sa.Column("currency", sa.String(3), nullable=False),
        _created_at(),
    )
    op.create_table(
        "crypto_wallets",
        *_owner(),
        sa.Column("address", sa.String(128), nullable=False),
        sa.Column("network", sa.String(32), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("current_balance", _MONEY),
        sa.Column("currency", sa.String(3), nullable=False),
        _created_at(),
        sa.UniqueConstraint("user_id", "network", "address", name="uq_crypto_wallets_address"),
    )
    op.create_table(
        "holdings",
        *_owner(),
        _ref("plaid_account_ref", "plaid_accounts"),
        _ref("snaptrade_account_ref", "snaptrade_accounts"),
        _ref("manual_account_ref", "manual_accounts"),
        _ref("crypto_wallet_ref", "crypto_wallets"),
        sa.Column("ticker", sa.String(32), nullable=False),
        sa.Column("security_name", sa.String(128)),
        sa.Column("security_type", sa.String(32), nullable=False),
        sa.Column("quantity", sa.Numeric(28, 8), nullable=False),
        sa.Column("market_value", _MONEY),
        sa.Column("currency", sa.String(3), nullable=False),
        _created_at(),
        sa.CheckConstraint(
            "(CASE WHEN plaid_account_ref IS NULL THEN 0 ELSE 1 END"
            " + CASE WHEN snaptrade_account_ref IS NULL THEN 0 ELSE 1 END"
            " + CASE WHEN manual_account_ref IS NULL THEN 0 ELSE 1 END"
            " + CASE WHEN crypto_wallet_ref IS NULL THEN 0 ELSE 1 END) = 1",
            name="ck_holdings_one_account",
        ),
    )


def _view_sql(me: str) -> list[str]:
    """Return the CREATE VIEW statements, each row kept only when its user is `me`."""
    account_details = f"""
CREATE VIEW account_details AS
SELECT 'plaid' AS source, a.account_id AS source_account_id, a.name AS account_name,
       a.institution_name AS institution_name, a.type AS account_type,
       a.subtype AS account_subtype, a.current_balance AS current_balance,
       a.currency AS currency, a.official_name AS official_name,
       a.available_balance AS available_balance, a.credit_limit AS credit_limit
  FROM plaid_accounts a WHERE a.user_id = {me}
UNION ALL
SELECT 'snaptrade', s.snaptrade_account_id, s.name, s.brokerage_name, s.account_type,
       s.account_subtype, s.total_value, s.currency, NULL, s.cash_balance, NULL
  FROM snaptrade_accounts s WHERE s.user_id = {me}
UNION ALL
SELECT 'manual', m.manual_account_uuid, m.name, m.institution_name, m.account_type,
       m.account_subtype, m.current_balance, m.currency, NULL, NULL, NULL
  FROM manual_accounts m WHERE m.user_id = {me}
UNION ALL
SELECT 'crypto', NULL, w.name, w.network, 'crypto', 'wallet', w.current_balance, w.currency,
       NULL, NULL, NULL
  FROM crypto_wallets w WHERE w.user_id = {me}"""
    columns = (
        "h.ticker AS ticker, h.quantity AS quantity, h.market_value AS market_value, "
        "h.currency AS currency, h.security_name AS security_name, "
        "h.security_type AS security_type"
    )
    holding_details = f"""
CREATE VIEW holding_details AS
SELECT 'plaid' AS source, a.account_id AS source_account_id, a.name AS account_name, {columns},
       a.institution_name AS institution_name
  FROM holdings h JOIN plaid_accounts a ON a.id = h.plaid_account_ref
 WHERE h.user_id = {me} AND a.user_id = {me}
UNION ALL
SELECT 'snaptrade', s.snaptrade_account_id, s.name, {columns}, s.brokerage_name
  FROM holdings h JOIN snaptrade_accounts s ON s.id = h.snaptrade_account_ref
 WHERE h.user_id = {me} AND s.user_id = {me}
UNION ALL
SELECT 'manual', m.manual_account_uuid, m.name, {columns}, m.institution_name
  FROM holdings h JOIN manual_accounts m ON m.id = h.manual_account_ref
 WHERE h.user_id = {me} AND m.user_id = {me}
UNION ALL
SELECT 'crypto', NULL, w.name, {columns}, w.network
  FROM holdings h JOIN crypto_wallets w ON w.id = h.crypto_wallet_ref
 WHERE h.user_id = {me} AND w.user_id = {me}"""
    # Publicly traded securities only: no cash positions, no crypto.
    public_holding_details = """
CREATE VIEW public_holding_details AS
SELECT source, source_account_id, account_name, ticker, quantity, market_value, currency,
       security_name, security_type, institution_name
  FROM holding_details WHERE security_type IN ('equity', 'etf', 'mutual_fund')"""
    return [account_details, holding_details, public_holding_details]


# Roles are cluster-wide: create them once, tolerate another database having made them. A
# login without CREATEROLE works when an administrator made them (and granted them) first.
_PG_ROLES = """
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'webapp_views') THEN
    BEGIN CREATE ROLE webapp_views NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'webapp_query') THEN
    BEGIN CREATE ROLE webapp_query NOLOGIN;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname IN ('webapp_views', 'webapp_query')
             AND (rolsuper OR rolbypassrls OR rolcanlogin OR rolcreaterole OR rolcreatedb)) THEN
    ALTER ROLE webapp_views NOSUPERUSER NOBYPASSRLS NOLOGIN NOCREATEROLE NOCREATEDB;
    ALTER ROLE webapp_query NOSUPERUSER NOBYPASSRLS NOLOGIN NOCREATEROLE NOCREATEDB;
  END IF;
  -- The app's own login switches to the query role and hands the views to their owner.
  IF NOT pg_has_role(current_user, 'webapp_query', 'MEMBER') THEN
    GRANT webapp_query TO CURRENT_USER;
  END IF;
  IF NOT pg_has_role(current_user, 'webapp_views', 'MEMBER') THEN
    GRANT webapp_views TO CURRENT_USER;
  END IF;
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO webapp_views, webapp_query', current_schema());
END $$"""

# A new owner needs CREATE on the schema unless a superuser makes the change.
_PG_SCHEMA_CREATE = """
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('{verb} CREATE ON SCHEMA %I {prep} webapp_views', current_schema());
  END IF;
END $$"""


def _secure_postgres() -> None:
    op.execute(_PG_ROLES)
    op.execute(_PG_SCHEMA_CREATE.format(verb="GRANT", prep="TO"))
    for view in _VIEWS:
        op.execute(f"ALTER VIEW {view} OWNER TO webapp_views")
    op.execute(_PG_SCHEMA_CREATE.format(verb="REVOKE", prep="FROM"))
    for table in ("users", "api_tokens", *_USER_OWNED):
        op.execute(f"REVOKE ALL ON {table} FROM PUBLIC")
        # With no policy for a role, that role sees no row (owners and superusers aside).
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    for table in _VIEW_SOURCES:
        op.execute(f"GRANT SELECT ON {table} TO webapp_views")
        op.execute(
            f"CREATE POLICY {table}_of_current_user ON {table} FOR SELECT TO webapp_views"
            f" USING (user_id = {_PG_USER})"
        )
    op.execute(f"GRANT SELECT ON {', '.join(_VIEWS)} TO webapp_query")


def upgrade() -> None:
    """Create the financial tables and the views; on PostgreSQL, the roles and policies."""
    _create_tables()
    postgres = op.get_bind().dialect.name == "postgresql"
    for statement in _view_sql(_PG_USER if postgres else _SQLITE_USER):
        op.execute(statement)
    if postgres:
        _secure_postgres()


def downgrade() -> None:
    """Drop the views and the financial tables (the cluster-wide roles stay)."""
    for view in reversed(_VIEWS):
        op.execute(f"DROP VIEW {view}")
    for table in reversed(_USER_OWNED):
        op.drop_table(table)
    if op.get_bind().dialect.name == "postgresql":
        for table in ("users", "api_tokens"):
            op.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
