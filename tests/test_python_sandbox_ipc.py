"""execute_python's shared memory: SysV objects end with the run, the host's are out of sight,
and memory that outlives a mapping (memfds, SysV segments) counts against the one limit.

As root the run has its own IPC namespace; where it has none (without root, or a kernel that
gives none) the run's objects are removed at its end and by the start-up sweep.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.waiting import eventually
from webapp.tools.python import claim, procs
from webapp.tools.python import run as sandbox_run
from webapp.tools.python.market import SnapshotMarket
from webapp.tools.python.results import PythonResult
from webapp.tools.python.run import run_python
from webapp.tools.web_index import LocalWebIndex

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces and a throwaway uid need root")
# As root with its own IPC namespace; as root where none is made (its uid's objects are
# removed); without root (its processes' segments are removed).
MODES = ["as-root", "as-root-without-ipc-namespace", "without-root"]
OVER = "memory limit reached (256 MB, all processes together)"
MB = 1024 * 1024
# Segment sizes no other software uses, so that the host's segments of these are the tests'.
SMALL, MEDIUM, LARGE, SWEPT = (
    40 * MB + 7 * 4096,
    100 * MB + 9 * 4096,
    150 * MB + 5 * 4096,
    MB + 3 * 4096,
)

SEGMENTS = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]

def segment(size):
    # IPC_PRIVATE, IPC_CREAT | 0600: made, filled to the last page, then detached.
    ident = libc.shmget(0, size, 0o1600)
    if ident < 0:
        raise OSError(ctypes.get_errno(), 'shmget')
    address = libc.shmat(ident, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), 'shmat')
    ctypes.memset(address, 1, size)
    libc.shmdt(address)
    return ident
"""


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param.startswith("as-root") and os.geteuid() != 0:
        pytest.skip("namespaces and a throwaway uid need root")
    if request.param == "without-root":
        monkeypatch.setattr(sandbox_run, "_privileged", lambda: False)
    if request.param == "as-root-without-ipc-namespace":
        real_config = sandbox_run._config

        def no_namespace(*args: object, **kwargs: object) -> dict[str, object]:
            config = real_config(*args, **kwargs)  # type: ignore[arg-type]
            return {**config, "ipc_namespace": False}

        monkeypatch.setattr(sandbox_run, "_config", no_namespace)
    return str(request.param)


def run(code: str, **kwargs: object) -> PythonResult:
    kwargs.setdefault("timeout_s", 30.0)  # room: only the limit under test may end the run
    return run_python(code, market=SnapshotMarket(), search=LocalWebIndex([]), **kwargs)  # type: ignore[arg-type]


def host_segments(size: int) -> list[dict[str, int]]:
    """Return the host's SysV segments of `size` bytes (sizes the tests pick to be unusual)."""
    header, *rows = Path("/proc/sysvipc/shm").read_text().splitlines()
    found = [dict(zip(header.split(), map(int, row.split()), strict=True)) for row in rows]
    return [segment for segment in found if segment["size"] == size]


def test_segments_made_filled_and_detached_end_with_the_run(mode: str) -> None:
    assert host_segments(SMALL) == []
    result = run(SEGMENTS + f"print([segment({SMALL}) for _ in range(3)])")  # under the limit
    assert result.error is None, result.stderr
    assert len(json.loads(result.stdout)) == 3
    assert eventually(lambda: host_segments(SMALL) == [], seconds=10), host_segments(SMALL)


@pytest.fixture(autouse=True)
def _remove_leftovers() -> Iterator[None]:
    """Remove what a failing run left behind, so that it does not hold the host's memory."""
    yield
    libc = ctypes.CDLL(None, use_errno=True)
    for size in (SMALL, MEDIUM, LARGE, SWEPT):
        for segment in host_segments(size):
            libc.shmctl(segment["shmid"], 0, None)  # IPC_RMID


@pytest.fixture
def host_segment() -> Iterator[int]:
    """Make a SysV segment on the host with an unusual key; return the key."""
    libc = ctypes.CDLL(None, use_errno=True)
    key = 0x5EC0DE00 + os.getpid() % 256
    ident = libc.shmget(key, 4096, 0o1600)
    assert ident >= 0, os.strerror(ctypes.get_errno())
    yield key
    libc.shmctl(ident, 0, None)  # IPC_RMID


@as_root
def test_the_hosts_segments_are_out_of_sight(host_segment: int) -> None:
    code = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(open('/proc/sysvipc/shm').read())\n"
        f"print('found' if libc.shmget({host_segment}, 0, 0) >= 0 else 'not found')\n"
    )
    result = run(code)
    assert result.error is None, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines()[1:-1] if line.strip()]
    assert str(host_segment) not in listed
    assert result.stdout.splitlines()[-1] == "not found"


