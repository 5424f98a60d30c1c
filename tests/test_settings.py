"""Settings: read once from the environment into the app's config, parsed, overridden by a
test's config; a bad value stops the app with a message that names the setting."""

from __future__ import annotations

import ast
import inspect
import runpy
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner

from webapp import create_app
from webapp.chat.service import ChatService
from webapp.settings import BY_NAME, SETTINGS, SettingError, load
from webapp.store.app_db import close_engine, get_engine
from webapp.store.throttle import SignInThrottle
from webapp.store.users import authenticate

ROOT = Path(__file__).resolve().parent.parent


def fresh(app: Flask, **config: object) -> Flask:
    """Return a new app on `app`'s database, configured by `config` and the environment."""
    return create_app(
        {
            "TESTING": True,
            "SECRET_KEY": "t",
            "DATABASE_URL": app.config["DATABASE_URL"],
            **config,
        }
    )


def test_the_defaults_are_the_tables() -> None:
    values = load(environ={})
    assert values == {s.name: s.default for s in SETTINGS if s.where == "app"}
    assert values["FAVICON_FETCH"] is True and values["MAX_TURNS_PER_USER"] == 3


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"MAX_TURNS_PER_USER": " 7 "}, {"MAX_TURNS_PER_USER": 7}),
        ({"TURN_LEASE_SECONDS": "0.5"}, {"TURN_LEASE_SECONDS": 0.5}),
        ({"FAVICON_FETCH": "OFF"}, {"FAVICON_FETCH": False}),
        ({"EXA_API_KEY": "  k  "}, {"EXA_API_KEY": "k"}),
        (
            {"MAX_TURNS_PER_USER": "  ", "REDIS_URL": ""},
            {"MAX_TURNS_PER_USER": 3, "REDIS_URL": None},
        ),
    ],
    ids=["whole", "seconds", "switch", "text", "blank-is-unset"],
)
def test_the_environment_is_parsed(environ: dict[str, str], expected: dict[str, object]) -> None:
    values = load(environ=environ)
    assert {name: values[name] for name in expected} == expected


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TURN_LEASE_SECONDS", "soon"),
        ("TURN_DEADLINE_SECONDS", "-1"),
        ("MAX_TURNS_PER_USER", "0"),
        ("MAX_STREAMS_PER_USER", "2.5"),
        ("TOOL_RESULT_MAX_BYTES", "100"),
        ("MAX_CONTENT_LENGTH", "1_000"),
        ("FAVICON_FETCH", "maybe"),
    ],
    ids=["words", "negative", "zero", "fraction", "below-minimum", "underscore", "not-a-switch"],
)
def test_a_bad_value_names_the_setting(
    app: Flask, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    with pytest.raises(SettingError, match=rf"^{name}: expected .*, not '{value}'\.$"):
        load(environ={name: value})
    # The app refuses to start with it, from the environment or from a test's config.
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingError, match=name):
        fresh(app)
    monkeypatch.delenv(name)
    with pytest.raises(SettingError, match=name):
        fresh(app, **{name: value})


def test_a_bad_secret_is_not_repeated() -> None:
    with pytest.raises(SettingError) as info:
        load({"ANTHROPIC_API_KEY": 12345})
    assert str(info.value) == "ANTHROPIC_API_KEY: expected text."
    assert BY_NAME["ANTHROPIC_API_KEY"].secret and not BY_NAME["ANTHROPIC_MODEL"].secret


def test_the_test_config_overrides_the_environment(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_TURNS_PER_USER", "7")
    monkeypatch.setenv("ANTHROPIC_MODEL", "from-the-environment")
    from_env = fresh(app)
    overridden = fresh(app, MAX_TURNS_PER_USER="2", ANTHROPIC_MODEL=None)
    assert from_env.config["MAX_TURNS_PER_USER"] == 7
    assert from_env.config["ANTHROPIC_MODEL"] == "from-the-environment"
    assert overridden.config["MAX_TURNS_PER_USER"] == 2  # parsed, as from the environment
    assert overridden.config["ANTHROPIC_MODEL"] == BY_NAME["ANTHROPIC_MODEL"].default  # None: unset


def test_the_environment_is_read_once(app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_STREAMS_PER_USER", "5")
    made = fresh(app)
    monkeypatch.setenv("MAX_STREAMS_PER_USER", "9")
    assert made.config["MAX_STREAMS_PER_USER"] == 5
    assert fresh(app).config["MAX_STREAMS_PER_USER"] == 9


def test_an_unset_database_is_a_file_in_the_instance_folder() -> None:
    made = create_app({"TESTING": True, "DATABASE_URL": None, "SECRET_KEY": "t"})
    instance = Path(made.instance_path)
    assert made.config["DATABASE_URL"] == f"sqlite:///{instance / 'webapp.sqlite'}"


def test_seed_demo_takes_demo_password_from_the_environment(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_PASSWORD", "correct horse")
    made = fresh(app)
    try:
        runner: FlaskCliRunner = made.test_cli_runner()
        result = runner.invoke(args=["seed-demo"])
        assert result.exit_code == 0, result.output
        assert authenticate(get_engine(made), "demo", "correct horse") is not None
    finally:
        close_engine(made)


def test_gunicorn_reads_the_tables_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WEB_CONCURRENCY", "WORKER_CONNECTIONS"):
        monkeypatch.delenv(name, raising=False)
    conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert conf["workers"] == BY_NAME["WEB_CONCURRENCY"].default
    assert conf["worker_connections"] == BY_NAME["WORKER_CONNECTIONS"].default
    assert {s.name for s in SETTINGS if s.where == "gunicorn"} >= {"WEB_CONCURRENCY", "PORT"}


def test_each_default_is_written_once_in_the_settings_module() -> None:
    # The settings module imports nothing of the app's, so every layer may read its defaults...
    tree = ast.parse((ROOT / "webapp" / "settings.py").read_text())
    imported = [
        node.module or ""
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and (node.level or (node.module or "").startswith("webapp"))
    ]
    assert imported == []
    # ...and the parameters that stand for a setting default to the table's value.
    chat = inspect.signature(ChatService.__init__).parameters
    assert chat["lease"].default.total_seconds() == BY_NAME["TURN_LEASE_SECONDS"].default
    assert chat["deadline"].default.total_seconds() == BY_NAME["TURN_DEADLINE_SECONDS"].default
    assert chat["max_turns_per_user"].default == BY_NAME["MAX_TURNS_PER_USER"].default
    assert chat["max_streams_per_user"].default == BY_NAME["MAX_STREAMS_PER_USER"].default
    assert chat["max_tokens"].default == BY_NAME["MODEL_MAX_TOKENS"].default
    throttle = inspect.signature(SignInThrottle.__init__).parameters
    assert throttle["address_limit"].default == BY_NAME["MAX_SIGN_IN_FAILURES_PER_ADDRESS"].default
