"""When each account's data last synced: `synced_at` on the synced tables and in the views.

Revision ID: 0007
Revises: 0006

A source shows how fresh its figures are, and that is the bank's last sync, not the
moment a question read them. The tables a sync fills (Plaid and SnapTrade accounts, crypto
wallets, holdings) get a UTC `synced_at`, NULL until a sync writes it; a manual account is
typed in, never synced, so the views give it NULL. The views are recreated with the column
last; on PostgreSQL they go back to `webapp_views` with the query role's grant, as 0002
left them, so row-level security applies to every read through them as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None

_SYNCED_TABLES = ("plaid_accounts", "snaptrade_accounts", "crypto_wallets", "holdings")
_VIEWS = ("account_details", "holding_details", "public_holding_details")
_PG_USER = "NULLIF(current_setting('webapp.user_id', true), '')::integer"
_SQLITE_USER = "current_user_id()"

# A new owner needs CREATE on the schema unless a superuser makes the change (as in 0002).
_PG_SCHEMA_CREATE = """
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('{verb} CREATE ON SCHEMA %I {prep} webapp_views', current_schema());
  END IF;
END $$"""


def _view_sql(me: str, synced: bool) -> list[str]:
    """Return the CREATE VIEW statements of 0002, with `synced_at` last when `synced`."""

    def also(column: str) -> str:
        return f", {column}" if synced else ""

    plaid = also("a.synced_at AS synced_at")
    account_details = f"""
CREATE VIEW account_details AS
SELECT 'plaid' AS source, a.account_id AS source_account_id, a.name AS account_name,
       a.institution_name AS institution_name, a.type AS account_type,
       a.subtype AS account_subtype, a.current_balance AS current_balance,
       a.currency AS currency, a.official_name AS official_name,
       a.available_balance AS available_balance, a.credit_limit AS credit_limit{plaid}
  FROM plaid_accounts a WHERE a.user_id = {me}
UNION ALL
SELECT 'snaptrade', s.snaptrade_account_id, s.name, s.brokerage_name, s.account_type,
       s.account_subtype, s.total_value, s.currency, NULL, s.cash_balance, NULL{also("s.synced_at")}
  FROM snaptrade_accounts s WHERE s.user_id = {me}
UNION ALL
SELECT 'manual', m.manual_account_uuid, m.name, m.institution_name, m.account_type,
       m.account_subtype, m.current_balance, m.currency, NULL, NULL, NULL{also("NULL")}
  FROM manual_accounts m WHERE m.user_id = {me}
UNION ALL
SELECT 'crypto', NULL, w.name, w.network, 'crypto', 'wallet', w.current_balance, w.currency,
       NULL, NULL, NULL{also("w.synced_at")}
  FROM crypto_wallets w WHERE w.user_id = {me}"""
    columns = (
        "h.ticker AS ticker, h.quantity AS quantity, h.market_value AS market_value, "
        "h.currency AS currency, h.security_name AS security_name, "
        "h.security_type AS security_type"
    )
    # A holding is as fresh as its own row: the sync that wrote its quantity and value.
    last = also("h.synced_at AS synced_at")
    holding_details = f"""
CREATE VIEW holding_details AS
SELECT 'plaid' AS source, a.account_id AS source_account_id, a.name AS account_name, {columns},
       a.institution_name AS institution_name{last}
  FROM holdings h JOIN plaid_accounts a ON a.id = h.plaid_account_ref
 WHERE h.user_id = {me} AND a.user_id = {me}
UNION ALL
SELECT 'snaptrade', s.snaptrade_account_id, s.name, {columns}, s.brokerage_name{last}
  FROM holdings h JOIN snaptrade_accounts s ON s.id = h.snaptrade_account_ref
 WHERE h.user_id = {me} AND s.user_id = {me}
UNION ALL
SELECT 'manual', m.manual_account_uuid, m.name, {columns}, m.institution_name{last}
  FROM holdings h JOIN manual_accounts m ON m.id = h.manual_account_ref
 WHERE h.user_id = {me} AND m.user_id = {me}
UNION ALL
SELECT 'crypto', NULL, w.name, {columns}, w.network{last}
  FROM holdings h JOIN crypto_wallets w ON w.id = h.crypto_wallet_ref
 WHERE h.user_id = {me} AND w.user_id = {me}"""
    # Publicly traded securities only: no cash positions, no crypto.
    public_holding_details = f"""
CREATE VIEW public_holding_details AS
SELECT source, source_account_id, account_name, ticker, quantity, market_value, currency,
       security_name, security_type, institution_name{also("synced_at")}
  FROM holding_details WHERE security_type IN ('equity', 'etf', 'mutual_fund')"""
    return [account_details, holding_details, public_holding_details]


def _replace_views(synced: bool) -> None:
    """Drop the views and create them again, with or without `synced_at`."""
    postgres = op.get_bind().dialect.name == "postgresql"
    for view in reversed(_VIEWS):
        op.execute(f"DROP VIEW {view}")
    if synced:
        for table in _SYNCED_TABLES:
            op.add_column(table, sa.Column("synced_at", sa.DateTime(timezone=True)))
    else:
        # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35+): a batch copy would drop and
        # re-create each table, and dropping a table cascades to the rows that reference it.
        for table in _SYNCED_TABLES:
            op.drop_column(table, "synced_at")
    for statement in _view_sql(_PG_USER if postgres else _SQLITE_USER, synced):
        op.execute(statement)
    if postgres:
        # As 0002: the owner that row-level security binds, and only the query role may read.
        op.execute(_PG_SCHEMA_CREATE.format(verb="GRANT", prep="TO"))
        for view in _VIEWS:
            op.execute(f"ALTER VIEW {view} OWNER TO webapp_views")
        op.execute(_PG_SCHEMA_CREATE.format(verb="REVOKE", prep="FROM"))
        op.execute(f"GRANT SELECT ON {', '.join(_VIEWS)} TO webapp_query")


def upgrade() -> None:
    """Add `synced_at` to the synced tables and show it in the views."""
    _replace_views(synced=True)


def downgrade() -> None:
    """Drop `synced_at` and restore the views of 0002."""
    _replace_views(synced=False)
