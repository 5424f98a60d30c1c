"""The sandbox's entry point: a supervisor, the sandbox's init, and the code's own process.

`run_python` starts it as `python -I launch.py CONFIG_JSON` with an empty environment, in a
new session, with the data pipe fds and one end of a control socket. Three processes:

- The supervisor (this one; root when the app is) runs no code of the model's. It adopts
  orphans (a child subreaper), so the run's whole tree stays below it, and waits on the
  control socket: end-of-file there means the app's process is gone, however it ended (a
  SIGKILL included) and whichever of its threads started the run, since a socket closes with
  the process, not the thread. Then it kills the whole tree, removes the run's folder and
  exits. Without a cgroup memory limit it also sums the tree's memory every 20 ms (shared
  memory, memfds and SysV segments included, mapped or not) and kills the tree past the
  limit: one limit for the call, however many processes it forks. At the end it kills
  whatever is left, removes the run's SysV IPC objects, reports on the control socket and
  exits as the code did. As root it first enters the run's own IPC namespace, which the
  tree shares and which ends with them.
- As root, the init of a new pid namespace: it builds the code's view of the files
  (`isolate.py`), starts the code, reaps orphans and exits with it; the kernel then kills
  every process left in the namespace, setsid or not. It dies with the supervisor
  (PR_SET_PDEATHSIG: its parent is single-threaded, so the thread that forked it is the
  process).
- The code's process: resource limits, the throwaway uid, then the code. Without root it is
  the supervisor's child and dies with it (PR_SET_PDEATHSIG).

The supervisor's watch over the tree (its children, IPC objects and memory, and ending it)
is `tree_watch.py`.

Any failure during setup ends the run with SETUP_FAILED: it never runs the code with less
isolation than it promised.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import json
import linecache
import os
import resource
import select
import signal
import sys
import traceback
import types
from collections.abc import Mapping
from typing import Any, NoReturn

if __package__:
    from .isolate import (
        CLONE_NEWIPC,
        CLONE_NEWPID,
        Kernel,
        drop_privileges,
        isolate,
        join_cgroup,
        limit,
        limit_ipc,
    )
    from .tree_watch import Children, RunIpc, end_tree, watch
else:  # run as a script by run_python: the sibling modules are top-level
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from isolate import (  # type: ignore[no-redef, import-not-found]
        CLONE_NEWIPC,
        CLONE_NEWPID,
        Kernel,
        drop_privileges,
        isolate,
        join_cgroup,
        limit,
        limit_ipc,
    )
    from tree_watch import (  # type: ignore[no-redef, import-not-found]
        Children,
        RunIpc,
        end_tree,
        watch,
    )

SETUP_FAILED = 125
CODE_NAME = "<code>"


def _error_line(exc: BaseException, memory_mb: int) -> str:
    if isinstance(exc, MemoryError):
        return f"memory limit reached ({memory_mb} MB)"
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    lineno = exc.lineno if isinstance(exc, SyntaxError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == CODE_NAME:
            lineno = frame.lineno
    if isinstance(exc, BlockingIOError):
        last += " - the process limit was reached"
    return f"{last} (line {lineno})" if lineno else last


def _print_traceback(exc: BaseException, lib_dir: str) -> None:
    report = traceback.TracebackException.from_exception(exc)
    # Leave out the launcher's and the helper library's frames: the author wrote only <code>.
    report.stack = traceback.StackSummary.from_list(
        [
            frame
            for frame in report.stack
            if frame.filename != __file__ and not frame.filename.startswith(lib_dir)
        ]
    )
    sys.stderr.write("".join(report.format()))


def _run(code: str, memory_mb: int, lib_dir: str) -> str | None:
    """Run `code` as __main__ and return its error line, or None when it ran to the end."""
    linecache.cache[CODE_NAME] = (len(code), None, code.splitlines(True), CODE_NAME)
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = module
    try:
        exec(compile(code, CODE_NAME, "exec"), module.__dict__)
    except SystemExit as exc:
        if exc.code is None or exc.code == 0:
            return None
        return f"exited with status {exc.code}"
    except BaseException as exc:  # every failure becomes the run's error line
        with contextlib.suppress(Exception):  # the error line still says what failed
            _print_traceback(exc, lib_dir)
        return _error_line(exc, memory_mb)
    return None


def _setup_failed(exc: BaseException) -> NoReturn:
    """Report a setup failure to the parent, which fails closed."""
    with contextlib.suppress(Exception):
        sys.stderr.write(f"sandbox setup failed: {exc}\n")
        sys.stderr.flush()
    os._exit(SETUP_FAILED)


def _code(config: Mapping[str, Any], code: str, supervisor: int | None) -> NoReturn:
    """Be the code's process: limits, the throwaway uid, then the code itself."""
    try:
        if supervisor is not None:  # no pid namespace: tie this process to the supervisor
            Kernel().die_with_parent()
            if os.getppid() != supervisor:
                raise RuntimeError("the supervisor ended before the code started")
            join_cgroup(config["cgroup"])
        limit(config)
        if config["uid"] is not None:
            drop_privileges(config["uid"])
        os.chdir(config["scratch"])
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path[:] = [config["lib_dir"], *(p for p in sys.path if p != here)]
        rpc = importlib.import_module("_sandbox_rpc")
        rpc.connect(config["requests_fd"], config["replies_fd"])
    except Exception as exc:
        _setup_failed(exc)
    error = _run(code, config["memory_bytes"] // (1024 * 1024), config["lib_dir"])
    rpc.report_exit(error)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):  # the code may have closed or replaced them
            if stream is not None:
                stream.flush()
    os._exit(0 if error is None else 1)


