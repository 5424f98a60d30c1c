"""Users, passwords, sessions and API tokens; a `User` never carries the secret `clerk_id` out."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from functools import cache

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from werkzeug.security import check_password_hash, generate_password_hash

from .engine import autocommit
from .schema import api_tokens, metadata, users
from .writes import write

_USERNAME = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)
_TOKEN_PREFIX = "wat_"
_TOKEN = re.compile(r"wat_[A-Za-z0-9_-]{32,64}", re.ASCII)
_MAX_PASSWORD_LENGTH = 1024

# A browser session names the user and the version it was signed in at; bumping the version
# (sign-out, or a password change) ends every session signed in before, copied cookies too.
# No row means version 0, so users made before this table keep their sessions.
session_versions = sa.Table(
    "session_versions",
    metadata,
    sa.Column(
        "user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("version", sa.Integer, nullable=False),
)


@dataclass(frozen=True, slots=True)
class User:
    """A signed-in person: only what the web layer and the tools may see."""

    id: int
    username: str


class UnknownUserError(LookupError):
    """No user has the given username."""


class InvalidUsernameError(ValueError):
    """A username must be 1-64 letters, digits, `_`, `.` or `-`."""


def is_valid_username(username: object) -> bool:
    """Tell whether `username` is 1-64 ASCII letters, digits, `_`, `.` or `-`."""
    return isinstance(username, str) and _USERNAME.fullmatch(username) is not None


def hash_token(token: str) -> str:
    """Return the stored form of an API token: its SHA-256, hex (the token has 256 bits)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_clerk_id() -> str:
    """Return a fresh secret external id."""
    return "user_" + secrets.token_hex(14)


def _is_password(password: object) -> bool:
    if not isinstance(password, str) or len(password) > _MAX_PASSWORD_LENGTH:
        return False
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate cannot be hashed
        return False
    return True


@cache
def _decoy_hash() -> str:
    # Checked when the username is unknown, so both failures take about as long.
    return generate_password_hash(secrets.token_hex(16))


def create_user(
    engine: Engine, username: str, password: str, *, clerk_id: str | None = None
) -> User:
    """Add a user with a hashed password and return it."""
    if not is_valid_username(username):
        raise InvalidUsernameError(username)
    if not _is_password(password):
        raise ValueError("a password must be a string of at most 1024 characters")
    values = {
        "username": username,
        "password_hash": generate_password_hash(password),
        "clerk_id": clerk_id or new_clerk_id(),
    }
    with engine.begin() as connection:
        result = connection.execute(users.insert().values(**values).returning(users.c.id))
        return User(result.scalar_one(), username)


def authenticate(engine: Engine, username: object, password: object) -> User | None:
    """Return the user whose username and password match, or None."""
    if not is_valid_username(username) or not _is_password(password):
        return None
    assert isinstance(username, str) and isinstance(password, str)
    query = sa.select(users.c.id, users.c.username, users.c.password_hash).where(
        users.c.username == username
    )
    with engine.connect() as connection:
        row = connection.execute(query).first()
    if row is None:
        check_password_hash(_decoy_hash(), password)
        return None
    return User(row.id, row.username) if check_password_hash(row.password_hash, password) else None


def get_user(engine: Engine, user_id: object) -> User | None:
    """Return the user with id `user_id`, or None."""
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        return None
    with engine.connect() as connection:
        row = connection.execute(
            sa.select(users.c.id, users.c.username).where(users.c.id == user_id)
        ).first()
    return None if row is None else User(row.id, row.username)


def session_version(engine: Engine, user_id: int) -> int:
    """Return the version a new browser session of `user_id` is signed in at."""
    with engine.connect() as connection:
        version = connection.execute(
            sa.select(session_versions.c.version).where(session_versions.c.user_id == user_id)
        ).scalar_one_or_none()
    return int(version or 0)


def user_for_session(engine: Engine, user_id: object, version: object) -> User | None:
    """Return the user a browser session names, or None when its version has been ended."""
    if not isinstance(user_id, int) or isinstance(user_id, bool):
        return None
    if not isinstance(version, int) or isinstance(version, bool):
        return None
    with autocommit(engine) as connection:
        row = connection.execute(_SESSION_USER, {"user_id": user_id, "version": version}).first()
    return None if row is None else User(row.id, row.username)


# Read by every request that signs in by cookie or token: built once, their values bound as
# they run, each one statement in autocommit (one round trip on PostgreSQL, not three).
_SESSION_USER = (
    sa.select(users.c.id, users.c.username)
    .select_from(users.outerjoin(session_versions, session_versions.c.user_id == users.c.id))
    .where(
        users.c.id == sa.bindparam("user_id"),
        sa.func.coalesce(session_versions.c.version, 0) == sa.bindparam("version"),
    )
)
_TOKEN_USER = (
    sa.select(users.c.id, users.c.username)
    .join(api_tokens, api_tokens.c.user_id == users.c.id)
    .where(api_tokens.c.token_hash == sa.bindparam("token_hash"))
)


def end_sessions(engine: Engine, user_id: int) -> None:
    """End every browser session `user_id` has signed in so far, on every device."""
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    statement = insert(session_versions).values(user_id=user_id, version=1)
    statement = statement.on_conflict_do_update(
        index_elements=[session_versions.c.user_id],
        set_={"version": session_versions.c.version + 1},
    )
    write(engine, lambda connection: connection.execute(statement))


def create_api_token(engine: Engine, username: str) -> str:
    """Make a new API token for `username`, keep only its hash, and return the token."""
    token = _TOKEN_PREFIX + secrets.token_urlsafe(32)
    with engine.begin() as connection:
        user_id = connection.execute(
            sa.select(users.c.id).where(users.c.username == username)
        ).scalar_one_or_none()
        if user_id is None:
            raise UnknownUserError(username)
        connection.execute(
            api_tokens.insert().values(token_hash=hash_token(token), user_id=user_id)
        )
    return token


def user_for_token(engine: Engine, token: object) -> User | None:
    """Return the user an API token belongs to, or None for an unknown or malformed token."""
    if not isinstance(token, str) or _TOKEN.fullmatch(token) is None:
        return None
    with autocommit(engine) as connection:
        row = connection.execute(_TOKEN_USER, {"token_hash": hash_token(token)}).first()
    return None if row is None else User(row.id, row.username)
