"""What a sandbox's process tree uses in memory: resident sizes, shared memory counted once.

The supervisor's watchdog sums it every 20 ms when no cgroup holds the run's memory
(`launch.py`), so each file is read once and searched, not parsed line by line. Standard
library only: the launcher imports this module as a plain script.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable


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
