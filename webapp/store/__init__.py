"""Storage: users, API tokens, the financial data model, and schema migrations.

SQLAlchemy Core (no ORM) over SQLite (the default) or PostgreSQL (psycopg 3). The model's
SQL never runs here; it goes through `webapp.tools.sql.run_sql`, which reads only the
views in `QUERY_VIEWS`, only for one user.
"""

from __future__ import annotations

from ._accounts import NATIVE_ID_COLUMN, find_account, list_accounts, list_holdings
from ._demo import DEMO_USERNAMES, seed_demo, seeded_token, seeded_uuid
from ._engine import DatabaseURLError, create_store_engine, normalize_url, sqlite_file, user_scope
from ._flask import close_engine, get_engine, init_app
from ._migrate import (
    MIGRATIONS_DIR,
    alembic_config,
    current_revision,
    downgrade_database,
    head_revision,
    upgrade_database,
)
from ._schema import (
    FINANCIAL_TABLES,
    QUERY_ROLE,
    QUERY_VIEWS,
    USER_FUNCTION,
    USER_SETTING,
    VIEW_OWNER_ROLE,
    metadata,
)
from ._users import (
    InvalidUsernameError,
    UnknownUserError,
    User,
    authenticate,
    create_api_token,
    create_user,
    get_user,
    hash_token,
    is_valid_username,
    user_for_token,
)
from ._values import JsonValue, json_safe

__all__ = [
    "DEMO_USERNAMES",
    "FINANCIAL_TABLES",
    "MIGRATIONS_DIR",
    "NATIVE_ID_COLUMN",
    "QUERY_ROLE",
    "QUERY_VIEWS",
    "USER_FUNCTION",
    "USER_SETTING",
    "VIEW_OWNER_ROLE",
    "DatabaseURLError",
    "InvalidUsernameError",
    "JsonValue",
    "UnknownUserError",
    "User",
    "alembic_config",
    "authenticate",
    "close_engine",
    "create_api_token",
    "create_store_engine",
    "create_user",
    "current_revision",
    "downgrade_database",
    "find_account",
    "get_engine",
    "get_user",
    "hash_token",
    "head_revision",
    "init_app",
    "is_valid_username",
    "json_safe",
    "list_accounts",
    "list_holdings",
    "metadata",
    "normalize_url",
    "seed_demo",
    "seeded_token",
    "seeded_uuid",
    "sqlite_file",
    "upgrade_database",
    "user_for_token",
    "user_scope",
]
