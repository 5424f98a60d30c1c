"""Under the Procfile's server: a worker killed mid-`execute_python` leaves no sandbox behind,
and a turn's shared memory counts against its limit and ends with its call.

The fake Claude asks for code that sleeps; the test finds the worker whose child is the
sandbox's launcher (through /proc parent links), kills it with SIGKILL and checks that
nothing of the sandbox remains: no process of its throwaway uid, none in its session, and,
once gunicorn has started a new worker (which sweeps at start-up), not its folder either.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
from pathlib import Path

import httpx
import pytest

from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.support.gunicorn import Server, gunicorn
from tests.support.waiting import eventually, wait_for
from webapp.store.engine import create_store_engine
from webapp.store.users import create_api_token
from webapp.tools.python import procs, run

SLEEPER = "import time; time.sleep(60)"  # the call's own limit (10 s) must not end it first


def _launcher_of(server: Server) -> tuple[int, int] | None:
    """Return (worker, launcher) for the worker whose child is a sandbox launcher."""
    for worker in server.workers():
        for child in procs.children(worker):
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if str(run.LAUNCHER).encode() in cmdline:
                return worker, child
    return None


def _session_members(session: int) -> list[int]:
    """Return the live processes in session `session` (the launcher's, and its group's)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and session in (int(fields[2]), int(fields[3])):
                found.append(int(entry.name))
    return found


def _folder_of(launcher: int) -> Path:
    """Return the run's folder: the launcher starts in its scratch folder, inside it."""
    return Path(os.readlink(f"/proc/{launcher}/cwd")).parent


def _answers(client: httpx.Client) -> bool:
    """Whether the server answers `/login`; a kept-alive connection to the killed worker is
    reset, and the next try opens a new one."""
    try:
        return client.get("/login").status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.parametrize("killed", ["worker", "worker-and-launcher"])
def test_a_killed_worker_leaves_no_sandbox_behind(
    tmp_path: Path, seeded_sqlite_template: Path, killed: str
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    url = f"sqlite:///{database}"
    engine = create_store_engine(url)
    token = create_api_token(engine, "demo")
    engine.dispose()
    replies = [tool_reply(("t1", "execute_python", {"code": SLEEPER})), text_reply(("Done.", []))]
    with FakeClaude(replies) as fake:
        env = {
            "DATABASE_URL": url,
            "SECRET_KEY": "test",
            "REDIS_URL": "",
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": fake.url,
            "TURN_LEASE_SECONDS": "600",
        }  # no other worker takes the turn over meanwhile
        with (
            gunicorn(env, tmp_path) as server,
            httpx.Client(
                base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ) as client,
        ):
            session_id = client.post("/api/chat/sessions", json={}).json()["id"]
            asked = client.post(
                f"/api/chat/sessions/{session_id}/messages",
                json={"message": "How are my stocks doing?"},
            )
            assert asked.status_code == 202, asked.text
            wait_for(lambda: _launcher_of(server), "the sandbox never started")
            found = _launcher_of(server)
            assert found is not None
            worker, launcher = found
            tree = [launcher, *procs.descendants(launcher)]
            uids = {u for u in map(procs.real_uid, tree) if u is not None and u != os.geteuid()}
            folder = _folder_of(launcher)
            assert folder.name.startswith("python-sandbox-") and folder.is_dir()
            if killed == "worker-and-launcher":
                # Stopped first, so that it cannot clean up: the start-up sweep must.
                os.kill(launcher, signal.SIGSTOP)
            os.kill(worker, signal.SIGKILL)
            if killed == "worker-and-launcher":
                os.kill(launcher, signal.SIGKILL)

            wait_for(
                lambda: all(procs.real_uid(pid) is None for pid in tree),
                f"sandbox processes outlived their worker: {tree}",
            )
            assert _session_members(launcher) == []
            for uid in uids:
                assert procs.user_pids(uid) == [], f"processes of sandbox uid {uid} remain"
            wait_for(
                lambda: [w for w in server.workers() if w != worker] and len(server.workers()) == 2,
                "gunicorn started no new worker",
            )
            wait_for(lambda: _answers(client), "the server stopped answering")
            wait_for(
                lambda: not folder.exists(),
                f"the sandbox's folder outlived the start-up sweep: {folder}",
            )
        assert fake.requests, "the model was asked"
    assert "could not sweep" not in server.log_text()


SEGMENT_BYTES = 40 * 1024 * 1024 + 11 * 4096  # a size no other software's segment has
SEGMENTS = f"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
for _ in range(3):  # made, filled and detached: nothing of the tree holds them
    ident = libc.shmget(0, {SEGMENT_BYTES}, 0o1600)
    address = libc.shmat(ident, None, 0)
    ctypes.memset(address, 1, {SEGMENT_BYTES})
    libc.shmdt(address)
print('three segments made')
"""
MEMFDS = """
import os, time
held = []
for _ in range(100):  # 100 x 15 MB, each under the file-size limit
    fd = os.memfd_create('block')
    os.write(fd, b'x' * (15 * 1024 * 1024))
    held.append(fd)
time.sleep(60)
"""


def _host_segments() -> list[int]:
    header, *rows = Path("/proc/sysvipc/shm").read_text().splitlines()
    found = [dict(zip(header.split(), map(int, row.split()), strict=True)) for row in rows]
    return [segment["shmid"] for segment in found if segment["size"] == SEGMENT_BYTES]


def test_a_turns_shared_memory_counts_against_its_limit_and_ends_with_its_call(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    database = tmp_path / "webapp.sqlite"
    shutil.copyfile(seeded_sqlite_template, database)
    url = f"sqlite:///{database}"
    engine = create_store_engine(url)
    token = create_api_token(engine, "demo")
    engine.dispose()
    calls: list[tuple[str, str, dict[str, object]]] = [
        ("t1", "execute_python", {"code": SEGMENTS}),
        ("t2", "execute_python", {"code": MEMFDS, "timeout_s": 60}),
    ]
    replies = [tool_reply(*calls), text_reply(("Done.", []))]
    env = {
        "DATABASE_URL": url,
        "SECRET_KEY": "test",
        "REDIS_URL": "",
        "ANTHROPIC_API_KEY": "test-key",
    }
    try:
        with FakeClaude(replies) as fake:
            env["ANTHROPIC_BASE_URL"] = fake.url
            with (
                gunicorn(env, tmp_path) as server,
                httpx.Client(
                    base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
                ) as client,
            ):
                session_id = client.post("/api/chat/sessions", json={}).json()["id"]
                asked = client.post(
                    f"/api/chat/sessions/{session_id}/messages",
                    json={"message": "How are my stocks doing?"},
                )
                assert asked.status_code == 202, asked.text
                wait_for(lambda: len(fake.requests) >= 2, "the tools' results never came back")
            results = json.dumps(fake.requests[1]["messages"][-1])
        assert "three segments made" in results
        assert "memory limit reached" in results and "all processes together" in results
        assert eventually(lambda: _host_segments() == [], seconds=10), _host_segments()
    finally:  # what a failing run left must not hold the host's memory
        libc = ctypes.CDLL(None, use_errno=True)
        for ident in _host_segments():
            libc.shmctl(ident, 0, None)  # IPC_RMID
