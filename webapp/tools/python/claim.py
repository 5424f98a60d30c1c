"""A run's claim on its throwaway uid and folder, and the start-up sweep of dead owners' claims.

As root a run claims its uid by creating its folder `python-sandbox-<uid>` in the temporary
folder: mkdir is atomic, so two workers never share a uid. Without root the folder has a
random name. Either way the folder holds `owner.json`: the process that made it (pid and
start time, boot and pid namespace), the uid and the cgroup path, written before anything
runs. `sweep_leftovers` removes what a dead owner left: while the owner lives its run is left alone.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import cgroup as cgroups
from .procs import kill_uid, reapable_uid, start_time, user_pids
from .sysvipc import remove_uid_ipc

log = logging.getLogger(__name__)

PREFIX = "python-sandbox-"
MAX_TIMEOUT_S = 120
# The longest a run's folder can live: its time limit, then killing, joining and removing.
LONGEST_RUN_S = MAX_TIMEOUT_S + 60
OWNER_FILE = "owner.json"


@dataclass(frozen=True, slots=True)
class Claim:
    """One run's folder, its throwaway uid (None without root) and its cgroup's intended path."""

    folder: Path
    uid: int | None
    cgroup: Path | None


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def _owner() -> dict[str, object]:
    return {
        "pid": os.getpid(),
        "start": start_time(os.getpid()),
        "boot": _read("/proc/sys/kernel/random/boot_id"),
        "pidns": _pidns(),
    }


def _pidns() -> str:
    with contextlib.suppress(OSError):
        return os.readlink("/proc/self/ns/pid")
    return ""


def owner_state(record: dict[str, object]) -> str:
    """Return "alive", "dead" or "unknown" (another boot's or pid namespace's, or unreadable)."""
    pid, start = record.get("pid"), record.get("start")
    if not isinstance(pid, int) or not isinstance(start, int):
        return "unknown"
    if record.get("boot") != _read("/proc/sys/kernel/random/boot_id"):
        return "unknown"
    if record.get("pidns") != _pidns():
        return "unknown"  # its processes are not ours to see
    return "alive" if start_time(pid) == start else "dead"


def claim(uids: range | None, pick: int = 20) -> Claim:
    """Claim a folder, and with `uids` a throwaway uid from them that no one uses."""
    base = Path(tempfile.gettempdir())
    if uids is None:
        folder = Path(tempfile.mkdtemp(prefix=PREFIX))
        return _record(Claim(folder, None, cgroups.path_for(folder.name)))
    for _ in range(pick):
        uid = uids[secrets.randbelow(len(uids))]
        if not reapable_uid(uid) or user_pids(uid):
            continue
        folder = base / f"{PREFIX}{uid}"
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            continue  # another run's (or a leftover the sweep has not reached)
        return _record(Claim(folder, uid, cgroups.path_for(folder.name)))
    raise LookupError("no free sandbox uid")


def _record(made: Claim) -> Claim:
    record = {**_owner(), "uid": made.uid, "cgroup": str(made.cgroup) if made.cgroup else None}
    (made.folder / OWNER_FILE).write_text(json.dumps(record), encoding="ascii")
    return made


def release(made: Claim) -> None:
    """Give the claim back: its cgroup (if made) and its folder."""
    if made.cgroup is not None:
        cgroups.remove(made.cgroup)
    shutil.rmtree(made.folder, ignore_errors=True)


def _ours(path: Path) -> bool:
    """Tell whether `path` is a real folder (no link) this process's user made, closed to others."""
    try:
        info = path.lstat()
    except OSError:
        return False
    mode_ok = stat.S_IMODE(info.st_mode) & 0o077 == 0
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and mode_ok


def _load(folder: Path) -> dict[str, object] | None:
    try:
        record = json.loads((folder / OWNER_FILE).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _sweep_one(folder: Path, now: float) -> bool:
    record = _load(folder)
    state = owner_state(record) if record is not None else "unknown"
    if state == "alive":
        return False
    if state == "unknown":
        # No owner we can judge: only the folder goes, once no run could still be using it.
        with contextlib.suppress(OSError):
            if now - folder.lstat().st_mtime > LONGEST_RUN_S:
                shutil.rmtree(folder, ignore_errors=True)
                return True
        return False
    assert record is not None
    uid = record.get("uid")
    if uid is not None:
        # The uid is this folder's (its name), so no live run can hold it: kill what runs as it.
        if folder.name != f"{PREFIX}{uid}" or not reapable_uid(uid):
            return False
        assert isinstance(uid, int)
        if not kill_uid(uid):
            return False  # keep the claim until they are gone
        remove_uid_ipc(uid)  # SysV objects it made outside a namespace of its own
    cgroup = cgroups.checked(record.get("cgroup"), folder.name)
    if cgroup is not None and not (cgroups.kill(cgroup) and cgroups.remove(cgroup)):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def sweep_leftovers(base: Path | None = None) -> int:
    """Remove what runs whose owner died left behind; return how many runs were cleared.

    A dead owner's uid has all its processes killed and its SysV IPC objects removed, its
    cgroup killed and removed, its folder removed. A folder with no owner to judge is removed
    once older than the longest run, without killing anything. Never raises: a failure is
    logged and the rest goes on.
    """
    base = base or Path(tempfile.gettempdir())
    cleared = 0
    now = time.time()
    try:
        entries = sorted(base.glob(f"{PREFIX}*"))
    except OSError:
        log.exception("could not list %s for sandbox leftovers", base)
        return 0
    for folder in entries:
        if not _ours(folder):
            continue
        try:
            cleared += _sweep_one(folder, now)
        except Exception:
            log.exception("could not sweep a sandbox leftover")
    if cleared:
        log.info("swept %d sandbox run(s) left by a process that died", cleared)
    return cleared
