"""The two locks dev.py installs from: the service's own set, and the tests' superset."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import dev

DEV_ONLY = ("playwright", "mypy", "ruff", "hypothesis", "pytest", "anthropic")


def test_the_locks_agree_with_pyproject_and_with_each_other() -> None:
    dev.check_locks()  # exits on a missing dependency or a version the two pin differently


def test_serving_installs_no_dev_tool() -> None:
    served = dev._pins(dev.LOCKS["run"])
    assert not [name for name in DEV_ONLY if name in served]
    assert {"flask", "gunicorn", "gevent"} <= set(served)
    assert set(served) <= set(dev._pins(dev.LOCKS["test"]))


def test_a_lock_that_pins_differently_stops_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "requirements.lock"
    text = dev.LOCKS["run"].read_text()
    flask = dev._pins(dev.LOCKS["run"])["flask"]
    runtime.write_text(text.replace(f"flask=={flask}", "flask==0.0.1"))
    monkeypatch.setitem(dev.LOCKS, "run", runtime)
    with pytest.raises(SystemExit, match="pin flask differently"):
        dev.check_locks()


def test_a_lock_missing_a_dependency_stops_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "requirements.lock"
    lines = dev.LOCKS["run"].read_text().split("\ngevent==")
    runtime.write_text(lines[0])
    monkeypatch.setitem(dev.LOCKS, "run", runtime)
    with pytest.raises(SystemExit, match="requirements.lock lacks gevent"):
        dev.check_locks()


def test_the_served_set_holds_what_the_procfiles_worker_imports() -> None:
    # gunicorn.conf.py serves with gevent workers; gunicorn's `gevent` extra brings what its
    # worker imports (packaging among them), which the dev tools would otherwise hide.
    conf = (Path(dev.ROOT) / "gunicorn.conf.py").read_text()
    assert 'worker_class = "gevent"' in conf
    project = tomllib.loads((Path(dev.ROOT) / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("gunicorn[gevent]") for r in project["dependencies"])
    assert {"gevent", "packaging"} <= set(dev._pins(dev.LOCKS["run"]))
