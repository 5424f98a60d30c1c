"""execute_python's containment: secrets, fork and memory bombs, endless loops, huge output."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from webapp.tools.python import isolate, procs
from webapp.tools.python import run as sandbox_run
from webapp.tools.python.market import SnapshotMarket
from webapp.tools.python.results import PythonResult, SandboxError
from webapp.tools.python.run import run_python
from webapp.tools.web_index import LocalWebIndex

ROOT = os.geteuid() == 0
as_root = pytest.mark.skipif(not ROOT, reason="namespaces and a throwaway uid need root")
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-test-secret",
    "DATABASE_URL": "postgresql://postgres:pw@127.0.0.1/test",
    "SECRET_KEY": "flask-secret-value",
    "FINNHUB_API_KEY": "finnhub-secret",
    "EXA_API_KEY": "exa-secret",
}


def run(code: str, **kwargs: object) -> PythonResult:
    """Run with offline data; the clock has room (30 s) so a busy machine trips only the limit
    under test, and tests of the timeout itself pass their own short one."""
    kwargs.setdefault("timeout_s", 30.0)
    return run_python(
        code,
        market=SnapshotMarket(),
        search=LocalWebIndex([]),
        **kwargs,  # type: ignore[arg-type]
    )


def launcher_processes() -> list[int]:
    """Return the pids of any sandbox launcher still alive on the machine."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            except OSError:
                continue
            if str(sandbox_run.LAUNCHER).encode() in cmdline:
                found.append(int(entry.name))
    return found


def test_plain_code_runs_and_prints() -> None:
    result = run("total = sum(range(10))\nprint('total', total)")
    assert (result.stdout, result.stderr, result.error, result.truncated) == (
        "total 45\n",
        "",
        None,
        False,
    )
    assert result.ok


def test_the_environment_is_empty_of_the_apps_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    code = (
        "import os, json\n"
        "print(json.dumps(dict(os.environ)))\n"
        "import subprocess\n"
        "print(subprocess.run(['cat', '/proc/self/environ'], capture_output=True).stdout)\n"
    )
    result = run(code)
    assert result.error is None
    env_line, proc_environ = result.stdout.splitlines()
    assert set(json.loads(env_line)) <= {"PATH", "LANG", "HOME", "LC_CTYPE"}
    assert "PATH=" in proc_environ
    for value in SECRETS.values():
        assert value not in result.stdout


@as_root
def test_the_parents_environment_cannot_be_read_through_proc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRETS["ANTHROPIC_API_KEY"])
    code = f"print(open('/proc/{os.getpid()}/environ', 'rb').read())"
    result = run(code)
    # Its /proc shows only its own pid namespace: the app's process is not even there.
    assert result.error is not None and "FileNotFoundError" in result.error
    assert SECRETS["ANTHROPIC_API_KEY"] not in result.stdout + result.stderr


@as_root
def test_the_code_sees_only_its_own_processes() -> None:
    code = (
        "import os, subprocess\n"
        "child = subprocess.Popen(['sleep', '30'])\n"
        "print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), os.getpid())\n"
        "child.kill()"
    )
    result = run(code)
    assert result.error is None
    # 1 is the sandbox's init, 2 the code, 3 the child it started.
    assert result.stdout == "[1, 2, 3] 2\n"


def test_the_scratch_folder_is_fresh_and_removed() -> None:
    first = run(
        "import os\nopen('note.txt', 'w').write('hi')\nprint(os.getcwd())\nprint(os.listdir('.'))"
    )
    assert first.error is None
    scratch, listing = first.stdout.splitlines()
    assert listing == "['note.txt']"
    assert not Path(scratch).exists()
    assert not Path(scratch).parent.exists()
    second = run("import os\nprint(os.getcwd(), os.listdir('.'))")
    assert second.stdout.split()[0] != scratch
    assert second.stdout.split()[1] == "[]"


def test_a_fork_bomb_is_stopped_by_the_process_limit() -> None:
    # How fast it is stopped is benchmarks/bench_sandbox_limits.py's to measure.
    result = run("import os\nwhile True:\n    os.fork()", timeout_s=60.0)
    assert result.error is not None and "process limit" in result.error
    assert launcher_processes() == []


def test_a_fork_bomb_that_ignores_errors_times_out_and_is_killed() -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = run(code, timeout_s=1.5)
    assert result.error == "timed out after 1.5 s"
    assert launcher_processes() == []


