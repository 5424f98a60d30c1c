"""A sandbox's processes: find them, and signal only those proven to be its.

Proof of membership is one of: a throwaway uid that only this run has (`user_pids`), or being
a descendant of a live process (`kill_descendants`, checked link by link). Every signal goes
through a pidfd opened *before* the check, so a pid reused between the check and the signal
cannot be hit. What the processes use is measured in `tree_memory.py`, and the SysV IPC
objects they make are in `sysvipc.py`. Standard library only: the launcher imports this
module as a plain script.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import select
import signal
import time
from collections.abc import Callable

# Sandbox uids are unprivileged and unused: never root, never a system or login account.
MIN_SANDBOX_UID = 10_000
MAX_SANDBOX_UID = 2**31 - 2


def is_sandbox_uid(uid: object) -> bool:
    """Tell whether `uid` is in the range a sandbox may run as (and so may be reaped)."""
    return (
        isinstance(uid, int)
        and not isinstance(uid, bool)
        and (MIN_SANDBOX_UID <= uid <= MAX_SANDBOX_UID)
    )


def reapable_uid(uid: object) -> bool:
    """Tell whether every process of `uid` may be killed: a sandbox uid that no account has."""
    if not is_sandbox_uid(uid):
        return False
    assert isinstance(uid, int)
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return True
    return False


def _status(pid: int) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            return dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        return None  # it exited while we looked


def _live_uid(fields: dict[str, str] | None) -> int | None:
    """Return the real uid of a live (not zombie) process from its status fields."""
    if fields is None or fields.get("State", "").strip().startswith("Z"):
        return None
    real = fields.get("Uid", "").split()[:1]
    return int(real[0]) if real and real[0].isdigit() else None


def real_uid(pid: int) -> int | None:
    """Return the real uid of live process `pid`, None if it is gone or a zombie."""
    return _live_uid(_status(pid))


def user_pids(uid: int) -> list[int]:
    """Return the live (not zombie) processes whose real uid is `uid`."""
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _live_uid(_status(int(entry.name))) == uid:
            pids.append(int(entry.name))
    return pids


def _stat(pid: int) -> list[str] | None:
    """Return /proc/PID/stat's fields after the command name (state is [0], ppid [1])."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", errors="replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def parent_of(pid: int) -> int | None:
    """Return the parent pid of `pid`, None if it is gone."""
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def start_time(pid: int) -> int | None:
    """Return when `pid` started (clock ticks after boot): with the pid, it names one process."""
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def children(pid: int) -> list[int]:
    """Return the children of `pid`, whichever of its threads forked them."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"{task.path}/children") as f:
                found += [int(child) for child in f.read().split()]
    return found


def descendants(pid: int) -> list[int]:
    """Return every process below `pid` in the process tree, parents before children."""
    found: list[int] = []
    pending = children(pid)
    while pending:
        child = pending.pop()
        found.append(child)
        pending += children(child)
    return found


def _pidfd(pid: int) -> int | None:
    """Open a pidfd on `pid`; None where the kernel has none (then signals go by pid)."""
    try:
        return os.pidfd_open(pid)
    except OSError as exc:
        if exc.errno == errno.ENOSYS:
            return None
        raise


def signal_if(pid: int, belongs: Callable[[int], bool], sig: int = signal.SIGKILL) -> bool:
    """Send `sig` to `pid` only if `belongs(pid)` holds for that very process; say if sent."""
    try:
        fd = _pidfd(pid)
    except OSError:
        return False  # gone already
    try:
        # Checked after the pidfd is open: if the pid was reused since, the pidfd names the
        # old process and the signal fails instead of reaching the new one.
        if not belongs(pid):
            return False
        if fd is None:
            os.kill(pid, sig)
        else:
            signal.pidfd_send_signal(fd, sig)
        return True
    except ProcessLookupError:
        return False
    finally:
        if fd is not None:
            os.close(fd)


def kill_uid(uid: int, *, rounds: int = 200) -> bool:
    """Kill every process of sandbox uid `uid` until none is left; False if some remain."""
    if not reapable_uid(uid):
        raise PermissionError(f"refusing to kill the processes of uid {uid}")
    for _ in range(rounds):
        pids = user_pids(uid)
        if not pids:
            return True
        for pid in pids:
            signal_if(pid, lambda p: real_uid(p) == uid)
        time.sleep(0.01)
    return not user_pids(uid)


def _exited(fd: int | None) -> bool:
    if fd is None:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def reap_children() -> None:
    """Collect this process's exited children (it adopts the tree's orphans)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def kill_descendants(*, reap: Callable[[], None] = reap_children, rounds: int = 200) -> bool:
    """Kill every descendant of this process until none is left; False if some remain.

    Each child is proven one link at a time from this (live) process: a pid listed as a child
    of a parent still alive, re-read after its pidfd is open, is that parent's child.
    """
    me = os.getpid()
    for _ in range(rounds):
        reap()
        found = False
        pending: list[tuple[int, int | None]] = [(me, None)]
        opened: list[int] = []
        try:
            while pending:
                parent, parent_fd = pending.pop()
                for child in children(parent):
                    try:
                        fd = _pidfd(child)
                    except OSError:
                        continue
                    if fd is not None:
                        opened.append(fd)
                    if parent_of(child) != parent or _exited(parent_fd):
                        continue  # not (or no longer provably) in this tree
                    if real_uid(child) is None:
                        continue  # a zombie: its parent collects it
                    found = True
                    with contextlib.suppress(ProcessLookupError):
                        if fd is None:
                            os.kill(child, signal.SIGKILL)
                        else:
                            signal.pidfd_send_signal(fd, signal.SIGKILL)
                    pending.append((child, fd))
        finally:
            for fd in opened:
                os.close(fd)
        if not found:
            return True
        time.sleep(0.01)
    reap()
    return False
