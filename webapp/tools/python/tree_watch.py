"""The supervisor's watch over a run's process tree: its children, its IPC objects, its memory.

`launch.py`'s supervisor waits here (`watch`) for the code to end, for the app's process to
go (end-of-file on the control socket: then `abandon`), or, without a cgroup memory limit,
for the tree to pass the limit, summed every WATCH_SECONDS. `end_tree` kills every process
of the run and removes its SysV IPC objects. Standard library only: the launcher imports
this module as a plain script.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
from collections.abc import Mapping
from typing import Any, NoReturn

if __package__:
    from .procs import descendants, kill_descendants, kill_uid
    from .sysvipc import IpcObject, ipc_objects, remove_ipc
    from .tree_memory import memory_used
else:  # imported by the launcher, run as a script: its sibling modules are top-level
    from procs import (  # type: ignore[no-redef, import-not-found]
        descendants,
        kill_descendants,
        kill_uid,
    )
    from sysvipc import (  # type: ignore[no-redef, import-not-found]
        IpcObject,
        ipc_objects,
        remove_ipc,
    )
    from tree_memory import memory_used  # type: ignore[no-redef, import-not-found]

WATCH_SECONDS = 0.02


class Children:
    """Collects the supervisor's exited children, keeping its main child's wait status."""

    def __init__(self, main: int) -> None:
        self.main = main
        self.status: int | None = None

    def reap(self) -> None:
        """Collect every exited child, keeping the main child's wait status."""
        with contextlib.suppress(ChildProcessError):
            while True:
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    return
                if pid == self.main:
                    self.status = status


class RunIpc:
    """The run's SysV IPC objects (shared memory, message queues, semaphores).

    In the run's own IPC namespace every object is the run's. Without one: those its
    throwaway uid made or owns, and (without a uid) the segments made since the run began,
    as this process's user, by a process of the tree.
    """

    def __init__(self, own_namespace: bool, uid: int | None) -> None:
        self.own_namespace = own_namespace
        self.uid = uid
        self.me = os.getuid()
        self.before = set() if own_namespace else {(o.kind, o.id) for o in ipc_objects()}
        self.pids: set[int] = set()  # every process of the tree the watchdog has seen

    def ours(self) -> list[IpcObject]:
        """Return the run's objects, as this class's docstring counts them."""
        found = ipc_objects()
        if self.own_namespace:
            return found
        return [o for o in found if self._made_by_run(o)]

    def _made_by_run(self, item: IpcObject) -> bool:
        if self.uid is not None:
            return self.uid in (item.uid, item.cuid)
        return (
            (item.kind, item.id) not in self.before
            and item.cuid == self.me
            and item.cpid in self.pids
        )

    def memory(self) -> int:
        """Return the bytes the run's objects hold (a segment's pages, a queue's messages)."""
        return sum(item.size for item in self.ours())

    def remove(self) -> None:
        """Remove the run's objects (a segment goes once its last process detaches)."""
        remove_ipc(self.ours())


def end_tree(config: Mapping[str, Any], children: Children, ipc: RunIpc) -> bool:
    """Kill every process of the run and remove its IPC objects; say whether none is left."""
    done = kill_descendants(reap=children.reap)
    if config["uid"] is not None:
        done = kill_uid(config["uid"]) and done
    with contextlib.suppress(OSError):
        ipc.remove()
    return done


def abandon(config: Mapping[str, Any], children: Children, ipc: RunIpc) -> NoReturn:
    """The app's process is gone: end the run and remove what it made, then exit."""
    if end_tree(config, children, ipc):
        # Only once nothing of the run is left; otherwise the start-up sweep finds it.
        cgroup = config["cgroup"]
        for _ in range(100):
            if cgroup is None or not os.path.isdir(cgroup):
                shutil.rmtree(config["workdir"], ignore_errors=True)
                break
            with contextlib.suppress(OSError):
                os.rmdir(cgroup)
            select.select([], [], [], 0.02)
    os._exit(1)


def own_tmpfs(config: Mapping[str, Any]) -> list[str]:
    """Return where, as root, the run has tmpfs of its own: its scratch and hidden folders."""
    if config["uid"] is None:
        return []
    return [os.path.realpath(path) for path in (config["scratch"], *config["hide"])]


def code_memory(
    config: Mapping[str, Any], child: int, budget: int, ipc: RunIpc, filled: list[str]
) -> int:
    """Return what the code's processes use together (the sandbox's init is not the code's),
    their shared memory and IPC objects included, held or not.

    A process alone never goes past the budget here with its own private memory (RLIMIT_AS
    holds it to less), so it meets its own MemoryError first; only processes together do,
    or memory that outlives a mapping (memfds, SysV segments).
    """
    init = child if config["uid"] is not None else None
    pids = [p for p in descendants(os.getpid()) if p != init]
    ipc.pids.update(pids)
    return memory_used(pids, budget, ipc.memory(), filled)


def watch(config: Mapping[str, Any], child: int, children: Children, ipc: RunIpc) -> bool:
    """Wait for the child to end; say whether the tree went past the memory limit."""
    control, budget = config["control_fd"], config["watch_memory_bytes"]
    poller = select.poll()
    poller.register(control, select.POLLIN)
    pidfd: int | None = None
    with contextlib.suppress(OSError):  # no pidfds (before Linux 5.3): check on a timer
        pidfd = os.pidfd_open(child)
        poller.register(pidfd, select.POLLIN)
    filled = own_tmpfs(config)
    tick = WATCH_SECONDS if budget is not None else (None if pidfd is not None else 0.05)
    over = False
    while True:
        ready = {fd for fd, _ in poller.poll(None if tick is None else int(tick * 1000))}
        children.reap()
        if children.status is not None:
            return over
        if control in ready:
            abandon(config, children, ipc)
        if (
            budget is not None
            and not over
            and code_memory(config, child, budget, ipc, filled) > budget
        ):
            over = True
            end_tree(config, children, ipc)
