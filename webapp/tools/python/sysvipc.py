"""A sandbox's SysV IPC objects (shared memory, message queues, semaphores): list and remove.

Read from /proc/sysvipc, which lists the objects of the reader's IPC namespace; removed
through libc, since Python has no binding. A segment's pages stay held after every process
detaches, so the supervisor counts them against the run's memory limit (`tree_memory.py`)
and removes them when the run ends. Standard library only: the launcher imports this module
as a plain script.
"""

from __future__ import annotations

import contextlib
import ctypes
from dataclasses import dataclass

if __package__:
    from .procs import reapable_uid
else:  # imported by the launcher, run as a script: its sibling modules are top-level
    from procs import reapable_uid  # type: ignore[no-redef, import-not-found]


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
