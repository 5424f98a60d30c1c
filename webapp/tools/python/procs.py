"""A sandbox's processes: find them, measure them, and signal only those proven to be its.

Proof of membership is one of: a throwaway uid that only this run has (`user_pids`), or being
a descendant of a live process (`kill_descendants`, checked link by link). Every signal goes
through a pidfd opened *before* the check, so a pid reused between the check and the signal
cannot be hit. Standard library only: the launcher imports this module as a plain script.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import pwd
import select
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

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


def _status_kb(pid: int, fields: tuple[str, ...]) -> dict[str, int]:
    """Return the named `kB` fields of /proc/PID/status, in bytes."""
    return _kb_fields(f"/proc/{pid}/status", fields)


def _kb_fields(path: str, fields: tuple[str, ...]) -> dict[str, int]:
    """Return the named `kB` fields ("Name:   123 kB" lines) of a /proc file, in bytes."""
    found: dict[str, int] = {}
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return found
    for name in fields:
        # Read by search, not line by line: the watchdog does this for every process 50 times
        # a second.
        at = data.find(b"\n" + name.encode() + b":")
        if at >= 0:
            with contextlib.suppress(ValueError, IndexError):
                found[name] = int(data[at + len(name) + 2 :].split(None, 1)[0]) * 1024
    return found


def _tmpfs_mounts(pid: int) -> dict[str, str]:
    """Return the tmpfs mounts `pid` sees: mount point -> device ("major:minor")."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError), open(f"/proc/{pid}/mountinfo") as f:
        for line in f:
            mount, _, rest = line.partition(" - ")
            fields = mount.split()
            if rest.split()[:1] == ["tmpfs"] and len(fields) > 4:
                found[fields[4]] = fields[2]
    return found


def _filled(pid: int, points: Iterable[str], tmpfs: dict[str, str]) -> tuple[int, set[str]]:
    """Return the bytes stored in the tmpfs mounted at `points` as `pid` sees them, and their
    devices (a point that is not a tmpfs there counts nothing)."""
    used, devices = 0, set()
    for point in points:
        device = tmpfs.get(point)
        if device is None or device in devices:
            continue
        with contextlib.suppress(OSError):
            info = os.statvfs(f"/proc/{pid}/root{point}")
            used += (info.f_blocks - info.f_bfree) * info.f_frsize
            devices.add(device)
    return used, devices


_SHARED_NAMES = ("/memfd:", "/dev/zero")  # a memfd, or shared anonymous memory