def _reader_gone(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(event & select.POLLERR for _, event in poller.poll(0))


def _init(config: Mapping[str, Any], code: str, status_w: int) -> NoReturn:
    """Be the pid namespace's init: set up the code's view, start it, exit with it."""
    try:
        Kernel().die_with_parent()
        if _reader_gone(status_w):  # the supervisor ended before the tie was made
            raise RuntimeError("the supervisor ended before the sandbox was set up")
        join_cgroup(config["cgroup"])
        isolate(config)
    except Exception as exc:
        _setup_failed(exc)
    child = os.fork()
    if child == 0:
        os.close(status_w)
        _code(config, code, None)
    for fd in (config["requests_fd"], config["replies_fd"]):
        os.close(fd)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        if pid == child:
            # The code's own wait status, for the supervisor to exit as the code did. Exiting
            # here ends the namespace: the kernel kills every process still in it.
            with contextlib.suppress(OSError):
                os.write(status_w, status.to_bytes(4, "little"))
            os._exit(0)


def _exit_as(status: int) -> NoReturn:
    """Exit as a process with wait status `status` did: same exit code or same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):
            Kernel().no_core_dumps()
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        with contextlib.suppress(OSError):
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def supervise(config: Mapping[str, Any], code: str) -> NoReturn:
    """Be the supervisor: start the sandbox, watch it, end it, report, exit as the code did."""
    kernel = Kernel()
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        kernel.adopt_orphans()
        own_ipc = False
        if config["ipc_namespace"]:
            # This process and all below it: the namespace and its objects end with the run.
            # Where the kernel gives none, the run's objects are removed at its end instead.
            with contextlib.suppress(OSError):
                kernel.unshare(CLONE_NEWIPC)
                own_ipc = True
            if own_ipc:
                limit_ipc(config["memory_bytes"])
        if config["uid"] is not None:
            kernel.unshare(CLONE_NEWPID)  # our next child is the new namespace's init
        ipc = RunIpc(own_ipc, config["uid"])
        status_r, status_w = os.pipe()
    except Exception as exc:
        _setup_failed(exc)
    me = os.getpid()
    child = os.fork()
    if child == 0:
        os.close(config["control_fd"])
        os.close(status_r)
        if config["uid"] is not None:
            _init(config, code, status_w)
        os.close(status_w)
        _code(config, code, me)
    os.close(status_w)
    for fd in (config["requests_fd"], config["replies_fd"]):
        os.close(fd)
    children = Children(child)
    over = watch(config, child, children, ipc)
    status = children.status
    assert status is not None
    if config["uid"] is not None:
        os.set_blocking(status_r, False)
        with contextlib.suppress(OSError):
            reported = os.read(status_r, 4)
            # The init's own status only when it ended before the code did (setup failed).
            status = int.from_bytes(reported, "little") if len(reported) == 4 else status
    end_tree(config, children, ipc)  # a child the code left running (setsid or not) ends here
    with contextlib.suppress(OSError):
        os.write(config["control_fd"], json.dumps({"memory_exceeded": over}).encode() + b"\n")
    _exit_as(status)


def main(argv: list[str]) -> None:
    """Set up the sandbox from argv[1] (JSON) and run the code; never returns."""
    config = json.loads(argv[1])
    try:
        with open(config["code_path"], encoding="utf-8") as f:
            code = f.read()
    except OSError as exc:
        _setup_failed(exc)
    supervise(config, code)


if __name__ == "__main__":
    main(sys.argv)
