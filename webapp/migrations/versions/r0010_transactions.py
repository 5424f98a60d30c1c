"""Transactions on synced accounts and uploaded statements, and the view the model reads.

Revision ID: 0010
Revises: 0009

`transactions` holds Plaid-shaped rows (a positive amount is money out); each belongs to a
Plaid account, to an uploaded statement (`statement_files`), or to both (a statement
attached to an account at upload). `transaction_details` shows them with the columns
docs/specs.md ("Tools and data") fixes: an account's rows name the account (`source`
`plaid` and its id); a file's own rows name none (`source` `file`, `source_account_id`
NULL) and carry their `file_id`. As 0002 and 0007: on PostgreSQL the view belongs to
`webapp_views`, row-level security on both tables binds it to the current user, and only
the query role may select it; on SQLite it filters on `current_user_id()` and the
authorizer reads base tables only through it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

_TABLES = ("statement_files", "transactions")
_VIEW = "transaction_details"
_PG_USER = "NULLIF(current_setting('webapp.user_id', true), '')::integer"
_SQLITE_USER = "current_user_id()"
_MONEY = sa.Numeric(18, 2)

_PG_SCHEMA_CREATE = """
DO $$
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('{verb} CREATE ON SCHEMA %I {prep} webapp_views', current_schema());
  END IF;
END $$"""


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


def _view_sql(me: str) -> str:
    columns = (
        "t.transaction_id AS transaction_id, t.date AS date, t.name AS description, "
        "t.merchant_name AS merchant_name, t.category AS category, "
        "t.category_detail AS subcategory, t.amount AS amount, t.currency AS currency, "
        "t.pending AS pending"
    )
    extra = "t.authorized_date AS authorized_date, t.payment_channel AS payment_channel"
    return f"""
CREATE VIEW transaction_details AS
SELECT 'plaid' AS source, a.account_id AS source_account_id, a.name AS account_name,
       a.institution_name AS institution_name, {columns}, f.file_id AS file_id,
       f.name AS file_name, {extra}
  FROM transactions t JOIN plaid_accounts a ON a.id = t.plaid_account_ref
  LEFT JOIN statement_files f ON f.id = t.file_ref AND f.user_id = {me}
 WHERE t.user_id = {me} AND a.user_id = {me}
UNION ALL
SELECT 'file', NULL, f.name, NULL, {columns}, f.file_id, f.name, {extra}
  FROM transactions t JOIN statement_files f ON f.id = t.file_ref
 WHERE t.plaid_account_ref IS NULL AND t.user_id = {me} AND f.user_id = {me}"""


def upgrade() -> None:
    """Create `statement_files`, `transactions` and `transaction_details`."""
    op.create_table(
        "statement_files",
        *_owner(),
        sa.Column("file_id", sa.String(32), nullable=False, unique=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("format", sa.String(8), nullable=False),
        sa.Column("row_count", sa.Integer, nullable=False),
        sa.Column("account_mask", sa.String(8)),
        _ref("plaid_account_ref", "plaid_accounts"),
        _created_at(),
    )
    op.create_table(
        "transactions",
        *_owner(),
        sa.Column("transaction_id", sa.String(64), nullable=False, unique=True),
        _ref("plaid_account_ref", "plaid_accounts"),
        _ref("file_ref", "statement_files"),
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
    op.create_index("ix_transactions_account_date", "transactions", ["plaid_account_ref", "date"])
    op.create_index("ix_transactions_file", "transactions", ["file_ref"])
    postgres = op.get_bind().dialect.name == "postgresql"
    op.execute(_view_sql(_PG_USER if postgres else _SQLITE_USER))
    if postgres:
        for table in _TABLES:
            op.execute(f"REVOKE ALL ON {table} FROM PUBLIC")
            op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
            op.execute(f"GRANT SELECT ON {table} TO webapp_views")
            op.execute(
                f"CREATE POLICY {table}_of_current_user ON {table} FOR SELECT TO webapp_views"
                f" USING (user_id = {_PG_USER})"
            )
        op.execute(_PG_SCHEMA_CREATE.format(verb="GRANT", prep="TO"))
        op.execute(f"ALTER VIEW {_VIEW} OWNER TO webapp_views")
        op.execute(_PG_SCHEMA_CREATE.format(verb="REVOKE", prep="FROM"))
        op.execute(f"GRANT SELECT ON {_VIEW} TO webapp_query")


def downgrade() -> None:
    """Drop the view and both tables (the policies go with their tables)."""
    op.execute(f"DROP VIEW {_VIEW}")
    op.drop_table("transactions")
    op.drop_table("statement_files")
