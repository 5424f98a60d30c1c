"""What the service benchmarks start and stop: gunicorn as the Procfile says, and the fake Claude.

Everything started here is a child of the benchmark process, dies with it (PR_SET_PDEATHSIG)
and is stopped by pid. `cleanup` runs each run's undo steps (stop a server, drop a database)
however the run ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import re
import runpy
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import _client as client
from _procfs import children, start_time

from webapp.settings import SETTINGS

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
BIN = Path(os.path.abspath(sys.executable)).parent  # the venv: never resolve its symlinks
FLOOR_APP = "_floor:create_app()"
SECRET_KEY = "bench-service-" + secrets.token_hex(8)
# Settings of the environment that would change what the app does (the app's settings table,
# and gunicorn's own); each run sets its own.
APP_SETTINGS = (
    *(setting.name for setting in SETTINGS if setting.where == "app"),
    "PORT",
    "GUNICORN_CMD_ARGS",
)
SHOWN_SETTINGS = (
    "worker_class",
    "workers",
    "threads",
    "worker_connections",
    "timeout",
    "keepalive",
)
ERROR_MARKERS = ("[ERROR]", "[CRITICAL]", "WORKER TIMEOUT")
_LOG_PREFIX = re.compile(r"^\[[^]]*\] \[\d+\] ")  # gunicorn's "[time] [pid] "


class BenchError(Exception):
    """A step of a benchmark failed; the message says which and why."""


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: SIGTERM it when the benchmark process goes.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def spawn(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start a child in its own session, output to `log`, dying with this process."""
    assert threading.current_thread() is threading.main_thread(), "PDEATHSIG follows the thread"
    with log.open("ab") as out:
        return subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )


def child_env(settings: dict[str, str]) -> dict[str, str]:
    """Return this environment without the app's settings, then `settings` on top."""
    env = {k: v for k, v in os.environ.items() if k not in APP_SETTINGS}
    return {**env, "SECRET_KEY": SECRET_KEY, "PYTHONUNBUFFERED": "1", **settings}


# The Procfile's web line.


@dataclass(frozen=True, slots=True)
class WebCommand:
    """The Procfile's `web:` command, split: leading VAR=value settings, options, the app."""

    env: dict[str, str]
    options: list[str]
    app: str

    def argv(self, port: int, *, floor: bool = False, control: Path | None = None) -> list[str]:
        """Return the command bound to 127.0.0.1:`port`; the floor's swaps app and config."""
        options = [
            o.replace("${PORT}", str(port)).replace("$PORT", str(port)) for o in self.options
        ]
        app = self.app
        if floor:
            options = _without_config(options)
            options += ["-c", str(BENCH / "_floor_gunicorn.py"), "--pythonpath", str(BENCH)]
            app = FLOOR_APP
        if control is not None and _has_control_socket():
            # gunicorn 27 shares one control socket path per user unless told otherwise.
            options += ["--control-socket", str(control)]
        return [str(BIN / "gunicorn"), *options, "-b", f"127.0.0.1:{port}", app]

    def config_file(self) -> Path | None:
        """Return the config file gunicorn reads: `-c`'s, else ./gunicorn.conf.py if any."""
        for i, option in enumerate(self.options):
            value = None
            if option in ("-c", "--config") and i + 1 < len(self.options):
                value = self.options[i + 1]
            elif option.startswith("--config="):
                value = option.split("=", 1)[1]
            if value is not None:
                return None if value.startswith("python:") else ROOT / value
        default = ROOT / "gunicorn.conf.py"
        return default if default.exists() else None

    @property
    def summary(self) -> str:
        """The command, and the main settings its config file gives, for the report."""
        text = " ".join(["gunicorn", *self.options])
        config = self.config_file()
        if config is None:
            return text
        try:
            values = runpy.run_path(str(config))
        except Exception as exc:  # the report says so; the servers will fail with the reason
            return f"{text} ({config.name} does not load: {type(exc).__name__})"
        shown = [f"{k}={values[k]}" for k in SHOWN_SETTINGS if k in values]
        return f"{text} ({', '.join(shown)})" if shown else text


def _without_config(options: list[str]) -> list[str]:
    kept, skip = [], False
    for option in options:
        if skip:
            skip = False
        elif option in ("-c", "--config"):
            skip = True
        elif not option.startswith("--config="):
            kept.append(option)
    return kept


