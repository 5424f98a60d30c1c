"""`execute_python`: run the model's code in a separate, limited process tree; collect the result.

What is contained (see `launch.py` and `isolate.py` for how): the app's environment and
secrets (the code starts with an empty environment), CPU and wall-clock time (RLIMIT_CPU and
a timeout), fork bombs (RLIMIT_NPROC), huge output (capped and flagged), file sizes
(RLIMIT_FSIZE), and memory, with one limit (`memory_mb`) for the call's whole process tree
however many processes it forks. Which mechanism enforces it:

- a cgroup v2 per run (`cgroups.py`) where this process's own cgroup hands the memory and
  pids controllers to children it may create: the kernel enforces memory.max and pids.max
  and kills the whole tree past the limit (memory.oom.group);
- elsewhere a watchdog: the launcher's supervisor sums the tree's memory every 20 ms
  (resident size; past the limit the proportional size, so pages forked processes share count
  once; and shared memory once, whole, mapped or not: memfds, shared mappings, SysV segments,
  and as root the files in the run's own tmpfs) and kills the tree past the limit. On the
  development and CI machines cgroup v2 has no memory controller (cgroup v1 holds it), so the
  watchdog applies there.

As root the run also has its own IPC namespace: its SysV objects end with it, their total is
held to the limit, and the host's are out of its sight. Where none is made, what its
throwaway uid made is removed at the end of the call and by the start-up sweep.

Each process also keeps RLIMIT_AS at `memory_mb`, so one process alone fails with MemoryError.
The tree dies when the call ends: normally, timed out, cancelled through `cancel`, or left by
an exception (a killed greenlet included); and when the app's process dies, SIGKILL included,
because the supervisor then reads end-of-file on the control socket. As root the tree runs in
its own pid namespace, so nothing in it outlives its init, setsid or not; without root the
supervisor is a child subreaper and kills its descendants. What a dead process's runs left
(processes of its uids, its folders, its cgroups) is removed by `sweep_leftovers`, which each
worker runs as it starts (`claim.py`). The scratch folder is fresh for every run and deleted
after.

As root (as here and in CI) the code also gets no network, a private view of the file system
that hides the project, /root, /home, /tmp and /run, a /proc that shows only its own
processes, and a throwaway uid whose every process is killed at the end. Not contained:
world-readable files elsewhere on the machine stay readable; without root there is no network
or file-system isolation, and the code, running as the app's user, could kill its supervisor.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Literal

from ..web_search import WebSearchProvider, default_provider
from . import cgroup as cgroups
from .claim import MAX_TIMEOUT_S, Claim, claim, release
from .launch import SETUP_FAILED
from .market import MarketData, default_market
from .procs import kill_uid
from .results import PythonResult, SandboxError
from .service import DataService
from .sysvipc import remove_uid_ipc

HERE = Path(__file__).resolve().parent
LAUNCHER = HERE / "launch.py"
LIB_DIR = HERE / "sandbox_lib"
PROJECT_ROOT = HERE.parents[2]  # the folder holding the webapp package, its instance and data
MAX_CODE_CHARS = 100_000
MAX_PROCESSES = 32
CANCEL_CHECK_S = 0.1
SUPERVISOR_GRACE_S = 2.0  # for the supervisor to end the tree itself before it is killed
SANDBOX_UIDS = range(40_000, 50_000)  # a throwaway uid per run; no account uses these
# What the code never sees: homes, temporary and run-time folders, and every folder that holds
# services' data, logs or other software (/etc stays: the loader and Python read it).
HIDDEN = (
    "/root",
    "/home",
    "/tmp",
    "/var",
    "/dev/shm",
    "/run",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/boot",
)


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
    if not 0.1 <= timeout_s <= MAX_TIMEOUT_S:
        raise SandboxError(f"timeout_s must be between 0.1 and {MAX_TIMEOUT_S} seconds.")
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


def _privileged() -> bool:
    """Tell whether runs get namespaces and a throwaway uid (only root can give them)."""
    return os.geteuid() == 0


Ended = Literal["exited", "timed out", "cancelled"]


def _wait(proc: subprocess.Popen[bytes], timeout_s: float, cancel: threading.Event | None) -> Ended:
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timed out"
        try:
            proc.wait(timeout=left if cancel is None else min(left, CANCEL_CHECK_S))
            return "exited"
        except subprocess.TimeoutExpired:
            if cancel is not None and cancel.is_set():
                return "cancelled"


def _kill(
    proc: subprocess.Popen[bytes], control: socket.socket, made: Claim, cgroup: Path | None
) -> None:
    """End the run: its supervisor ends the tree; then its group, uid and cgroup are killed."""
    # End-of-file on the control socket: the supervisor, which knows the whole tree (setsid
    # descendants included), kills it and exits.
    control.close()
    if proc.returncode is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=SUPERVISOR_GRACE_S)
    if proc.returncode is None:
        # Not yet collected, so its pid (the group's id) is still the launcher's own.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    if made.uid is not None:  # a uid this run claimed: no one else's processes run as it
        kill_uid(made.uid)
        # And no one else's IPC objects are its: what the run made outside its own IPC
        # namespace (where the kernel gave none, or the supervisor died first) goes too.
        with contextlib.suppress(OSError):
            remove_uid_ipc(made.uid)
    if cgroup is not None:
        cgroups.kill(cgroup)
    proc.wait()


def _report(control: socket.socket) -> bool:
    """Read the supervisor's last word; say whether the tree went past the memory limit."""
    control.settimeout(2.0)
    data = b""
    with contextlib.suppress(OSError):
        while not data.endswith(b"\n") and (chunk := control.recv(4096)):
            data += chunk
    try:
        report = json.loads(data or b"{}")
    except ValueError:
        return False
    return isinstance(report, dict) and report.get("memory_exceeded") is True


