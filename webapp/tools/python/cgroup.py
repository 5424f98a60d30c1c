"""A cgroup v2 per run, where this process may make one with the memory and pids controllers.

Usable when this process's own cgroup v2 (its `0::` line in /proc/self/cgroup, under the
cgroup2 mount in /proc/self/mountinfo) already hands `memory` and `pids` to its children
(`cgroup.subtree_control`) and this process may create folders there: typically the root
cgroup of a host or VM in pure cgroup v2 mode, or a delegated cgroup set up that way. The app
never enables controllers itself (that would change the machine's accounting) and never moves
its own processes. Elsewhere (no cgroup2 mount, controllers held by cgroup v1, not writable)
`path_for` says None and the launcher's memory watchdog applies instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
from pathlib import Path

from .procs import signal_if

_NEEDED = {"memory", "pids"}


def _mount_point(mountinfo: Path) -> Path | None:
    with contextlib.suppress(OSError):
        for line in mountinfo.read_text().splitlines():
            fields = line.split()
            if " - " in line and line.split(" - ", 1)[1].split()[:1] == ["cgroup2"]:
                return Path(fields[4])
    return None


def find_parent(proc: Path = Path("/proc/self")) -> Path | None:
    """Return the cgroup under which runs may make theirs, or None where none is usable."""
    mount = _mount_point(proc / "mountinfo")
    if mount is None:
        return None
    own = None
    with contextlib.suppress(OSError):
        for line in (proc / "cgroup").read_text().splitlines():
            if line.startswith("0::"):
                own = line[3:].strip()
    if own is None:
        return None
    parent = mount / own.lstrip("/")
    try:
        handed_down = set((parent / "cgroup.subtree_control").read_text().split())
    except OSError:
        return None
    if not _NEEDED.issubset(handed_down) or not os.access(parent, os.W_OK | os.X_OK):
        return None
    return parent


@functools.cache
def _parent() -> Path | None:
    return find_parent()


def path_for(name: str) -> Path | None:
    """Return where run `name`'s cgroup goes, None where runs get no cgroup."""
    parent = _parent()
    return None if parent is None else parent / name


def checked(path: object, name: str) -> Path | None:
    """Return a recorded cgroup path if it is run `name`'s under this process's parent."""
    parent = _parent()
    if not isinstance(path, str) or parent is None:
        return None
    return Path(path) if Path(path) == parent / name else None


def create(path: Path, memory_bytes: int, max_processes: int) -> bool:
    """Make the run's cgroup with its limits; False (and nothing left) if it cannot be made."""
    try:
        path.mkdir(mode=0o755)
    except OSError:
        return False
    try:
        (path / "memory.max").write_text(str(memory_bytes))
        swap = path / "memory.swap.max"
        if swap.exists():
            swap.write_text("0")
        (path / "memory.oom.group").write_text("1")  # one process over: the whole run goes
        (path / "pids.max").write_text(str(max_processes))
    except OSError:
        remove(path)
        return False
    return True


def oom_killed(path: Path) -> bool:
    """Tell whether the kernel killed anything in the cgroup for going past memory.max."""
    with contextlib.suppress(OSError, ValueError):
        for line in (path / "memory.events").read_text().splitlines():
            key, _, count = line.partition(" ")
            if key in ("oom_kill", "oom_group_kill") and int(count) > 0:
                return True
    return False


def _members(path: Path) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(pid) for pid in (path / "cgroup.procs").read_text().split()]
    return []


def _in(path: Path, pid: int) -> bool:
    """Tell whether `pid` is in the cgroup at `path` (its own `0::` line names it)."""
    mount = _mount_point(Path("/proc/self/mountinfo"))
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            if line.startswith("0::") and mount is not None:
                return mount / line[3:].strip().lstrip("/") == path
    return False


def kill(path: Path, rounds: int = 200) -> bool:
    """Kill every process in the cgroup until it is empty; False if some remain."""
    if not path.is_dir():
        return True
    with contextlib.suppress(OSError):
        (path / "cgroup.kill").write_text("1")
    for _ in range(rounds):
        members = _members(path)
        if not members:
            return True
        for pid in members:
            signal_if(pid, lambda p: _in(path, p), signal.SIGKILL)
        time.sleep(0.01)
    return not _members(path)


def remove(path: Path, wait_s: float = 2.0) -> bool:
    """Remove the (emptied) cgroup, waiting briefly for its last processes to be gone."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            path.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