def _shmem_objects(pid: int, objects: dict[tuple[int, int], int], tmpfs: set[str] | None) -> None:
    """Record the shared-memory files `pid` holds: memfds by descriptor, and (given the
    `tmpfs` devices whose files count one by one: reading mappings' files needs root) every
    memory-backed file it maps (memfd, tmpfs, shared anonymous memory), by (device, inode).

    Their pages live as long as a descriptor or a mapping does, whether or not any process
    has them resident, so they are counted whole (`st_blocks`), once however many hold them.
    SysV segments are left out: `ipc_objects` lists them.
    """
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                path = f"/proc/{pid}/fd/{fd}"
                if os.readlink(path).startswith("/memfd:"):
                    info = os.stat(path)
                    objects[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    if tmpfs is None:
        return
    try:
        with open(f"/proc/{pid}/maps", "rb") as f:
            data = f.read()
    except OSError:
        return
    # Most processes map no such file: a search of the whole text says so at once.
    markers = [name.encode() for name in _SHARED_NAMES] + [f" {d} ".encode() for d in tmpfs]
    if not any(marker in data for marker in markers):
        return
    for line in data.decode("utf-8", "replace").splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or fields[4] == "0":
            continue  # plain anonymous (private) memory
        if fields[3] not in tmpfs and not fields[5].startswith(_SHARED_NAMES):
            continue
        with contextlib.suppress(OSError):
            info = os.stat(f"/proc/{pid}/map_files/{fields[0]}")
            objects[(info.st_dev, info.st_ino)] = info.st_blocks * 512


def memory_used(pids: list[int], limit: int, segments: int = 0, filled: Iterable[str] = ()) -> int:
    """Return what `pids` use together in bytes, with `segments` (their SysV shared memory).

    Each process's own memory is its resident size less the shared memory in it; the shared
    memory (memfds, tmpfs files and shared mappings they hold, and SysV segments) is counted
    once, whole, whoever maps it, resident or not: a file written and never mapped, or a
    segment filled and detached, holds its pages all the same. The tmpfs mounted at `filled`
    (the run's own: its scratch folder and the empty ones over hidden folders) count whole,
    every file stored there, held or not. Forked processes share pages, which resident sizes
    count once per process; past the limit the proportional set size (each shared page split
    among its users) decides.

    Reading which files a process maps and its mounts' usage needs root (/proc/PID/map_files,
    /proc/PID/root); without it the shared memory in resident sizes is kept there and only
    memfds are added.
    """
    mappings = os.geteuid() == 0 and bool(pids)
    stored, one_by_one = 0, None
    if mappings:
        tmpfs = _tmpfs_mounts(pids[0])
        stored, whole = _filled(pids[0], filled, tmpfs)
        one_by_one = set(tmpfs.values()) - whole  # files elsewhere count as they are held
    objects: dict[tuple[int, int], int] = {}
    own = 0
    for pid in pids:
        fields = _status_kb(pid, ("VmRSS", "RssShmem"))
        own += fields.get("VmRSS", 0) - (fields.get("RssShmem", 0) if mappings else 0)
        _shmem_objects(pid, objects, one_by_one)
    shared = sum(objects.values()) + segments + stored
    if own + shared <= limit:
        return own + shared
    own = 0
    for pid in pids:
        own += _proportional(pid, mappings=mappings)
    return own + shared


def _proportional(pid: int, *, mappings: bool) -> int:
    fields = _kb_fields(f"/proc/{pid}/smaps_rollup", ("Pss", "Pss_Shmem"))
    if "Pss" in fields:
        return fields["Pss"] - (fields.get("Pss_Shmem", 0) if mappings else 0)
    # Unreadable (gone, or not ours to read): count its whole resident size instead.
    return _status_kb(pid, ("VmRSS",)).get("VmRSS", 0)


@dataclass(frozen=True, slots=True)
class IpcObject:
    """One SysV IPC object as /proc/sysvipc lists it (for the reader's IPC namespace)."""

    kind: str  # "shm", "msg" or "sem"
    id: int
    uid: int  # the owner, which its owner may change
    cuid: int  # the creator, which nothing changes
    cpid: int | None  # the creating process (segments only)
    size: int  # bytes held: a segment's resident and swapped pages, a queue's messages


_IPC_KINDS = ("shm", "msg", "sem")
_IPC_RMID = 0


def ipc_objects(kinds: tuple[str, ...] = _IPC_KINDS) -> list[IpcObject]:
    """Return the SysV IPC objects of this process's IPC namespace."""
    found: list[IpcObject] = []
    for kind in kinds:
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                header, *rows = f.read().splitlines()
        except (OSError, ValueError):
            continue
        names = header.split()
        for row in rows:
            with contextlib.suppress(ValueError, KeyError):
                values = dict(zip(names, map(int, row.split()), strict=True))
                ident = values.get("shmid", values.get("msqid", values.get("semid")))
                size = values["rss"] + values["swap"] if kind == "shm" else values.get("cbytes", 0)
                assert ident is not None
                found.append(
                    IpcObject(kind, ident, values["uid"], values["cuid"], values.get("cpid"), size)
                )
    return found


def remove_ipc(objects: list[IpcObject]) -> None:
    """Remove SysV IPC objects (a segment goes once its last process detaches)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for item in objects:
        if item.kind == "shm":
            libc.shmctl(item.id, _IPC_RMID, None)
        elif item.kind == "msg":
            libc.msgctl(item.id, _IPC_RMID, None)
        else:
            libc.semctl(item.id, 0, _IPC_RMID)


def remove_uid_ipc(uid: int) -> int:
    """Remove every SysV IPC object sandbox uid `uid` made or owns; return how many."""
    if not reapable_uid(uid):
        raise PermissionError(f"refusing to remove the IPC objects of uid {uid}")
    theirs = [item for item in ipc_objects() if uid in (item.uid, item.cuid)]
    remove_ipc(theirs)
    return len(theirs)


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
