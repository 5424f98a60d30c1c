"""Storage: users, sessions, API tokens, sign-in throttling, the financial data model, and
schema migrations.

SQLAlchemy Core (no ORM) over SQLite (the default) or PostgreSQL (psycopg 3). The model's
SQL never runs here; it goes through `webapp.tools.sql.run_sql`, which reads only the
views in `QUERY_VIEWS`, only for one user.
"""

from __future__ import annotations

from .accounts import NATIVE_ID_COLUMN, find_account, list_accounts, list_holdings
from .app_db import close_engine, get_engine, init_app
from .demo import DEMO_USERNAMES, seed_demo, seeded_token, seeded_uuid
from .engine import DatabaseURLError, create_store_engine, normalize_url, sqlite_file, user_scope
from .migrate import (
    MIGRATIONS_DIR,
    alembic_config,
    current_revision,
    downgrade_database,
    head_revision,
    upgrade_database,
)
from .schema import (
    FINANCIAL_TABLES,
    QUERY_ROLE,
    QUERY_VIEWS,
    USER_FUNCTION,
    USER_SETTING,
    VIEW_OWNER_ROLE,
    metadata,
)
from .throttle import (
    MAX_SIGN_IN_FAILURES,
    SIGN_IN_WINDOW_SECONDS,
    Attempt,
    DatabaseFailureLog,
    FailureLog,
    RedisFailureLog,
    SignInThrottle,
    retry_after,
    throttle_key,
)
from .users import (
    InvalidUsernameError,
    UnknownUserError,
    User,
    authenticate,
    create_api_token,
    create_user,
    end_sessions,
    get_user,
    hash_token,
    is_valid_username,
    session_version,
    user_for_session,
    user_for_token,
)
from .values import JsonValue, json_safe

__all__ = [
    "DEMO_USERNAMES",
    "FINANCIAL_TABLES",
    "MAX_SIGN_IN_FAILURES",
    "MIGRATIONS_DIR",
    "NATIVE_ID_COLUMN",
    "QUERY_ROLE",
    "QUERY_VIEWS",
    "SIGN_IN_WINDOW_SECONDS",
    "USER_FUNCTION",
    "USER_SETTING",
    "VIEW_OWNER_ROLE",
    "Attempt",
    "DatabaseFailureLog",
    "DatabaseURLError",
    "FailureLog",
    "InvalidUsernameError",
    "JsonValue",
    "RedisFailureLog",
    "SignInThrottle",
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
    "end_sessions",
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
    "retry_after",
    "seed_demo",
    "seeded_token",
    "seeded_uuid",
    "session_version",
    "sqlite_file",
    "throttle_key",
    "upgrade_database",
    "user_for_session",
    "user_for_token",
    "user_scope",
]
