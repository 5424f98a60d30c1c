"""Health checks and the model check, as an operator's deploy uses them."""

from __future__ import annotations

from pathlib import Path

import httpx
from click.testing import Result

from tests.support.apps import make_app
from tests.support.fake_claude import FakeClaude, HttpError, text_reply
from tests.support.gunicorn import gunicorn
from webapp import create_app
from webapp.store.app_db import get_engine
from webapp.store.migrate import downgrade_database, head_revision, upgrade_database

UNREACHABLE = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1"


def test_healthz_answers_without_touching_the_database() -> None:
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": UNREACHABLE})
    response = app.test_client().get("/healthz")
    assert response.status_code == 200 and response.get_json() == {"status": "ok"}


def test_readyz_is_ready_on_a_current_schema(tmp_path: Path) -> None:
    response = make_app(tmp_path).test_client().get("/readyz")
    assert response.status_code == 200
    assert response.get_json() == {
        "status": "ready",
        "checks": {"database": "ok", "schema": "ok"},
    }


def test_readyz_is_unavailable_behind_the_schema_and_says_what_to_run(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    downgrade_database(get_engine(app), "0007")
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body["status"] == "unavailable" and body["checks"]["database"] == "ok"
    assert (
        "init-db" in body["checks"]["schema"] and str(head_revision()) in body["checks"]["schema"]
    )
    upgrade_database(get_engine(app))
    assert app.test_client().get("/readyz").status_code == 200


def test_readyz_is_unavailable_while_the_database_is_away() -> None:
    app = create_app({"TESTING": True, "SECRET_KEY": "t", "DATABASE_URL": UNREACHABLE})
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    body = response.get_json()
    assert body == {"status": "unavailable", "checks": {"database": "the database did not answer"}}
    assert "nobody" not in response.get_data(as_text=True)  # no connection string shown


def test_the_procfiles_gunicorn_serves_both_checks(tmp_path: Path) -> None:
    database = tmp_path / "db.sqlite"
    app = create_app({"DATABASE_URL": f"sqlite:///{database}", "SECRET_KEY": "t"})
    upgrade_database(get_engine(app))
    env = {"DATABASE_URL": f"sqlite:///{database}", "SECRET_KEY": "t", "ANTHROPIC_API_KEY": ""}
    with gunicorn(env, tmp_path) as server:
        assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
        ready = httpx.get(f"{server.url}/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready"
        assert ready.headers["cache-control"] == "no-store"


def _check_model(tmp_path: Path, **config: str) -> Result:
    tmp_path.mkdir(exist_ok=True)
    app = make_app(tmp_path, **config)
    return app.test_cli_runner().invoke(args=["check-model"])


def test_check_model_says_the_model_answers(tmp_path: Path) -> None:
    with FakeClaude([text_reply(("OK", []))]) as fake:
        result = _check_model(tmp_path, ANTHROPIC_API_KEY="sk-x", ANTHROPIC_BASE_URL=fake.url)
    assert result.exit_code == 0, result.output
    assert "claude-sonnet-5 answers with this key" in result.output


def test_check_model_names_the_setting_to_fix(tmp_path: Path) -> None:
    missing = HttpError(
        404, {"type": "error", "error": {"type": "not_found_error", "message": "m"}}
    )
    refused = HttpError(401, {"type": "error", "error": {"type": "authentication_error"}})
    with FakeClaude([missing, refused]) as fake:
        config = {"ANTHROPIC_API_KEY": "sk-x", "ANTHROPIC_BASE_URL": fake.url}
        gone = _check_model(tmp_path / "a", ANTHROPIC_MODEL="claude-gone-1", **config)
        bad_key = _check_model(tmp_path / "b", **config)
    assert gone.exit_code == 1 and "Fix ANTHROPIC_MODEL" in gone.output
    assert "claude-gone-1" in gone.output and "retired or misspelt" in gone.output
    assert bad_key.exit_code == 1 and "Fix ANTHROPIC_API_KEY" in bad_key.output


def test_check_model_without_a_key_says_the_offline_engine_answers(tmp_path: Path) -> None:
    result = _check_model(tmp_path)
    assert result.exit_code == 0 and "offline engine answers" in result.output