@pytest.mark.parametrize(
    ("code", "memory_mb"),
    [
        ("blocks = []\nwhile True:\n    blocks.append(bytearray(10**7))", 512),
        ("x = bytearray(10**10)", 512),
        ("x = 'a' * (300 * 1024 * 1024)", 128),
    ],
    ids=["growing", "one-huge", "smaller-limit"],
)
def test_a_memory_bomb_hits_the_memory_limit(code: str, memory_mb: int) -> None:
    result = run(code, memory_mb=memory_mb, timeout_s=60.0)  # only the memory limit may trip
    assert result.error == f"memory limit reached ({memory_mb} MB)"


@pytest.mark.parametrize(
    ("code", "timeout_s"),
    [("while True: pass", 1.0), ("import time\ntime.sleep(60)", 1.5)],
    ids=["busy", "sleeping"],
)
def test_an_endless_run_times_out(code: str, timeout_s: float) -> None:
    result = run(code, timeout_s=timeout_s)
    assert result.error == f"timed out after {timeout_s:g} s"
    assert launcher_processes() == []


@pytest.mark.parametrize("stream", ["stdout", "stderr"], ids=["stdout", "stderr"])
def test_huge_output_is_capped_and_flagged(stream: str) -> None:
    code = f"import sys\nfor _ in range(200_000):\n    sys.{stream}.write('x' * 99 + '\\n')"
    result = run(code, output_limit=4096, timeout_s=60.0)  # only the output cap may trip
    assert result.truncated and result.error is None
    captured = getattr(result, stream)
    assert len(captured.encode()) == 4096 and set(captured) == {"x", "\n"}


def test_a_file_bigger_than_the_limit_cannot_be_written() -> None:
    result = run(
        "with open('big', 'wb') as f:\n    for _ in range(40):\n        f.write(b'x' * 10**6)"
    )
    assert result.error is not None and "File too large" in result.error


@as_root
def test_there_is_no_network_not_even_loopback() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)"
        result = run(code)
    assert result.error is not None and "unreachable" in result.error.lower()


