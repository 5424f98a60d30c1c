"""The sandboxed child's entry point: isolate, limit, drop privileges, then run the code.

`run_python` starts it as `python -I _launch.py CONFIG_JSON` with an empty environment, a
new session and two pipe fds for data requests. As root it first makes a private mount and
network namespace (no network at all, not even loopback), lays fresh tmpfs over the folders
the code must not see (the project, /root, /home, /tmp, /run, ... with the interpreter and
the helper library bound back read-only), mounts a size-limited tmpfs as the scratch folder,
and becomes a throwaway uid so that RLIMIT_NPROC applies and root-only files stay closed.
Any failure there ends the run with SETUP_FAILED: it never runs the code with less isolation
than it promised. Without root it can only set resource limits.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import importlib
import json
import linecache
import os
import resource
import sys
import traceback
import types
from collections.abc import Iterable, Mapping
from typing import Any

SETUP_FAILED = 125
# Sandbox uids are unprivileged and unused: never root, never a system or login account.
MIN_SANDBOX_UID = 10_000
MAX_SANDBOX_UID = 2**31 - 2
CODE_NAME = "<code>"

_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_RDONLY = 2, 4, 1
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_SET_NO_NEW_PRIVS = 38


def user_pids(uid: int) -> list[int]:
    """Return the live (not zombie) processes whose real uid is `uid`."""
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # it exited while we looked
        if fields.get("State", "").strip().startswith("Z"):
            continue
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            pids.append(int(entry.name))
    return pids


def _under(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


class _Mounts:
    """The few mount(2) calls the isolation needs, through libc."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)

    def _check(self, result: int, what: str) -> None:
        if result != 0:
            code = ctypes.get_errno()
            raise OSError(code, f"{what}: {os.strerror(code)}")

    def unshare(self, flags: int) -> None:
        self._check(self._libc.unshare(flags), "unshare")

    def mount(
        self, source: str | None, target: str, fstype: str | None, flags: int, data: str | None
    ) -> None:
        def enc(value: str | None) -> bytes | None:
            return None if value is None else value.encode()

        result = self._libc.mount(
            enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)
        )
        self._check(result, f"mount {target}")

    def no_new_privileges(self) -> None:
        self._check(self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl")


def _hide(m: _Mounts, folder: str, keep: Iterable[str]) -> None:
    """Lay an empty tmpfs over `folder`, binding the kept paths inside it back read-only."""
    inside = [path for path in keep if _under(path, folder)]
    # A kept path inside another kept one comes along with it (the bind is recursive).
    inside = [path for path in inside if not any(_under(path, other) for other in inside)]
    handles = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in inside]
    world_writable = os.stat(folder).st_mode & 0o002
    options = "size=16m,mode=1777" if world_writable else "size=1m,mode=0755"
    m.mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
    for path, handle in handles:
        os.makedirs(path, mode=0o755, exist_ok=True)
        # The O_PATH handle still names the original folder, now hidden under the tmpfs.
        m.mount(f"/proc/self/fd/{handle}", path, None, _MS_BIND | _MS_REC, None)
        os.close(handle)
        m.mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)


