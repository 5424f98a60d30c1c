"""`execute_python`: run the model's code in a separate, limited process and collect the result.

What is contained (see `_launch.py` for how): the app's environment and secrets (the child
starts with an empty environment), memory (RLIMIT_AS), CPU and wall-clock time (RLIMIT_CPU and
a timeout that kills the whole process group), fork bombs (RLIMIT_NPROC), huge output (capped
and flagged), and file sizes (RLIMIT_FSIZE); the scratch folder is fresh for every run and
deleted after. As root (as here and in CI) the child also gets no network, a private view of
the file system that hides the project, /root, /home, /tmp and /run, and a throwaway uid whose
every process is killed at the end. Not contained: world-readable files elsewhere on the
machine stay readable, and without root there is no network or file-system isolation and a
process that leaves the process group can outlive the run until its CPU limit ends it.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from .._web_search import WebSearchProvider, default_provider
from ._launch import SETUP_FAILED, is_sandbox_uid, user_pids
from ._market import MarketData, default_market
from ._results import PythonResult, SandboxError
from ._service import DataService

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "_launch.py"
LIB_DIR = HERE / "sandbox_lib"
PROJECT_ROOT = HERE.parents[2]  # the folder holding the webapp package, its instance and data
MAX_CODE_CHARS = 100_000
MAX_PROCESSES = 32
SANDBOX_UIDS = range(40_000, 50_000)  # a throwaway uid per run; no account uses these
HIDDEN = ("/root", "/home", "/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run")


def _check(code: object, timeout_s: object, memory_mb: object, output_limit: object) -> str:
    if not isinstance(code, str):
        raise SandboxError("The code must be text.")
    if not code.strip():
        raise SandboxError("There is no code to run.")
    if len(code) > MAX_CODE_CHARS:
        raise SandboxError(f"The code is too long (at most {MAX_CODE_CHARS} characters).")
    if "\x00" in code:
        raise SandboxError("The code contains a NUL character.")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float):
        raise SandboxError("timeout_s must be a number of seconds.")
    if not 0.1 <= timeout_s <= 120:
        raise SandboxError("timeout_s must be between 0.1 and 120 seconds.")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or not 64 <= memory_mb <= 4096:
        raise SandboxError("memory_mb must be a whole number from 64 to 4096.")
    if isinstance(output_limit, bool) or not isinstance(output_limit, int) or output_limit < 1024:
        raise SandboxError("output_limit must be a whole number of at least 1024 bytes.")
    return code


class _Capture:
    """Read a pipe to its end, keeping the first `limit` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.data = bytearray()
        self.truncated = False
        self._stream = stream
        self._limit = limit
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with self._stream:
            # Keep draining past the limit so a chatty child is never blocked on a full pipe.
            # read1 returns what is there; under gevent the pipe is non-blocking and read1 is
            # its cooperative wait (a raw os.read would fail with EAGAIN).
            while chunk := self._stream.read1(65536):  # type: ignore[attr-defined]
                room = self._limit - len(self.data)
                if len(chunk) > room:
                    self.truncated = True
                self.data += chunk[: max(room, 0)]

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def _free_uid() -> int:
    """Pick a sandbox uid that no account has and no process runs as, so it can be reaped."""
    for _ in range(20):
        uid = SANDBOX_UIDS[secrets.randbelow(len(SANDBOX_UIDS))]
        try:
            pwd.getpwuid(uid)
            continue
        except KeyError:
            pass
        if is_sandbox_uid(uid) and not user_pids(uid):
            return uid
    raise SandboxError("No free sandbox user could be found; try again.")


