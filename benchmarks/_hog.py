"""A CPU hog to run a benchmark beside: one busy-loop process per core.

Every benchmark that grades an issue-21 row takes `--hog` (or `BENCH_HOG=1` in the
environment): the benchmark starts the busy loops itself, before it measures, and stops them
by pid when it is done, however it ends. Each loop is a plain `python -c "while True: pass"`
at normal priority that dies with the benchmark (`PR_SET_PDEATHSIG`), so a killed run leaves
none behind. The figures then say what the code costs when the cores are not its own.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

ENV = "BENCH_HOG"
LOOP = "while True: pass"


def wanted() -> bool:
    """Tell whether the environment asks for the hog (BENCH_HOG set to anything but 0/empty)."""
    return os.environ.get(ENV, "").strip() not in ("", "0")


def add_flag(parser: argparse.ArgumentParser) -> None:
    """Give `parser` the `--hog` flag (default: BENCH_HOG)."""
    parser.add_argument(
        "--hog",
        action="store_true",
        default=wanted(),
        help=f"measure beside a busy-loop process per core (or set {ENV}=1)",
    )


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def start(count: int | None = None) -> list[subprocess.Popen[bytes]]:
    """Start `count` busy loops (default: one per core) and return them."""
    loops = []
    for _ in range(count or os.cpu_count() or 1):
        loops.append(
            subprocess.Popen(
                [sys.executable, "-c", LOOP],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent,
            )
        )
    return loops


def stop(loops: list[subprocess.Popen[bytes]]) -> None:
    """Kill each busy loop by its pid and reap it."""
    for loop in loops:
        if loop.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                loop.kill()
    for loop in loops:
        with contextlib.suppress(subprocess.TimeoutExpired):
            loop.wait(5)


@contextlib.contextmanager
def beside(enabled: bool, count: int | None = None) -> Iterator[list[int]]:
    """Run the block beside the busy loops when `enabled` (else alone); yield their pids.

    Prints one line saying which, so every printed table carries how it was measured."""
    if not enabled:
        print("# measured without a CPU hog (--hog to add one)", flush=True)
        yield []
        return
    loops = start(count)
    try:
        time.sleep(0.2)  # let them reach their loop
        pids = [loop.pid for loop in loops]
        print(f"# measured beside a CPU hog: {len(pids)} busy loops (pids {pids})", flush=True)
        yield pids
    finally:
        stop(loops)