def _isolate(config: Mapping[str, Any]) -> None:
    m = _Mounts()
    m.unshare(_CLONE_NEWNS | _CLONE_NEWNET)
    m.mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    keep = sorted({os.path.realpath(path) for path in config["keep"]})
    hide = {os.path.realpath(path) for path in config["hide"] if os.path.isdir(path)}
    outermost = sorted(h for h in hide if not any(_under(h, other) for other in hide))
    for folder in outermost:
        if folder not in keep:
            _hide(m, folder, keep)
    scratch, uid = config["scratch"], config["uid"]
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    options = f"size={config['scratch_bytes']},mode=0700,uid={uid},gid={uid}"
    m.mount("tmpfs", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
    m.no_new_privileges()


def _limit(config: Mapping[str, Any]) -> None:
    def cap(kind: int, soft: int, hard: int | None = None) -> None:
        wanted = soft if hard is None else hard
        _, current = resource.getrlimit(kind)
        if current != resource.RLIM_INFINITY:
            wanted = min(wanted, current)  # without root a hard limit can only come down
        resource.setrlimit(kind, (min(soft, wanted), wanted))

    cap(resource.RLIMIT_AS, config["memory_bytes"])
    cap(resource.RLIMIT_CPU, config["cpu_seconds"], config["cpu_seconds"] + 1)
    cap(resource.RLIMIT_FSIZE, config["file_bytes"])
    cap(resource.RLIMIT_NOFILE, 256)
    cap(resource.RLIMIT_CORE, 0)
    uid = config["uid"]
    # A fresh uid owns no process yet; without one, the user's own processes count too.
    base = 0 if uid is not None else len(user_pids(os.getuid()))
    cap(resource.RLIMIT_NPROC, base + config["max_processes"])


def is_sandbox_uid(uid: object) -> bool:
    """Tell whether `uid` is in the range a sandbox may run as (and so may be reaped)."""
    return isinstance(uid, int) and MIN_SANDBOX_UID <= uid <= MAX_SANDBOX_UID


def _drop_privileges(uid: int) -> None:
    if not is_sandbox_uid(uid):
        raise PermissionError("refusing to run the code as a privileged or invalid uid")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # (uid_t)-1 means "leave unchanged" to setresuid: make sure root is really gone.
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise PermissionError("could not drop privileges")


def _error_line(exc: BaseException, memory_mb: int) -> str:
    if isinstance(exc, MemoryError):
        return f"memory limit reached ({memory_mb} MB)"
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    lineno = exc.lineno if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == CODE_NAME:
            lineno = frame.lineno
    if isinstance(exc, BlockingIOError):
        last += " - the process limit was reached"
    return f"{last} (line {lineno})" if lineno else last


def _print_traceback(exc: BaseException, lib_dir: str) -> None:
    report = traceback.TracebackException.from_exception(exc)
    # Leave out the launcher's and the helper library's frames: the author wrote only <code>.
    report.stack = traceback.StackSummary.from_list(
        [
            frame
            for frame in report.stack
            if frame.filename != __file__ and not frame.filename.startswith(lib_dir)
        ]
    )
    sys.stderr.write("".join(report.format()))


def _run(code: str, memory_mb: int, lib_dir: str) -> str | None:
    """Run `code` as __main__ and return its error line, or None when it ran to the end."""
    linecache.cache[CODE_NAME] = (len(code), None, code.splitlines(True), CODE_NAME)
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = module
    try:
        exec(compile(code, CODE_NAME, "exec"), module.__dict__)
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            return None
        return f"exited with status {exc.code}"
    except BaseException as exc:  # every failure becomes the run's error line
        with contextlib.suppress(Exception):  # the error line still says what failed
            _print_traceback(exc, lib_dir)
        return _error_line(exc, memory_mb)
    return None


def main(argv: list[str]) -> None:
    """Set up the sandbox from argv[1] (JSON) and run the code; never returns."""
    config = json.loads(argv[1])
    with open(config["code_path"], encoding="utf-8") as f:
        code = f.read()
    try:
        if config["uid"] is not None:
            _isolate(config)
        _limit(config)
        if config["uid"] is not None:
            _drop_privileges(config["uid"])
        os.chdir(config["scratch"])
        sys.path.insert(0, config["lib_dir"])
        rpc = importlib.import_module("_sandbox_rpc")
        rpc.connect(config["requests_fd"], config["replies_fd"])
    except Exception as exc:  # reported to the parent, which fails closed
        sys.stderr.write(f"sandbox setup failed: {exc}\n")
        sys.stderr.flush()
        os._exit(SETUP_FAILED)
    error = _run(code, config["memory_bytes"] // (1024 * 1024), config["lib_dir"])
    rpc.report_exit(error)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):  # the code may have closed or replaced them
            if stream is not None:
                stream.flush()
    os._exit(0 if error is None else 1)


if __name__ == "__main__":
    main(sys.argv)