@as_root
def test_the_project_and_private_folders_are_hidden(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    code = (
        "import os\n"
        f"print(os.path.exists({str(sandbox_run.PROJECT_ROOT / 'pyproject.toml')!r}))\n"
        f"print(os.path.exists({str(secret)!r}))\n"
        "print(sorted(os.listdir('/root')))\n"
        "print(os.listdir('/run'))\n"
        "import webapp\n"
    )
    result = run(code, hide=[tmp_path])
    assert result.stdout.splitlines()[:2] == ["False", "False"]
    assert "TOP SECRET" not in result.stdout
    assert result.stdout.splitlines()[3] == "[]"
    assert result.error == "ModuleNotFoundError: No module named 'webapp' (line 6)"


@as_root
def test_files_outside_the_scratch_folder_cannot_be_written() -> None:
    target = Path("/etc/python-sandbox-test-marker")  # a folder the code still sees
    result = run(f"open({str(target)!r}, 'w').write('x')")
    assert result.error is not None and "PermissionError" in result.error
    assert not target.exists()


@as_root
def test_services_data_logs_and_other_software_are_out_of_sight() -> None:
    code = (
        "import os\nfor folder in ('/var', '/opt', '/srv', '/mnt', '/boot'):\n"
        "    print(folder, os.listdir(folder) if os.path.isdir(folder) else [])"
    )
    result = run(code)
    assert result.error is None
    assert result.stdout.splitlines() == [
        f"{f} []" for f in ("/var", "/opt", "/srv", "/mnt", "/boot")
    ]


@as_root
def test_a_process_that_leaves_the_group_is_killed_too() -> None:
    code = "import subprocess\nsubprocess.Popen(['sleep', '41.5'], start_new_session=True)\nprint('ok')"
    result = run(code)
    assert result.stdout == "ok\n"
    time.sleep(0.1)
    sleepers = [
        e.name
        for e in os.scandir("/proc")
        if e.name.isdigit() and _cmdline(e.name) == b"sleep\x0041.5\x00"
    ]
    assert sleepers == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


ERRORS = [
    ("def f(:\n    pass", "SyntaxError: invalid syntax (line 1)"),
    ("x = 1\ny = 0\nprint(x / y)", "ZeroDivisionError: division by zero (line 3)"),
    ("def f():\n    raise ValueError('bad value')\n\nf()", "ValueError: bad value (line 2)"),
    ("import sys\nsys.exit(3)", "exited with status 3"),
    ("import os\nos._exit(4)", "exited with status 4"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt (line 1)"),
    ("input()", "EOFError: EOF when reading a line (line 1)"),
    ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", "killed by SIGSEGV"),
]


@pytest.mark.parametrize(
    ("code", "error"), ERRORS, ids=[e.split(":")[0].split()[0] for _, e in ERRORS]
)
def test_a_failure_is_reported_as_one_clear_line(code: str, error: str) -> None:
    result = run(code)
    assert result.error == error
    assert str(sandbox_run.LAUNCHER) not in result.stderr  # the launcher's own frames are left out


@pytest.mark.parametrize(
    "code", ["import sys\nsys.exit(0)", "import sys\nsys.exit()"], ids=["0", "none"]
)
def test_a_clean_exit_is_not_an_error(code: str) -> None:
    assert run(code).error is None


def test_the_traceback_shows_the_code_line() -> None:
    result = run("values = [1]\nprint(values[5])")
    assert 'File "<code>", line 2' in result.stderr and "print(values[5])" in result.stderr
    assert result.error == "IndexError: list index out of range (line 2)"


def test_output_that_is_not_utf8_is_replaced_not_fatal() -> None:
    result = run("import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe')")
    assert result.stdout == "ok \ufffd\ufffd" and result.error is None


def test_user_classes_live_in_a_real_main_module() -> None:
    code = (
        "import dataclasses, pickle\n"
        "@dataclasses.dataclass\nclass P:\n    x: int\n"
        "print(pickle.loads(pickle.dumps(P(3))).x, __name__)"
    )
    assert run(code).stdout == "3 __main__\n"


BAD_INPUT = [
    ({"code": 42}, "text"),
    ({"code": "   "}, "no code"),
    ({"code": "x" * (sandbox_run.MAX_CODE_CHARS + 1)}, "too long"),
    ({"code": "print(1)\x00"}, "NUL"),
    ({"code": "print(1)", "timeout_s": 0}, "timeout_s"),
    ({"code": "print(1)", "timeout_s": 1000}, "timeout_s"),
    ({"code": "print(1)", "timeout_s": "5"}, "timeout_s"),
    ({"code": "print(1)", "memory_mb": 10}, "memory_mb"),
    ({"code": "print(1)", "memory_mb": 1.5}, "memory_mb"),
    ({"code": "print(1)", "output_limit": 10}, "output_limit"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_INPUT, ids=[m for _, m in BAD_INPUT])
def test_bad_input_is_refused_with_a_sandbox_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SandboxError, match=message):
        run_python(**kwargs)  # type: ignore[arg-type]


def test_a_sandbox_that_cannot_be_set_up_does_not_run_the_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sandbox_run, "LIB_DIR", tmp_path / "missing")
    result = run("print('ran anyway')")
    assert result.stdout == ""
    assert result.error is not None and result.error.startswith("the sandbox could not be set up")


@as_root
@pytest.mark.parametrize(
    "uids", [range(0, 1), range(1, 5), range(2**32 - 1, 2**32)], ids=["root", "system", "minus-one"]
)
def test_a_privileged_or_invalid_uid_is_never_used(
    monkeypatch: pytest.MonkeyPatch, uids: range
) -> None:
    monkeypatch.setattr(sandbox_run, "SANDBOX_UIDS", uids)
    with pytest.raises(SandboxError, match="sandbox user"):
        run("print(1)")


@pytest.mark.parametrize(
    ("uid", "allowed"),
    [
        (0, False),
        (1, False),
        (999, False),
        (65534, True),
        (40_000, True),
        (2**32 - 1, False),
        (True, False),
    ],
    ids=["root", "daemon", "system", "nobody-range", "default-range", "minus-one", "bool"],
)
def test_only_unprivileged_uids_count_as_sandbox_uids(uid: object, allowed: bool) -> None:
    assert procs.is_sandbox_uid(uid) is allowed


def test_dropping_to_root_is_refused_before_any_change() -> None:
    groups = os.getgroups()
    with pytest.raises(PermissionError, match="privileged"):
        isolate.drop_privileges(0)
    assert os.getgroups() == groups
