"""The user's statement files: keep a parsed one with its rows, list, read and delete them.

A file and its rows are written in one transaction, so a file is kept whole or not at all.
Reads go through `transaction_details`, under the user's scope, as the model's own queries
do; another user's file is simply not found. Nothing here logs a file's name or contents.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from webapp.statements import Statement, categorize

from .engine import user_scope
from .schema import plaid_accounts, statement_files, transactions
from .values import JsonValue, json_safe


class UnknownAccount(LookupError):
    """The account chosen for a file is not one of the user's synced accounts."""


@dataclass(frozen=True, slots=True)
class StatementFile:
    """One uploaded file as the API shows it."""

    id: str
    name: str
    format: str
    rows: int
    account_id: str | None
    account_name: str | None
    account_mask: str | None
    created_at: datetime | None

    def to_json(self) -> dict[str, JsonValue]:
        """Return the API's shape: `{"id", "name", "format", "rows", "account_id"}` and more."""
        return {
            "id": self.id,
            "name": self.name,
            "format": self.format,
            "rows": self.rows,
            "account_id": self.account_id,
            "created_at": json_safe(self.created_at),
        }


def new_file_id() -> str:
    """Return a fresh public file id: 16-128 `[A-Za-z0-9_-]`, as a citation target needs."""
    return "file_" + secrets.token_urlsafe(15)


def _account_ref(connection: sa.Connection, user_id: int, account_id: str) -> int:
    found = connection.execute(
        sa.select(plaid_accounts.c.id).where(
            plaid_accounts.c.user_id == user_id, plaid_accounts.c.account_id == account_id
        )
    ).scalar_one_or_none()
    if found is None:
        raise UnknownAccount(account_id)
    return int(found)


def save_statement(
    engine: Engine, user_id: int, name: str, statement: Statement, account_id: str | None
) -> StatementFile:
    """Keep `statement` and its rows for `user_id`, attached to `account_id` when given."""
    file_id = new_file_id()
    with engine.begin() as connection:
        ref = _account_ref(connection, user_id, account_id) if account_id else None
        file_ref = connection.execute(
            statement_files.insert()
            .values(
                user_id=user_id,
                file_id=file_id,
                name=name,
                format=statement.format,
                row_count=len(statement.rows),
                account_mask=statement.account_mask,
                plaid_account_ref=ref,
            )
            .returning(statement_files.c.id)
        ).scalar_one()
        rows = []
        for row in statement.rows:
            category, detail = categorize(row.description, row.amount, row.category)
            rows.append(
                {
                    "user_id": user_id,
                    "transaction_id": "ftx_" + secrets.token_urlsafe(12),
                    "plaid_account_ref": ref,
                    "file_ref": file_ref,
                    "date": row.on.isoformat(),
                    "name": row.description,
                    "amount": row.amount,
                    "currency": row.currency,
                    "category": category,
                    "category_detail": detail,
                    "pending": False,
                    "payment_channel": "other",
                }
            )
        connection.execute(transactions.insert(), rows)
    found = get_file(engine, user_id, file_id)
    assert found is not None
    return found


_FILES = sa.select(
    statement_files.c.file_id,
    statement_files.c.name,
    statement_files.c.format,
    statement_files.c.row_count,
    statement_files.c.account_mask,
    statement_files.c.created_at,
    plaid_accounts.c.account_id,
    plaid_accounts.c.name.label("account_name"),
).select_from(
    statement_files.outerjoin(
        plaid_accounts, plaid_accounts.c.id == statement_files.c.plaid_account_ref
    )
)


def _record(row: Any) -> StatementFile:
    created = row.created_at
    return StatementFile(
        id=str(row.file_id),
        name=str(row.name),
        format=str(row.format),
        rows=int(str(row.row_count)),
        account_id=None if row.account_id is None else str(row.account_id),
        account_name=None if row.account_name is None else str(row.account_name),
        account_mask=None if row.account_mask is None else str(row.account_mask),
        created_at=created if isinstance(created, datetime) else None,
    )


def list_files(engine: Engine, user_id: int) -> list[StatementFile]:
    """Return the user's files, newest first."""
    query = _FILES.where(statement_files.c.user_id == user_id).order_by(statement_files.c.id.desc())
    with engine.connect() as connection:
        return [_record(row) for row in connection.execute(query)]


def get_file(engine: Engine, user_id: int, file_id: str) -> StatementFile | None:
    """Return the user's file `file_id`, or None (unknown and another user's alike)."""
    query = _FILES.where(statement_files.c.user_id == user_id, statement_files.c.file_id == file_id)
    with engine.connect() as connection:
        row = connection.execute(query).first()
    return None if row is None else _record(row)


_ROWS = sa.text(
    "SELECT transaction_id, date, description, amount, currency, category, subcategory"
    " FROM transaction_details WHERE file_id = :file_id ORDER BY date, transaction_id"
)


def file_rows(engine: Engine, user_id: int, file_id: str) -> list[dict[str, JsonValue]]:
    """Return the file's parsed rows, through the view the model reads, oldest first."""
    with engine.begin() as connection, user_scope(connection, user_id):
        found = connection.execute(_ROWS, {"file_id": file_id}).mappings()
        return [{key: json_safe(value) for key, value in row.items()} for row in found]


def delete_file(engine: Engine, user_id: int, file_id: str) -> bool:
    """Delete the user's file and its transactions; False when there is no such file."""
    with engine.begin() as connection:
        ref = connection.execute(
            sa.select(statement_files.c.id).where(
                statement_files.c.user_id == user_id, statement_files.c.file_id == file_id
            )
        ).scalar_one_or_none()
        if ref is None:
            return False
        connection.execute(transactions.delete().where(transactions.c.file_ref == ref))
        connection.execute(statement_files.delete().where(statement_files.c.id == ref))
    return True
