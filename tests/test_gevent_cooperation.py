"""Under gevent (gunicorn's worker), nothing the app waits on may hold the event loop.

Each case runs in a fresh interpreter that monkey-patches first, as the worker does, and
counts how often another greenlet ran while the operation waited. An operation that blocked
the loop would let it run zero times.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PROBE = Path(__file__).parent / "support" / "gevent_probe.py"


def probe(case: str, database_url: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(PROBE), case, database_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture
def sqlite_url(tmp_path: Path, seeded_sqlite_template: Path) -> str:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    return f"sqlite:///{database}"


@pytest.mark.postgres
def test_a_postgresql_query_lets_other_greenlets_run(pg_admin_url: str) -> None:
    result = probe("psycopg", pg_admin_url)
    assert result["result"] == "slept" and result["ticks"] >= 5


def test_waiting_for_a_pooled_connection_lets_other_greenlets_run(sqlite_url: str) -> None:
    result = probe("pool", sqlite_url)
    assert result["result"] == "pooled" and result["ticks"] >= 5


def test_the_models_sqlite_query_runs_off_the_event_loop(sqlite_url: str) -> None:
    result = probe("sqlite_tool", sqlite_url)
    assert result["result"] == 2_000_000 and result["ticks"] >= 5


def test_a_sandboxed_python_run_lets_other_greenlets_run(sqlite_url: str) -> None:
    result = probe("sandbox", sqlite_url)
    assert result["result"] == "slept" and result["ticks"] >= 5


def test_turns_run_side_by_side_as_greenlets_and_complete(sqlite_url: str) -> None:
    result = probe("turns", sqlite_url)
    assert result["result"] == ["complete"] * 3 and result["ticks"] >= 1


def test_stopping_an_answer_wakes_its_reader_and_raises_nothing() -> None:
    # A stop closes the model from another greenlet while the reader waits on the socket;
    # closing the response under the reader was a reentrant call (RuntimeError) before.
    result = probe("claude_stop", "unused")
    assert result["result"] == "The answer was stopped."
