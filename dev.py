#!/usr/bin/env python3
"""Set up and run the project on a fresh machine: `python3 dev.py run` or `python3 dev.py test`.

Needs only Python 3.11+. Each command creates `.venv` and installs into it the exact versions
pinned (with hashes) in its lock, then the project itself, whenever `pyproject.toml` or the
lock has changed since the last install, so a second run is quick: `run` installs what the
service needs (`requirements.lock`), `test` that and the dev tools (`requirements-dev.lock`,
the same pins for every package both hold). After a change to pyproject's dependencies,
regenerate both locks with `LOCK_COMMANDS`, in that order.
The test command also installs Debian's chromium when `/usr/bin/chromium` is missing,
because Playwright cannot download its own browsers on this network.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".installed-from"
LOCKS = {"run": ROOT / "requirements.lock", "test": ROOT / "requirements-dev.lock"}
LOCK_COMMANDS = (
    "uv pip compile pyproject.toml --extra dev --generate-hashes --python-version 3.11 "
    "-o requirements-dev.lock",
    # The service's own set, held to the dev set's pins: what the tests ran is what serves.
    "uv pip compile pyproject.toml --generate-hashes --python-version 3.11 "
    "-c requirements-dev.lock -o requirements.lock",
)
CHROMIUM = Path("/usr/bin/chromium")


def _run(*cmd: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True, env=env)


def _name(requirement: str) -> str:
    """Return a requirement's project name, normalised as PEP 503 does."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group()).lower()


def _pins(lock: Path) -> dict[str, str]:
    pins = {}
    for line in lock.read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, version = line.split("==", 1)
            pins[_name(name)] = version.split()[0].rstrip("\\ ")
    return pins


def check_locks() -> None:
    """Stop when a lock misses a dependency pyproject.toml names (it is older than the list),
    or when the two locks pin one package differently."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    wanted = {
        "run": runtime,
        "test": runtime | {_name(r) for r in project["optional-dependencies"]["dev"]},
    }
    pins = {kind: _pins(lock) for kind, lock in LOCKS.items()}
    redo = "regenerate the locks: " + "; then ".join(LOCK_COMMANDS)
    for kind, lock in LOCKS.items():
        if missing := sorted(wanted[kind] - set(pins[kind])):
            sys.exit(f"{lock.name} lacks {', '.join(missing)}; {redo}")
    if differ := sorted(n for n, v in pins["run"].items() if pins["test"].get(n) != v):
        sys.exit(f"the locks pin {', '.join(differ)} differently; {redo}")


def _inputs(kind: str) -> str:
    return hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + LOCKS[kind].read_bytes()
    ).hexdigest()


def ensure_venv(kind: str) -> None:
    """Create the virtual environment and install `kind`'s locked set when the inputs changed.

    The dev set holds the service's, so a venv made for the tests serves as it is.
    """
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before any venv exists
        sys.exit("Python 3.11 or newer is needed.")
    check_locks()
    if not (BIN / "python").exists():
        _run(sys.executable, "-m", "venv", VENV)
    installed = STAMP.read_text() if STAMP.exists() else ""
    enough = {f"{k} {_inputs(k)}" for k in (("run", "test") if kind == "run" else ("test",))}
    if installed in enough:
        return
    pip = (BIN / "python", "-m", "pip", "install", "--quiet")
    _run(*pip, "--upgrade", "pip")
    _run(*pip, "-r", LOCKS[kind])  # every pin carries its hashes, so pip checks each download
    _run(*pip, "--no-deps", "-e", ".")
    STAMP.write_text(f"{kind} {_inputs(kind)}")


def ensure_chromium() -> None:
    """Install Debian's chromium for the browser tests when it is missing."""
    if CHROMIUM.exists():
        return
    if shutil.which("apt-get") is None:
        sys.exit("The browser tests need /usr/bin/chromium; install Chromium and run again.")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _run(*sudo, "apt-get", "update", "-qq", env=env)
    _run(*sudo, "apt-get", "install", "-y", "-qq", "chromium", env=env)


def run() -> None:
    """Start gunicorn on the embedded default: SQLite, the offline engine, demo users."""
    ensure_venv("run")
    flask = BIN / "flask"
    _run(flask, "--app", "webapp", "init-db")
    _run(flask, "--app", "webapp", "seed-demo")
    port = os.environ.get("PORT", "8000")
    print(f"Serving on http://127.0.0.1:{port}/ (users demo and alex, password demo)")
    # The Procfile's web line, bound to this machine only.
    os.execv(
        BIN / "gunicorn",
        ["gunicorn", "-c", "gunicorn.conf.py", "-b", f"127.0.0.1:{port}", "webapp:create_app()"],
    )


def test(extra: list[str]) -> None:
    """Lint, type-check and run every test, browser tests included.

    With no arguments the tests run on parallel workers (pytest-xdist, one per CPU), except
    those marked `machine`, which look at every process on the machine and so run alone
    afterwards. Arguments go to one plain pytest run instead (add `-n auto` for workers).
    Each run has a temporary folder of its own (`--basetemp`), removed when it passes: pytest's
    shared default keeps only the newest few, so two runs side by side would prune each other's
    databases mid-test.
    """
    ensure_venv("test")
    ensure_chromium()
    _run(BIN / "ruff", "check", ".")
    _run(BIN / "ruff", "format", "--check", ".")
    _run(BIN / "mypy")
    own = Path(tempfile.mkdtemp(prefix="finchat-pytest-"))
    pytest = (BIN / "python", "-m", "pytest")
    if extra:
        if not any(arg.startswith("--basetemp") for arg in extra):
            extra = [f"--basetemp={own / 'run'}", *extra]
        _run(*pytest, *extra)
        shutil.rmtree(own, ignore_errors=True)
        return
    failed: subprocess.CalledProcessError | None = None
    parallel = ("-n", "auto", "--dist", "loadgroup", "-m", "not machine")
    for name, selection in (("parallel", parallel), ("machine", ("-m", "machine"))):
        try:
            _run(*pytest, f"--basetemp={own / name}", *selection)
        except subprocess.CalledProcessError as exc:  # report both runs' failures, then stop
            failed = failed or exc
    if failed is not None:
        raise failed
    shutil.rmtree(own, ignore_errors=True)


def main(argv: list[str]) -> None:
    commands = {"run": lambda: run(), "test": lambda: test(argv[2:])}
    if len(argv) < 2 or argv[1] not in commands:
        sys.exit("usage: python3 dev.py run | test [pytest args]")
    try:
        commands[argv[1]]()
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode)


if __name__ == "__main__":
    main(sys.argv)
