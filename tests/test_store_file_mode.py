"""The SQLite file holds Plaid access tokens: it and its -wal/-shm are readable by the owner only."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from flask import Flask

from webapp import create_app
from webapp.store.app_db import close_engine
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """Run with the common umask 022, under which new files are 0644."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_database_and_its_wal_and_shm_are_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite"
    engine = create_store_engine(f"sqlite:///{path}")
    try:
        upgrade_database(engine)
        with engine.connect() as connection:  # open: the -wal and -shm exist now
            connection.execute(sa.text("SELECT 1"))
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            assert {file.name: mode(file) for file in files} == {file.name: 0o600 for file in files}
    finally:
        engine.dispose()


def test_an_existing_database_with_a_looser_mode_is_narrowed(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    # Made by older code: WAL mode, world-readable, and left open so -wal/-shm stay on disk.
    holder = sqlite3.connect(path)
    holder.execute("PRAGMA journal_mode = WAL")
    holder.execute("CREATE TABLE t (x)")
    holder.execute("INSERT INTO t VALUES (1)")
    holder.commit()
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
    for file in files:
        file.chmod(0o644)
    engine = create_store_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as connection:
            assert connection.execute(sa.text("SELECT x FROM t")).scalar_one() == 1
        assert {file.name: mode(file) for file in files} == {file.name: 0o600 for file in files}
    finally:
        engine.dispose()
        holder.close()


def test_the_apps_default_database_in_the_instance_folder_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "instance.sqlite"
    app: Flask = create_app(
        {"TESTING": True, "SECRET_KEY": "x", "DATABASE_URL": f"sqlite:///{path}"}
    )
    try:
        assert app.test_cli_runner().invoke(args=["init-db"]).exit_code == 0
        assert mode(path) == 0o600
    finally:
        close_engine(app)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"], ids=["memory", "memory-named"])
def test_memory_databases_make_no_file(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    engine = create_store_engine(url)
    with engine.connect() as connection:
        connection.execute(sa.text("SELECT 1"))
    engine.dispose()
    assert list(tmp_path.iterdir()) == []


def _locked_by_us(path: Path) -> bool:
    """Tell whether this process holds a POSIX lock on `path` (Linux's /proc/locks)."""
    inode, pid = path.stat().st_ino, os.getpid()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "POSIX" in fields and fields[4] == str(pid) and fields[5].endswith(f":{inode}"):
            return True
    return False


def test_a_new_pooled_connection_keeps_the_others_locks(tmp_path: Path) -> None:
    # SQLite holds a shared lock on the file for as long as a WAL connection is open; closing
    # any other descriptor of the file in this process would drop it (SQLite's "How To
    # Corrupt", section 2.2). Another process's last close would then delete the -wal.
    path = tmp_path / "pooled.sqlite"
    engine = create_store_engine(f"sqlite:///{path}")
    try:
        upgrade_database(engine)
        with engine.connect() as first:
            first.execute(sa.text("SELECT count(*) FROM users")).scalar_one()
            assert _locked_by_us(path)
            with engine.connect() as second:  # a new pooled connection, the first still open
                second.execute(sa.text("SELECT count(*) FROM users")).scalar_one()
                assert _locked_by_us(path)
                with engine.begin() as third:
                    third.execute(
                        sa.text(
                            "INSERT INTO users (username, password_hash, clerk_id)"
                            " VALUES ('kept', 'x', 'clerk-kept')"
                        )
                    )
                # Another process (a flask command) opens the database and closes it.
                other = sqlite3.connect(path)
                other.execute("SELECT count(*) FROM users").fetchone()
                other.close()
                assert Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
                count = second.execute(
                    sa.text("SELECT count(*) FROM users WHERE username = 'kept'")
                ).scalar_one()
                assert count == 1
        with sqlite3.connect(path) as check:
            assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        engine.dispose()