@functools.cache
def _has_control_socket() -> bool:
    try:
        done = subprocess.run(
            [str(BIN / "gunicorn"), "--help"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--control-socket" in done.stdout


def read_procfile(path: Path = ROOT / "Procfile") -> WebCommand:
    """Parse the `web:` line: drop any bind (each run binds 127.0.0.1 and a free port)."""
    line = next(
        (
            raw.split(":", 1)[1].strip()
            for raw in path.read_text().splitlines()
            if raw.startswith("web:")
        ),
        None,
    )
    if not line:
        raise BenchError(f"{path} has no web: line")
    tokens = shlex.split(line)
    env: dict[str, str] = {}
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        name, _, value = tokens.pop(0).partition("=")
        env[name] = value
    if tokens and tokens[0] == "exec":
        tokens.pop(0)
    if (
        tokens[:1]
        and Path(tokens[0]).name.startswith("python")
        and tokens[1:3] == ["-m", "gunicorn"]
    ):
        tokens = tokens[2:]
    if not tokens or Path(tokens[0]).name != "gunicorn":
        raise BenchError(f"the web: line does not start gunicorn: {line}")
    tokens = tokens[1:]
    if not tokens or tokens[-1].startswith("-"):
        raise BenchError(f"the web: line names no app last: {line}")
    app, options, skip = tokens[-1], [], False
    for token in tokens[:-1]:
        if skip:
            skip = False
        elif token in ("-b", "--bind"):
            skip = True
        elif not token.startswith(("--bind=", "-b")):
            options.append(token)
    return WebCommand(env, options, app)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True, slots=True)
class Context:
    """What every part needs: the Procfile's command, where logs go, the PostgreSQL server."""

    web: WebCommand
    logs: Path
    admin_url: str
    db: str  # "postgres" or "sqlite", for parts (a) and (b)


# gunicorn, as the Procfile starts it.


@dataclass
class Server:
    """One gunicorn master (a "host") and its workers."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    known_workers: set[int] = field(default_factory=set)
    _started: dict[int, int | None] = field(default_factory=dict)  # worker pid -> start time

    @classmethod
    def start(
        cls, name: str, web: WebCommand, settings: dict[str, str], logs: Path, floor: bool = False
    ) -> Server:
        port = free_port()
        argv = web.argv(port, floor=floor, control=logs / f"{name}-{port}.ctl")
        log = logs / f"{name}-{port}.log"
        env = {**web.env, **settings, "PORT": str(port)}
        config = web.config_file()
        if floor and config is not None:
            env["BENCH_GUNICORN_CONFIG"] = str(config)
        return cls(name, port, spawn(argv, child_env(env), log), log)

    async def wait_ready(self, timeout: float = 90.0) -> None:
        """Wait until GET /login answers 200 and the number of workers has settled."""
        deadline = time.monotonic() + timeout
        last, seen, steady_since = "no answer yet", -1, time.monotonic()
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BenchError(
                    f"{self.name}: gunicorn exited ({self.process.returncode}); "
                    f"log: {self.log_tail()}"
                )
            count = len(self.workers())
            if count != seen:
                seen, steady_since = count, time.monotonic()
            try:
                response = await client.request(self.port, "GET", "/login", timeout=5.0)
                last = f"HTTP {response.status}"
                if response.status == 200 and count and time.monotonic() - steady_since > 1.5:
                    return
            except client.HttpError as exc:
                last = str(exc)
            await asyncio.sleep(0.2)
        raise BenchError(
            f"{self.name}: not ready within {timeout:g} s ({last}); log: {self.log_tail()}"
        )

    def workers(self) -> list[int]:
        """Return the master's live children (its workers), remembering each one seen."""
        found = children(self.process.pid)
        for pid in found:
            if pid not in self._started:
                self._started[pid] = start_time(pid)
        self.known_workers.update(found)
        return found

    def log_tail(self, lines: int = 6) -> str:
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return "(no log)"
        return " | ".join(text[-lines:]) or "(empty)"

    def log_errors(self) -> Counter[str]:
        """Count the log's problems: each traceback by its last line, each error line by text."""
        try:
            lines = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return Counter()
        found: Counter[str] = Counter()
        in_traceback = False
        for line in lines:
            if line.startswith("Traceback"):
                in_traceback = True
            elif in_traceback and line and not line[0].isspace():
                in_traceback = False
                found[line.strip()[:160]] += 1
            elif any(m in line for m in ERROR_MARKERS):
                found[_LOG_PREFIX.sub("", line).strip()[:160]] += 1
        return found

    def stop(self, grace: float = 10.0) -> None:
        """Shut gunicorn down at once (SIGINT), then SIGKILL whatever of it is left, and wait."""
        self.workers()
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.process.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(5)
        # A worker outlives a killed master until it notices: end it before its database goes.
        left = [
            pid
            for pid, started in self._started.items()
            if started is not None and start_time(pid) == started
        ]
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while left and time.monotonic() < deadline:
            left = [pid for pid in left if start_time(pid) == self._started[pid]]
            time.sleep(0.05)


def log_note(problems: Counter[str]) -> str:
    """Summarise a server log's problems for a table's notes; '' when there were none."""
    if not problems:
        return ""
    text, count = problems.most_common(1)[0]
    return f"server log: {sum(problems.values())} problems, {count}x {text[:100]}"


def logs_have_problems(logs: Path) -> bool:
    """Tell whether any server log in `logs` has a traceback or an error line."""
    for path in logs.glob("*.log"):
        if path.name.startswith("fake-claude"):
            continue
        with contextlib.suppress(OSError):
            text = path.read_text(errors="replace")
            if "Traceback" in text or any(m in text for m in ERROR_MARKERS):
                return True
    return False


# The fake Claude (benchmarks/_fake_claude.py), in its own process.


@dataclass
class FakeClaude:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def start(cls, logs: Path, *args: str) -> FakeClaude:
        log = logs / f"fake-claude-{secrets.token_hex(3)}.log"
        process = spawn([sys.executable, str(BENCH / "_fake_claude.py"), *args], child_env({}), log)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace") if log.exists() else ""
            for line in text.splitlines():
                if line.startswith("PORT "):
                    return cls(process, int(line.split()[1]), log)
            if process.poll() is not None:
                break
            time.sleep(0.05)
        fake = cls(process, 0, log)
        fake.stop()
        raise BenchError(f"the fake Claude did not start: {log.read_text(errors='replace')[-300:]}")

    async def stats(self) -> dict[str, int]:
        response = await client.request(self.port, "GET", "/stats", timeout=5.0)
        data = response.json()
        return {str(k): int(v) for k, v in data.items()}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@contextlib.contextmanager
def cleanup() -> Iterator[Callable[[Callable[[], None]], None]]:
    """Collect undo steps; run them last-first when the block ends, reporting their failures."""
    steps: list[Callable[[], None]] = []
    try:
        yield steps.append
    finally:
        for step in reversed(steps):
            try:
                step()
            except Exception as exc:  # one failed step must not leave the others undone
                print(f"  cleanup: {type(exc).__name__}: {exc}", file=sys.stderr)
