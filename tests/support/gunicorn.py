"""Run the app as production does: the Procfile's `web:` command, gunicorn and its workers.

Each server is its own process group on a free loopback port, so a test can stop it
gracefully, reload it, or kill it whole (master and workers) as a crashed host would be.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def procfile_command() -> list[str]:
    """Return the Procfile's `web:` command, its gunicorn taken from this interpreter's venv."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            command = shlex.split(line.removeprefix("web:"))
            assert command[0] == "gunicorn", line
            return [str(BIN / "gunicorn"), *command[1:]]
    raise AssertionError("the Procfile has no web: line")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """One running gunicorn: its master process and where it listens."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def workers(self) -> list[int]:
        """Return the worker pids (the master's children)."""
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        with suppress(OSError):
            return [int(pid) for pid in path.read_text().split()]
        return []

    def kill(self) -> None:
        """Kill master and workers at once, as a lost host."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        """Stop gracefully, then forcibly if it will not go."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(40)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def gunicorn(
    env: Mapping[str, str], log_dir: Path, *, name: str = "web", ready_timeout: float = 60.0
) -> Iterator[Server]:
    """Start the Procfile's web command with `env` added; stop it when the block ends."""
    port = free_port()
    log = log_dir / f"{name}-{port}.log"
    command = [*procfile_command(), "-b", f"127.0.0.1:{port}"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(process, f"http://127.0.0.1:{port}", log)
    try:
        _wait_ready(server, ready_timeout)
        yield server
    finally:
        server.stop()


def _wait_ready(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"gunicorn exited:\n{server.log_text()}")
        with suppress(httpx.HTTPError):
            if httpx.get(f"{server.url}/login", timeout=2).status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError(f"gunicorn did not answer in time:\n{server.log_text()}")