def _kill(proc: subprocess.Popen[bytes], uid: int | None) -> None:
    """Kill the child's process group and, with a throwaway uid, every process it owns."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # Only a uid from _free_uid (unused before this run) is ever reaped; never root.
    if uid is not None and is_sandbox_uid(uid):
        for _ in range(100):
            pids = user_pids(uid)
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
    proc.wait()


def _error(
    proc: subprocess.Popen[bytes],
    service: DataService,
    timed_out: bool,
    timeout_s: float,
    stderr: str,
) -> str | None:
    if timed_out:
        return f"timed out after {timeout_s:g} s"
    if proc.returncode == SETUP_FAILED and not service.exited:
        tail = stderr.strip().splitlines()[-1:] or ["unknown reason"]
        return f"the sandbox could not be set up ({tail[0]})"
    if service.exited:
        return service.exit_error
    code = proc.returncode
    if code == 0:
        return None
    if code < 0:
        if -code == signal.SIGXCPU:
            return "CPU time limit reached"
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def _config(
    workdir: Path,
    uid: int | None,
    fds: tuple[int, int],
    memory_mb: int,
    timeout_s: float,
    hide: Sequence[str | Path],
) -> dict[str, object]:
    return {
        "code_path": str(workdir / "code.py"),
        "scratch": str(workdir / "scratch"),
        "uid": uid,
        "lib_dir": str(LIB_DIR),
        "requests_fd": fds[0],
        "replies_fd": fds[1],
        "memory_bytes": memory_mb * 1024 * 1024,
        "cpu_seconds": int(timeout_s) + 1,
        "file_bytes": 16 * 1024 * 1024,
        "scratch_bytes": 64 * 1024 * 1024,
        "max_processes": MAX_PROCESSES,
        "keep": sorted({sys.base_prefix, sys.prefix, sys.exec_prefix, str(LIB_DIR)}),
        "hide": [*HIDDEN, str(PROJECT_ROOT), *map(str, hide)],
    }


def _spawn(
    config: dict[str, object], scratch: Path, fds: tuple[int, int]
) -> subprocess.Popen[bytes]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(scratch)}
    return subprocess.Popen(
        [sys.executable, "-I", "-X", "utf8", str(LAUNCHER), json.dumps(config)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=scratch,
        env=env,  # nothing of the app's own environment, so none of its secrets
        start_new_session=True,
        pass_fds=fds,
    )


def run_python(
    code: str,
    *,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    output_limit: int = 64 * 1024,
    market: MarketData | None = None,
    search: WebSearchProvider | None = None,
    hide: Sequence[str | Path] = (),
) -> PythonResult:
    """Run `code` in a sandboxed Python process; `hide` adds folders it must not see."""
    _check(code, timeout_s, memory_mb, output_limit)
    service = DataService(market or default_market(), search or default_provider())
    uid = _free_uid() if os.geteuid() == 0 else None
    workdir = Path(tempfile.mkdtemp(prefix="python-sandbox-"))
    try:
        (workdir / "code.py").write_text(code, encoding="utf-8")
        (workdir / "scratch").mkdir(mode=0o700)
        requests_r, requests_w = os.pipe()
        replies_r, replies_w = os.pipe()
        child_fds = (requests_w, replies_r)
        config = _config(workdir, uid, child_fds, memory_mb, timeout_s, hide)
        try:
            proc = _spawn(config, workdir / "scratch", child_fds)
        except OSError:
            for fd in (requests_r, replies_w):
                os.close(fd)
            return PythonResult("", "", "the sandbox could not be started", False)
        finally:
            os.close(requests_w)
            os.close(replies_r)
        assert proc.stdout is not None and proc.stderr is not None  # both are PIPEs
        out, err = _Capture(proc.stdout, output_limit), _Capture(proc.stderr, output_limit)
        server = threading.Thread(target=service.serve, args=(requests_r, replies_w), daemon=True)
        server.start()
        try:
            proc.wait(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill(proc, uid)
        for thread in (out.thread, err.thread, server):
            thread.join(timeout=2.0)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    stderr = err.text()
    return PythonResult(
        stdout=out.text(),
        stderr=stderr,
        error=_error(proc, service, timed_out, timeout_s, stderr),
        truncated=out.truncated or err.truncated,
        finnhub=tuple(service.finnhub),
        articles=tuple(service.articles),
    )
