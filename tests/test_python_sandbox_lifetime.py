"""execute_python's process tree: one memory limit for all of it, and nothing outlives its run.

A run's tree dies when the call returns, is cancelled or left by an exception, and when the
process that started it dies (SIGKILL included), whichever thread or greenlet started it.
What a dead process's runs left is removed by the sweep each worker runs at start-up.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.waiting import eventually
from webapp.tools.python import cgroup, claim, procs
from webapp.tools.python import run as sandbox_run
from webapp.tools.python.market import SnapshotMarket
from webapp.tools.python.results import PythonResult
from webapp.tools.python.run import run_python
from webapp.tools.web_index import LocalWebIndex

ROOT = Path(__file__).resolve().parents[1]
# As root the tree runs in a pid namespace as a throwaway uid; without root the supervisor
# adopts and kills its descendants. Root can run both, so both are tested here.
MODES = ["as-root", "without-root"]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "as-root" and os.geteuid() != 0:
        pytest.skip("namespaces and a throwaway uid need root")
    if request.param == "without-root":
        monkeypatch.setattr(sandbox_run, "_privileged", lambda: False)
    return str(request.param)


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, object]]:
    """Record each run's launcher pid and throwaway uid (None without root)."""
    seen: list[tuple[int, object]] = []
    real_spawn = sandbox_run._spawn

    def spy(config: dict[str, object], scratch: Path, fds: tuple[int, ...]) -> object:
        proc = real_spawn(config, scratch, fds)
        seen.append((proc.pid, config["uid"]))
        return proc

    monkeypatch.setattr(sandbox_run, "_spawn", spy)
    return seen


def left_of(spawned: list[tuple[int, object]]) -> list[int]:
    """Return the live processes of the recorded runs: in their sessions, or of their uids."""
    sessions = {pid for pid, _ in spawned}
    uids = {uid for _, uid in spawned if uid is not None}
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and (int(fields[3]) in sessions or procs.real_uid(pid) in uids):
            found.append(pid)
    return found


def run(code: str, **kwargs: object) -> PythonResult:
    kwargs.setdefault("timeout_s", 30.0)  # room: only the limit under test may end the run
    return run_python(code, market=SnapshotMarket(), search=LocalWebIndex([]), **kwargs)  # type: ignore[arg-type]


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def sleepers(marker: str) -> list[int]:
    """Return the live `sleep MARKER` processes."""
    wanted = b"sleep\x00" + marker.encode() + b"\x00"
    return [
        int(e.name)
        for e in os.scandir("/proc")
        if e.name.isdigit() and cmdline(int(e.name)) == wanted
    ]


FORK_TREE_BOMB = """
import os, time
for _ in range(6):
    if os.fork() == 0:
        block = bytearray(100 * 1024 * 1024)  # well under the limit for each process alone
        time.sleep(60)
        os._exit(0)
for _ in range(6):
    os.wait()
print('never printed')
"""


def test_a_fork_tree_shares_one_memory_limit(mode: str, spawned: list[tuple[int, object]]) -> None:
    result = run(FORK_TREE_BOMB, memory_mb=256)
    assert result.error == "memory limit reached (256 MB, all processes together)"
    assert result.stdout == ""
    assert spawned and left_of(spawned) == []


def test_one_process_alone_still_meets_its_own_memory_error(mode: str) -> None:
    result = run("x = bytearray(400 * 1024 * 1024)", memory_mb=256)
    assert result.error == "memory limit reached (256 MB)"


def test_a_grandchild_that_calls_setsid_is_killed_at_the_end(
    mode: str, spawned: list[tuple[int, object]]
) -> None:
    marker = f"{os.getpid() % 1000 + 300}.{threading.get_ident() % 97}25"
    code = (
        "import os, subprocess\n"
        "if os.fork() == 0:\n"
        f"    subprocess.Popen(['sleep', {marker!r}], start_new_session=True)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "print('ok')\n"
    )
    result = run(code)
    assert result.stdout == "ok\n" and result.error is None
    assert eventually(lambda: sleepers(marker) == [])
    assert spawned and left_of(spawned) == []


def test_a_cancelled_run_ends_at_once(mode: str, spawned: list[tuple[int, object]]) -> None:
    cancel = threading.Event()
    timer = threading.Timer(1.0, cancel.set)
    timer.start()
    try:
        result = run("import time\nprint('started', flush=True)\ntime.sleep(60)", cancel=cancel)
    finally:
        timer.cancel()
    assert result.error == "cancelled"
    assert result.stdout == "started\n"
    assert spawned and left_of(spawned) == []


