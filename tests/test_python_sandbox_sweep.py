"""The start-up sweep: what runs of a dead process left is removed, and nothing else.

Leftovers are made by hand: a run's folder whose owner record names a dead or a live process,
and a process running as a sandbox uid. Only a dead owner's own uid is ever killed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from webapp.tools.python import claim, procs, run
from webapp.tools.python.market import SnapshotMarket
from webapp.tools.python.run import run_python
from webapp.tools.web_index import LocalWebIndex

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="a throwaway uid needs root")


@pytest.fixture
def dead_owner() -> dict[str, object]:
    """Return an owner record for a process that has since died."""
    gone = subprocess.Popen(["sleep", "30"])
    start = procs.start_time(gone.pid)
    gone.kill()
    gone.wait()
    return {**claim._owner(), "pid": gone.pid, "start": start}


@pytest.fixture
def sandbox_uid() -> int:
    for uid in run.SANDBOX_UIDS:
        if procs.reapable_uid(uid) and not procs.user_pids(uid):
            return uid
    raise AssertionError("no free sandbox uid")


@pytest.fixture
def leftover(sandbox_uid: int) -> Iterator[subprocess.Popen[bytes]]:
    """A process running as a sandbox uid, in its own session, as a leftover would be."""
    process = subprocess.Popen(
        ["sleep", "300"],
        user=sandbox_uid,
        group=sandbox_uid,
        extra_groups=[],
        start_new_session=True,
    )
    yield process
    if process.poll() is None:
        process.kill()
    process.wait()


def _folder(base: Path, name: str, record: dict[str, object] | None) -> Path:
    folder = base / f"{claim.PREFIX}{name}"
    folder.mkdir(mode=0o700)
    if record is not None:
        (folder / claim.OWNER_FILE).write_text(json.dumps(record))
    return folder


def _still_running(process: subprocess.Popen[bytes]) -> bool:
    try:
        process.wait(0.3)
    except subprocess.TimeoutExpired:
        return True
    return False


@as_root
def test_the_sweep_kills_a_dead_owners_uid_and_removes_its_folder(
    tmp_path: Path,
    dead_owner: dict[str, object],
    sandbox_uid: int,
    leftover: subprocess.Popen[bytes],
) -> None:
    folder = _folder(tmp_path, str(sandbox_uid), {**dead_owner, "uid": sandbox_uid})
    assert claim.sweep_leftovers(tmp_path) == 1
    assert leftover.wait(10) == -signal.SIGKILL
    assert not folder.exists()


def test_the_sweep_removes_a_dead_owners_folder_without_a_uid(
    tmp_path: Path, dead_owner: dict[str, object]
) -> None:
    folder = _folder(tmp_path, "k2x9wq", {**dead_owner, "uid": None})
    assert claim.sweep_leftovers(tmp_path) == 1
    assert not folder.exists()


@as_root
def test_the_sweep_leaves_a_live_owners_run_alone(
    tmp_path: Path, sandbox_uid: int, leftover: subprocess.Popen[bytes]
) -> None:
    folder = _folder(tmp_path, str(sandbox_uid), {**claim._owner(), "uid": sandbox_uid})
    os.utime(folder, (0, 0))  # however old it looks
    assert claim.sweep_leftovers(tmp_path) == 0
    assert _still_running(leftover) and folder.exists()


@as_root
@pytest.mark.parametrize("record", ["missing", "another-boot", "unreadable"])
def test_without_an_owner_known_dead_the_sweep_kills_nothing(
    tmp_path: Path,
    dead_owner: dict[str, object],
    sandbox_uid: int,
    leftover: subprocess.Popen[bytes],
    record: str,
) -> None:
    content = {
        "missing": None,
        "another-boot": {**dead_owner, "boot": "other", "uid": sandbox_uid},
        "unreadable": {"pid": "?"},
    }[record]
    folder = _folder(tmp_path, str(sandbox_uid), content)  # type: ignore[arg-type]
    fresh = _folder(tmp_path, "fresh", None)
    os.utime(folder, (0, 0))  # older than the longest run: the folder alone goes
    assert claim.sweep_leftovers(tmp_path) == 1
    assert not folder.exists() and fresh.exists()
    assert _still_running(leftover)


@as_root
@pytest.mark.parametrize("uid", [0, 1, "account", "mismatch"])
def test_the_sweep_never_kills_an_account_or_a_uid_not_its_folders(
    tmp_path: Path,
    dead_owner: dict[str, object],
    sandbox_uid: int,
    leftover: subprocess.Popen[bytes],
    uid: object,
) -> None:
    if uid == "account":
        uid = 65534  # nobody: in the sandbox range, but an account
    named = sandbox_uid if uid == "mismatch" else uid
    recorded = sandbox_uid + 1 if uid == "mismatch" else uid
    root_sleeper = subprocess.Popen(["sleep", "300"])
    try:
        folder = _folder(tmp_path, str(named), {**dead_owner, "uid": recorded})
        assert claim.sweep_leftovers(tmp_path) == 0
        assert folder.exists()
        assert _still_running(root_sleeper) and _still_running(leftover)
    finally:
        root_sleeper.kill()
        root_sleeper.wait()


@as_root
def test_the_sweep_follows_no_link_and_skips_folders_open_to_others(
    tmp_path: Path,
    dead_owner: dict[str, object],
    sandbox_uid: int,
    leftover: subprocess.Popen[bytes],
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    (target / claim.OWNER_FILE).write_text(json.dumps({**dead_owner, "uid": sandbox_uid}))
    (tmp_path / f"{claim.PREFIX}{sandbox_uid}").symlink_to(target)
    open_folder = _folder(tmp_path, "open", {**dead_owner, "uid": None})
    open_folder.chmod(0o777)
    assert claim.sweep_leftovers(tmp_path) == 0
    assert target.exists() and open_folder.exists() and _still_running(leftover)


def test_a_run_claims_its_folder_with_its_owner_and_releases_it() -> None:
    seen: list[dict[str, object]] = []
    real_spawn = run._spawn

    def spy(config: dict[str, object], scratch: Path, fds: tuple[int, ...]) -> object:
        seen.append(json.loads((Path(str(config["workdir"])) / claim.OWNER_FILE).read_text()))
        seen.append(config)
        return real_spawn(config, scratch, fds)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(run, "_spawn", spy)
        result = run_python("print(1)", market=SnapshotMarket(), search=LocalWebIndex([]))
        assert result.stdout == "1\n"
    record, config = seen
    assert record["pid"] == os.getpid() and claim.owner_state(record) == "alive"
    assert record["uid"] == config["uid"]
    assert not Path(str(config["workdir"])).exists()
