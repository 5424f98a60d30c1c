"""The benchmarks' databases: made per part (migrated and seeded through the Flask CLI), copied
per measured run, dropped by name when the run ends; users and tokens made through the store.

PostgreSQL databases are named `bench_service_<pid>_<hex>` after the process that made them,
so a later run can drop what a killed one left behind (`drop_orphans`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from _service import BIN, ROOT, BenchError, child_env

DEFAULT_ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/test"
DB_PREFIX = "bench_service_"  # then the creating process's pid: see `drop_orphans`


def _conninfo(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@dataclass
class Database:
    """A database this process made; `drop` removes it (idempotent)."""

    kind: str  # "postgres" or "sqlite"
    url: str
    name: str
    admin_url: str = ""
    dropped: bool = False

    def copy(self) -> Database:
        """Return a new database with this one's contents (PostgreSQL: TEMPLATE; SQLite: a file)."""
        if self.kind == "sqlite":
            source = Path(self.name)
            target = Path(tempfile.mkdtemp(prefix=f"{DB_PREFIX}{os.getpid()}_")) / "webapp.sqlite"
            for suffix in ("", "-wal", "-shm"):
                if Path(f"{source}{suffix}").exists():
                    shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
            return Database("sqlite", f"sqlite:///{target}", str(target))
        return create_postgres(self.admin_url, template=self.name)

    def drop(self) -> None:
        if self.dropped:
            return
        self.dropped = True
        if self.kind == "sqlite":
            shutil.rmtree(Path(self.name).parent, ignore_errors=True)
            return
        import psycopg
        from psycopg import sql

        with psycopg.connect(
            _conninfo(self.admin_url), autocommit=True, connect_timeout=10
        ) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(self.name))
            )


def create_postgres(admin_url: str, template: str | None = None) -> Database:
    """Create an empty database (or a copy of `template`) next to `admin_url`'s."""
    import psycopg
    from psycopg import sql
    from sqlalchemy.engine import make_url

    name = f"{DB_PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template:
        statement = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(name), sql.Identifier(template)
        )
    try:
        with psycopg.connect(_conninfo(admin_url), autocommit=True, connect_timeout=10) as admin:
            admin.execute(statement)
    except psycopg.Error as exc:
        raise BenchError(f"PostgreSQL: {' '.join(str(exc).split())}") from None
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    return Database("postgres", url, name, admin_url)


def drop_orphans(admin_url: str) -> list[str]:
    """Drop the databases of earlier runs whose process is gone (killed before cleaning up)."""
    import psycopg
    from psycopg import sql

    dropped = []
    try:
        with psycopg.connect(_conninfo(admin_url), autocommit=True, connect_timeout=5) as admin:
            names = [
                row[0]
                for row in admin.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s", (DB_PREFIX + "%",)
                )
            ]
            for name in names:
                pid = name[len(DB_PREFIX) :].split("_", 1)[0]
                if pid.isdigit() and int(pid) != os.getpid() and not Path(f"/proc/{pid}").exists():
                    admin.execute(
                        sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                            sql.Identifier(name)
                        )
                    )
                    dropped.append(name)
    except psycopg.Error:
        pass  # PostgreSQL unreachable: the parts that need it say so
    return dropped


def create_sqlite() -> Database:
    path = Path(tempfile.mkdtemp(prefix=f"{DB_PREFIX}{os.getpid()}_")) / "webapp.sqlite"
    return Database("sqlite", f"sqlite:///{path}", str(path))


@contextmanager
def scratch(kind: str, admin_url: str) -> Iterator[str]:
    """Yield the URL of an empty database ("postgres" or "sqlite"), dropped afterwards."""
    database = create_postgres(admin_url) if kind == "postgres" else create_sqlite()
    try:
        yield database.url
    finally:
        database.drop()


def flask_cli(database: Database, *args: str, timeout: float = 180.0) -> str:
    """Run `flask --app webapp <args>` against `database`; return its output."""
    env = child_env({"DATABASE_URL": database.url})
    try:
        done = subprocess.run(
            [str(BIN / "flask"), "--app", "webapp", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"flask {' '.join(args)} took over {timeout:g} s") from None
    if done.returncode != 0:
        raise BenchError(f"flask {' '.join(args)} failed: {(done.stderr or done.stdout)[-400:]}")
    return done.stdout


def seeded_database(kind: str, admin_url: str) -> Database:
    """Create a database, then `init-db` and `seed-demo` on it through the Flask CLI."""
    database = create_postgres(admin_url) if kind == "postgres" else create_sqlite()
    try:
        flask_cli(database, "init-db")
        flask_cli(database, "seed-demo")
    except BaseException:
        database.drop()
        raise
    return database


def make_users(database: Database, count: int, prefix: str = "bench") -> list[str]:
    """Create `count` users through the app's store and return an API token for each."""
    from webapp.store.engine import create_store_engine
    from webapp.store.users import create_api_token, create_user

    engine = create_store_engine(database.url)
    password = secrets.token_urlsafe(12)

    def one(i: int) -> str:
        username = f"{prefix}{i:04d}"
        create_user(engine, username, password)
        return create_api_token(engine, username)

    try:
        # Password hashing dominates and releases the GIL: two at a time on two cores.
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(one, range(count)))
    finally:
        engine.dispose()  # a template must have no connections left


def demo_token(database: Database) -> str:
    from webapp.store.engine import create_store_engine
    from webapp.store.users import create_api_token

    engine = create_store_engine(database.url)
    try:
        return create_api_token(engine, "demo")
    finally:
        engine.dispose()
