"""What the launcher does to the code's process before it runs: namespaces, mounts, limits, uid.

As root, the supervisor makes the run's own IPC namespace (SysV shared memory, queues and
semaphores end with the run, /proc/sysvipc lists only the run's, and their total is held to
the memory limit: `limit_ipc`), and the sandbox's init process makes a private mount and
network namespace (no network at all, not even loopback), lays fresh tmpfs over the folders
the code must not see (the project, /root, /home, /tmp, /run, ... with the interpreter and
the helper library bound back read-only), mounts a size-limited tmpfs as the scratch folder
and a /proc that shows only the sandbox's own pid namespace. The code's process then takes
resource limits and becomes the throwaway uid, so that RLIMIT_NPROC applies and root-only
files stay closed. Without root only the resource limits apply. Standard library only: the
launcher imports it as a script.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from collections.abc import Iterable, Mapping
from typing import Any

if __package__:
    from .procs import is_sandbox_uid, user_pids
else:  # imported by the launcher, run as a script: its sibling modules are top-level
    from procs import is_sandbox_uid, user_pids  # type: ignore[no-redef, import-not-found]

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38


def _under(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


class Kernel:
    """The few system calls the sandbox needs that Python does not wrap, through libc."""

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

    def prctl(self, option: int, value: int) -> None:
        args = (ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
        self._check(self._libc.prctl(option, *args), "prctl")

    def die_with_parent(self) -> None:
        """Be killed when the parent (the thread that forked us) ends."""
        self.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    def adopt_orphans(self) -> None:
        """Become the parent of any orphaned descendant, so the whole tree stays below us."""
        self.prctl(_PR_SET_CHILD_SUBREAPER, 1)

    def no_core_dumps(self) -> None:
        self.prctl(_PR_SET_DUMPABLE, 0)

    def no_new_privileges(self) -> None:
        self.prctl(_PR_SET_NO_NEW_PRIVS, 1)


def _hide(k: Kernel, folder: str, keep: Iterable[str]) -> None:
    """Lay an empty tmpfs over `folder`, binding the kept paths inside it back read-only."""
    inside = [path for path in keep if _under(path, folder)]
    # A kept path inside another kept one comes along with it (the bind is recursive).
    inside = [path for path in inside if not any(_under(path, other) for other in inside)]
    handles = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in inside]
    world_writable = os.stat(folder).st_mode & 0o002
    options = "size=16m,mode=1777" if world_writable else "size=1m,mode=0755"
    k.mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
    for path, handle in handles:
        os.makedirs(path, mode=0o755, exist_ok=True)
        # The O_PATH handle still names the original folder, now hidden under the tmpfs.
        k.mount(f"/proc/self/fd/{handle}", path, None, _MS_BIND | _MS_REC, None)
        os.close(handle)
        k.mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None)


def isolate(config: Mapping[str, Any]) -> None:
    """Enter private mount and network namespaces and build the code's view of the files.

    Called by the pid namespace's init process, so the fresh /proc shows that namespace.
    """
    k = Kernel()
    k.unshare(CLONE_NEWNS | CLONE_NEWNET)
    k.mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    keep = sorted({os.path.realpath(path) for path in config["keep"]})
    hide = {os.path.realpath(path) for path in config["hide"] if os.path.isdir(path)}
    outermost = sorted(h for h in hide if not any(_under(h, other) for other in hide))
    for folder in outermost:
        if folder not in keep:
            _hide(k, folder, keep)
    scratch, uid = config["scratch"], config["uid"]
    os.makedirs(scratch, mode=0o700, exist_ok=True)
    options = f"size={config['scratch_bytes']},mode=0700,uid={uid},gid={uid}"
    k.mount("tmpfs", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
    k.mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
    k.no_new_privileges()


def limit(config: Mapping[str, Any]) -> None:
    """Set the code's per-process resource limits (memory, CPU, files, processes)."""

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


def limit_ipc(memory_bytes: int) -> None:
    """Hold this (new) IPC namespace's SysV objects to the run's memory: the segments' total
    size to `memory_bytes`, and only a few small message queues (their defaults allow
    32,000 queues of 16 KB). The kernel refuses what goes past; the watchdog counts the rest.
    """
    page = os.sysconf("SC_PAGE_SIZE")
    for name, value in (
        ("shmmax", memory_bytes),
        ("shmall", memory_bytes // page),
        ("shmmni", 256),
        ("msgmni", 16),
        ("msgmnb", 16384),
    ):
        with open(f"/proc/sys/kernel/{name}", "w") as f:
            f.write(str(value))


def join_cgroup(path: str | None) -> None:
    """Move this process (and so everything it starts) into the run's cgroup, if it has one."""
    if path is not None:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write("0")


def drop_privileges(uid: int) -> None:
    """Become `uid` for good (real, effective and saved ids, no groups)."""
    if not is_sandbox_uid(uid):
        raise PermissionError("refusing to run the code as a privileged or invalid uid")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # (uid_t)-1 means "leave unchanged" to setresuid: make sure root is really gone.
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid):
        raise PermissionError("could not drop privileges")
