"""Users, passwords and API tokens."""

from __future__ import annotations

import dataclasses

import pytest
import sqlalchemy as sa
from flask import Flask

from webapp.store.app_db import get_engine
from webapp.store.users import (
    InvalidUsernameError,
    UnknownUserError,
    User,
    authenticate,
    create_api_token,
    create_user,
    get_user,
    hash_token,
    user_for_token,
)


def test_demo_users_sign_in_with_the_demo_password(app: Flask) -> None:
    engine = get_engine(app)
    demo, alex = authenticate(engine, "demo", "demo"), authenticate(engine, "alex", "demo")
    assert demo is not None and alex is not None
    assert (demo.username, alex.username) == ("demo", "alex")
    assert demo.id != alex.id


@pytest.mark.parametrize(
    ("username", "password"),
    [
        ("demo", "wrong"),
        ("demo", ""),
        ("Demo", "demo"),
        ("nobody", "demo"),
        ("", "demo"),
        ("demo' OR '1'='1", "demo"),
        (None, "demo"),
        ("demo", None),
        (["demo"], "demo"),
        ("demo", "\ud800"),
        ("x" * 65, "demo"),
        ("demo", "d" * 5000),
    ],
    ids=[
        "wrong-password",
        "empty-password",
        "case-differs",
        "unknown-user",
        "empty-username",
        "sql-injection",
        "no-username",
        "no-password",
        "list-username",
        "lone-surrogate",
        "long-username",
        "long-password",
    ],
)
def test_bad_credentials_are_refused_without_raising(
    app: Flask, username: object, password: object
) -> None:
    assert authenticate(get_engine(app), username, password) is None


def test_a_user_carries_no_secret_id() -> None:
    assert [field.name for field in dataclasses.fields(User)] == ["id", "username"]


def test_create_user_hashes_the_password(app: Flask) -> None:
    engine = get_engine(app)
    user = create_user(engine, "casey", "s3cret-pass")
    with engine.connect() as connection:
        stored = connection.execute(
            sa.text("SELECT password_hash, clerk_id FROM users WHERE id = :id"), {"id": user.id}
        ).one()
    assert "s3cret-pass" not in stored.password_hash
    assert stored.clerk_id.startswith("user_")
    assert authenticate(engine, "casey", "s3cret-pass") == user
    assert get_user(engine, user.id) == user


@pytest.mark.parametrize(
    "username", ["", "has space", "semi;colon", "ünïcode", "x" * 65], ids=lambda u: repr(u)[:12]
)
def test_create_user_refuses_bad_usernames(app: Flask, username: str) -> None:
    with pytest.raises(InvalidUsernameError):
        create_user(get_engine(app), username, "pw")


def test_usernames_are_unique(app: Flask) -> None:
    with pytest.raises(sa.exc.IntegrityError):
        create_user(get_engine(app), "demo", "another")


@pytest.mark.parametrize(
    "user_id",
    [0, -1, 10**6, "1", None, True, 1.0],
    ids=["zero", "negative", "absent", "str", "none", "bool", "float"],
)
def test_get_user_returns_none_for_unknown_or_odd_ids(app: Flask, user_id: object) -> None:
    assert get_user(get_engine(app), user_id) is None


def test_api_tokens_map_back_to_their_user_and_only_a_hash_is_kept(app: Flask) -> None:
    engine = get_engine(app)
    first, second = create_api_token(engine, "demo"), create_api_token(engine, "alex")
    assert first != second
    assert user_for_token(engine, first) == authenticate(engine, "demo", "demo")
    assert user_for_token(engine, second) == authenticate(engine, "alex", "demo")
    with engine.connect() as connection:
        stored = set(connection.execute(sa.text("SELECT token_hash FROM api_tokens")).scalars())
    assert stored == {hash_token(first), hash_token(second)}
    assert first not in stored and second not in stored


def test_create_api_token_needs_a_known_user(app: Flask) -> None:
    with pytest.raises(UnknownUserError):
        create_api_token(get_engine(app), "nobody")


@pytest.mark.parametrize(
    "token",
    [
        "",
        "wat_",
        "wat_" + "A" * 43,
        "Bearer x",
        None,
        42,
        "wat_" + "é" * 43,
        "\ud800",
        "x" * 10_000,
    ],
    ids=[
        "empty",
        "prefix-only",
        "unknown",
        "header",
        "none",
        "int",
        "non-ascii",
        "surrogate",
        "huge",
    ],
)
def test_unknown_or_malformed_tokens_name_no_user(app: Flask, token: object) -> None:
    engine = get_engine(app)
    create_api_token(engine, "demo")
    assert user_for_token(engine, token) is None


def test_a_tampered_token_names_no_user(app: Flask) -> None:
    engine = get_engine(app)
    token = create_api_token(engine, "demo")
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert user_for_token(engine, flipped) is None
    assert user_for_token(engine, token) is not None