# A process that calls run_python the way the app does, from the main thread, a plain thread
# or a gevent greenlet, and prints the sandbox's folder once its code runs.
HOST = """
import sys
if sys.argv[1] in ("greenlet", "killed-greenlet"):
    from gevent import monkey
    monkey.patch_all()
sys.path.insert(0, {root!r})
import threading
from webapp.tools.python.market import SnapshotMarket
from webapp.tools.python.run import run_python
from webapp.tools.web_index import LocalWebIndex
from webapp.tools.python import run as sandbox_run
if sys.argv[2] == "without-root":
    sandbox_run._privileged = lambda: False
CODE = (
    "import subprocess, time\\n"
    "subprocess.Popen(['sleep', {marker!r}], start_new_session=True)\\n"
    "print('running', flush=True)\\n"
    "time.sleep(60)\\n"
)
def go():
    run_python(CODE, timeout_s=60, market=SnapshotMarket(), search=LocalWebIndex([]))
if sys.argv[1] == "thread":
    worker = threading.Thread(target=go)
    worker.start()
    worker.join()
elif sys.argv[1] == "killed-greenlet":  # as a turn's greenlet might be killed mid-call
    import gevent, select
    runner = gevent.spawn(go)
    select.select([sys.stdin], [], [])  # (cooperative) the test says when the sandbox runs
    runner.kill()
    print("killed", flush=True)
    gevent.sleep(60)
else:
    go()
"""


def _tree_of(pid: int) -> list[int]:
    return [p for child in procs.children(pid) for p in [child, *procs.descendants(child)]]


@pytest.mark.parametrize("spawner", ["main-thread", "thread", "greenlet"])
def test_the_tree_dies_with_the_process_that_started_it(mode: str, spawner: str) -> None:
    marker = f"{77 + len(spawner)}.{os.getpid() % 1000}5"
    host = subprocess.Popen(
        [sys.executable, "-c", HOST.format(root=str(ROOT), marker=marker), spawner, mode],
        cwd=ROOT,
    )
    try:
        assert eventually(lambda: sleepers(marker) != []), "the sandbox never started"
        tree = _tree_of(host.pid)
        # The launcher starts in the run's scratch folder, inside the run's folder.
        folder = Path(os.readlink(f"/proc/{procs.children(host.pid)[0]}/cwd")).parent
        assert folder.name.startswith(claim.PREFIX)
        host.kill()  # SIGKILL: nothing in the host gets to clean up
        host.wait()
        assert eventually(lambda: all(procs.real_uid(p) is None for p in tree)), tree
        assert sleepers(marker) == []
        assert eventually(lambda: not folder.exists()), folder
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


def test_a_killed_greenlets_tree_dies_while_its_process_lives(mode: str) -> None:
    marker = f"{91}.{os.getpid() % 1000}5"
    host = subprocess.Popen(
        [sys.executable, "-c", HOST.format(root=str(ROOT), marker=marker), "killed-greenlet", mode],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert host.stdin is not None and host.stdout is not None
    try:
        assert eventually(lambda: sleepers(marker) != []), "the sandbox never started"
        tree = _tree_of(host.pid)
        host.stdin.write("\n")
        host.stdin.flush()
        assert host.stdout.readline() == "killed\n"
        assert eventually(lambda: all(procs.real_uid(p) is None for p in tree)), tree
        assert sleepers(marker) == [] and host.poll() is None
    finally:
        host.kill()
        host.communicate()


# Which memory mechanism applies: a cgroup v2 with memory and pids handed down, else the watchdog.


def _fake_proc(tmp_path: Path, own: str, handed_down: str) -> Path:
    mount = tmp_path / "cgroup"
    (mount / own.lstrip("/")).mkdir(parents=True, exist_ok=True)
    (mount / own.lstrip("/") / "cgroup.subtree_control").write_text(handed_down)
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text(
        "25 30 0:22 / /sys rw - sysfs sysfs rw\n"
        f"35 25 0:30 / {mount} rw,nosuid - cgroup2 cgroup2 rw\n"
    )
    (proc / "cgroup").write_text(f"4:memory:/elsewhere\n0::{own}\n")
    return proc


@pytest.mark.parametrize(
    ("own", "handed_down", "usable"),
    [
        ("/", "cpu memory pids", True),
        ("/app", "memory pids", True),
        ("/app", "memory", False),
        ("/app", "", False),
    ],
    ids=["root", "delegated", "no-pids", "nothing"],
)
def test_a_cgroup_is_used_only_where_memory_and_pids_are_handed_down(
    tmp_path: Path, own: str, handed_down: str, usable: bool
) -> None:
    proc = _fake_proc(tmp_path, own, handed_down)
    expected = tmp_path / "cgroup" / own.lstrip("/")
    assert cgroup.find_parent(proc) == (expected if usable else None)


def test_no_cgroup2_mount_means_the_watchdog(tmp_path: Path) -> None:
    proc = _fake_proc(tmp_path, "/", "memory pids")
    (proc / "mountinfo").write_text("25 30 0:22 / /sys rw - sysfs sysfs rw\n")
    assert cgroup.find_parent(proc) is None


def test_a_runs_cgroup_gets_the_calls_limits(tmp_path: Path) -> None:
    path = tmp_path / "python-sandbox-1"
    assert cgroup.create(path, 256 * 1024 * 1024, 33)
    assert (path / "memory.max").read_text() == str(256 * 1024 * 1024)
    assert (path / "pids.max").read_text() == "33"
    assert (path / "memory.oom.group").read_text() == "1"
    (path / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    assert cgroup.oom_killed(path)