def _error(
    proc: subprocess.Popen[bytes],
    service: DataService,
    ended: Ended,
    timeout_s: float,
    stderr: str,
    memory_mb: int | None,
) -> str | None:
    if ended == "timed out":
        return f"timed out after {timeout_s:g} s"
    if ended == "cancelled":
        return "cancelled"
    if memory_mb is not None:
        return f"memory limit reached ({memory_mb} MB, all processes together)"
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
    made: Claim,
    cgroup: Path | None,
    fds: tuple[int, int, int],
    memory_mb: int,
    timeout_s: float,
    hide: Sequence[str | Path],
) -> dict[str, object]:
    memory_bytes = memory_mb * 1024 * 1024
    return {
        "workdir": str(made.folder),
        "code_path": str(made.folder / "code.py"),
        "scratch": str(made.folder / "scratch"),
        "uid": made.uid,
        # Root makes the run its own IPC namespace (isolate.limit_ipc; tree_watch.RunIpc).
        "ipc_namespace": made.uid is not None,
        "lib_dir": str(LIB_DIR),
        "requests_fd": fds[0],
        "replies_fd": fds[1],
        "control_fd": fds[2],
        "cgroup": None if cgroup is None else str(cgroup),
        # Without a cgroup the supervisor holds the whole tree to the limit itself.
        "watch_memory_bytes": memory_bytes if cgroup is None else None,
        "memory_bytes": memory_bytes,
        "cpu_seconds": int(timeout_s) + 1,
        "file_bytes": 16 * 1024 * 1024,
        "scratch_bytes": 64 * 1024 * 1024,
        "max_processes": MAX_PROCESSES,
        "keep": sorted({sys.base_prefix, sys.prefix, sys.exec_prefix, str(LIB_DIR)}),
        "hide": [*HIDDEN, str(PROJECT_ROOT), *map(str, hide)],
    }


def _spawn(
    config: dict[str, object], scratch: Path, fds: tuple[int, ...]
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


def _claim() -> Claim:
    try:
        return claim(SANDBOX_UIDS if _privileged() else None)
    except LookupError:
        raise SandboxError("No free sandbox user could be found; try again.") from None


def run_python(
    code: str,
    *,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    output_limit: int = 64 * 1024,
    market: MarketData | None = None,
    search: WebSearchProvider | None = None,
    hide: Sequence[str | Path] = (),
    cancel: threading.Event | None = None,
) -> PythonResult:
    """Run `code` in a sandboxed Python process tree; `hide` adds folders it must not see.

    Setting `cancel` ends the run at once (its error says "cancelled").
    """
    _check(code, timeout_s, memory_mb, output_limit)
    service = DataService(market or default_market(), search or default_provider())
    made = _claim()
    try:
        (made.folder / "code.py").write_text(code, encoding="utf-8")
        (made.folder / "scratch").mkdir(mode=0o700)
        cgroup = made.cgroup
        if cgroup is not None and not cgroups.create(
            cgroup,
            memory_mb * 1024 * 1024,
            MAX_PROCESSES + 1,  # + the sandbox's init
        ):
            cgroup = None
        return _execute(made, cgroup, service, timeout_s, memory_mb, output_limit, hide, cancel)
    finally:
        release(made)


def _execute(
    made: Claim,
    cgroup: Path | None,
    service: DataService,
    timeout_s: float,
    memory_mb: int,
    output_limit: int,
    hide: Sequence[str | Path],
    cancel: threading.Event | None,
) -> PythonResult:
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    # The supervisor's end reads end-of-file when this process is gone, however it ends.
    control, theirs = socket.socketpair()
    child_fds = (requests_w, replies_r, theirs.fileno())
    config = _config(made, cgroup, child_fds, memory_mb, timeout_s, hide)
    try:
        proc = _spawn(config, made.folder / "scratch", child_fds)
    except OSError:
        for fd in (requests_r, replies_w):
            os.close(fd)
        control.close()
        return PythonResult("", "", "the sandbox could not be started", False)
    finally:
        os.close(requests_w)
        os.close(replies_r)
        theirs.close()
    assert proc.stdout is not None and proc.stderr is not None  # both are PIPEs
    out, err = _Capture(proc.stdout, output_limit), _Capture(proc.stderr, output_limit)
    server = threading.Thread(target=service.serve, args=(requests_r, replies_w), daemon=True)
    server.start()
    try:
        ended = _wait(proc, timeout_s, cancel)
        exceeded = ended == "exited" and _report(control)
    finally:
        # Whatever ended the wait (an exception or a killed greenlet too), the run ends here.
        _kill(proc, control, made, cgroup)
    exceeded = exceeded or (cgroup is not None and cgroups.oom_killed(cgroup))
    for thread in (out.thread, err.thread, server):
        thread.join(timeout=2.0)
    stderr = err.text()
    return PythonResult(
        stdout=out.text(),
        stderr=stderr,
        error=_error(proc, service, ended, timeout_s, stderr, memory_mb if exceeded else None),
        truncated=out.truncated or err.truncated,
        finnhub=tuple(service.finnhub),
        articles=tuple(service.articles),
    )