MEMFDS = """
import os, time
held = []
for _ in range(40):  # 40 x 15 MB: each file under the file-size limit, all far over 256 MB
    fd = os.memfd_create('block')
    os.write(fd, b'x' * (15 * 1024 * 1024))
    held.append(fd)
time.sleep(20)
print('never printed')
"""


def test_memfds_count_against_the_one_limit(mode: str) -> None:
    result = run(MEMFDS, memory_mb=256)
    assert result.error == OVER
    assert result.stdout == ""


MAPPED_MEMFDS = """
import mmap, os, time
for _ in range(3):
    if os.fork() == 0:
        maps = []
        for _ in range(10):  # 150 MB in each child, mapped but never touched
            fd = os.memfd_create('block')
            os.write(fd, b'x' * (15 * 1024 * 1024))
            maps.append(mmap.mmap(fd, 15 * 1024 * 1024))
            os.close(fd)
        time.sleep(20)
        os._exit(0)
for _ in range(3):
    os.wait()
print('never printed')
"""


@as_root  # which files a process maps is for root alone to read
def test_memfds_mapped_and_closed_count_against_the_one_limit(mode: str) -> None:
    result = run(MAPPED_MEMFDS, memory_mb=256)
    assert result.error == OVER
    assert result.stdout == ""


TMPFS_FILES = """
import os, time
block = b'x' * (15 * 1024 * 1024)  # each file under the file-size limit
for folder, count in (('.', 4), ('/tmp', 1), ('/dev/shm', 1)):  # 90 MB stored in memory
    for i in range(count):
        with open(os.path.join(folder, f'block{i}'), 'wb') as f:
            f.write(block)
del block
held = bytearray(60 * 1024 * 1024)  # under the limit alone, over it with the files
time.sleep(20)
print('never printed')
"""


@as_root  # the scratch folder, /tmp and /dev/shm are memory of the run's own only as root
def test_files_stored_in_the_runs_own_tmpfs_count_against_the_one_limit() -> None:
    result = run(TMPFS_FILES, memory_mb=128)
    assert result.error == "memory limit reached (128 MB, all processes together)"
    assert result.stdout == ""


def test_segments_count_against_the_one_limit(mode: str) -> None:
    code = SEGMENTS + (
        "import time\n"
        f"segment({LARGE})\n"
        "block = bytearray(150 * 1024 * 1024)  # under the limit alone, over it with the segment\n"
        "time.sleep(20)\n"
        "print('never printed')\n"
    )
    result = run(code, memory_mb=256)
    assert result.error == OVER
    assert result.stdout == ""


@as_root
def test_the_namespaces_segments_are_held_to_the_limit() -> None:
    # Three segments of 100 MB: the kernel refuses the third (256 MB in all), filled or not.
    code = SEGMENTS + (
        "made = []\n"
        "try:\n"
        "    while len(made) < 3:\n"
        f"        made.append(ctypes.CDLL(None).shmget(0, {MEDIUM}, 0o1600))\n"
        "finally:\n"
        "    print(made)\n"
    )
    result = run(code, memory_mb=256)
    made = json.loads(result.stdout)
    assert made[0] >= 0 and made[1] >= 0 and made[2] < 0


@as_root
def test_the_sweep_removes_a_dead_owners_segments(tmp_path: Path) -> None:
    uid = next(
        u for u in sandbox_run.SANDBOX_UIDS if procs.reapable_uid(u) and not procs.user_pids(u)
    )
    size = SWEPT
    make = (
        "import ctypes, os\n"
        f"os.setresgid({uid}, {uid}, {uid}); os.setresuid({uid}, {uid}, {uid})\n"
        f"assert ctypes.CDLL(None).shmget(0, {size}, 0o1600) >= 0\n"
    )
    subprocess.run([sys.executable, "-c", make], check=True)  # made by the uid, left behind
    assert [segment["cuid"] for segment in host_segments(size)] == [uid]
    gone = subprocess.Popen(["sleep", "30"])
    start = procs.start_time(gone.pid)
    gone.kill()
    gone.wait()
    folder = tmp_path / f"{claim.PREFIX}{uid}"
    folder.mkdir(mode=0o700)
    record = {**claim._owner(), "pid": gone.pid, "start": start, "uid": uid, "cgroup": None}
    (folder / claim.OWNER_FILE).write_text(json.dumps(record))
    assert claim.sweep_leftovers(tmp_path) == 1
    assert host_segments(size) == []
