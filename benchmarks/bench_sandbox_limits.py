"""How soon each limit stops hostile code, next to the floor: a sandboxed `print(1)`.

The containment tests check which limit trips, never how fast (a busy machine must not fail
them); the speed lives here. Each of `--runs` rounds (default 3) runs every case once, the
floor among them, so all see the same machine; the table gives the median seconds, the
ratio to the floor, and, for the timeouts and the SQL deadline, how far past its limit the
call returned. Run: `.venv/bin/python benchmarks/bench_sandbox_limits.py`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from webapp.store.demo import seed_demo  # noqa: E402
from webapp.store.engine import create_store_engine  # noqa: E402
from webapp.store.migrate import upgrade_database  # noqa: E402
from webapp.tools.python.market import SnapshotMarket  # noqa: E402
from webapp.tools.python.run import run_python  # noqa: E402
from webapp.tools.sql.service import run_sql  # noqa: E402
from webapp.tools.web_index import LocalWebIndex  # noqa: E402

ROOM = 60.0  # every limit but the one measured has room, as in the tests


def python_case(code: str, **limits: float | int) -> Callable[[], str | None]:
    """Return a call that runs `code` in the sandbox and gives its error line."""
    options: dict[str, float | int] = {"timeout_s": ROOM, **limits}

    def call() -> str | None:
        result = run_python(code, market=SnapshotMarket(), search=LocalWebIndex([]), **options)  # type: ignore[arg-type]
        return result.error or ("truncated" if result.truncated else None)

    return call


def timed(call: Callable[[], str | None]) -> tuple[float, str | None]:
    """Return the wall time of one call and its outcome."""
    started = time.perf_counter()
    outcome = call()
    return time.perf_counter() - started, outcome


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="bench-limits-"))
    engine = create_store_engine(f"sqlite:///{folder / 'webapp.sqlite'}")
    upgrade_database(engine)
    user = seed_demo(engine, "demo")["demo"].id

    def sql_case(query: str, **options: float) -> Callable[[], str | None]:
        return lambda: run_sql(engine, user, query, **options).error  # type: ignore[arg-type]

    cases: list[tuple[str, Callable[[], str | None], float | None]] = [
        ("floor: print(1)", python_case("print(1)"), None),
        ("fork bomb -> process limit", python_case("import os\nwhile True:\n    os.fork()"), None),
        (
            "memory bomb -> memory limit",
            python_case("b = []\nwhile True:\n    b.append(bytearray(10**7))", memory_mb=512),
            None,
        ),
        (
            "20 MB of stderr -> output cap",
            python_case(
                "import sys\nfor _ in range(200_000):\n    sys.stderr.write('x' * 99 + '\\n')",
                output_limit=4096,
            ),
            None,
        ),
        ("busy loop -> timeout 1 s", python_case("while True: pass", timeout_s=1.0), 1.0),
        (
            "sleep -> timeout 1.5 s",
            python_case("import time\ntime.sleep(60)", timeout_s=1.5),
            1.5,
        ),
        (
            "recursive CTE -> SQL deadline 0.5 s",
            sql_case(
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
                "SELECT count(*) FROM r",
                timeout=0.5,
            ),
            0.5,
        ),
    ]
    times: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    outcomes: dict[str, str | None] = {}
    for _ in range(args.runs):  # every case once a round, the floor among them
        for name, call, _ in cases:
            seconds, outcomes[name] = timed(call)
            times[name].append(seconds)
    floor = statistics.median(times[cases[0][0]])
    print(f"{args.runs} rounds, every case once a round; medians")
    print(f"{'case':40} {'median s':>9} {'x floor':>8} {'past limit':>11}  outcome")
    for name, _, limit in cases:
        seconds = statistics.median(times[name])
        past = "" if limit is None else f"{seconds - limit:+.2f} s"
        print(f"{name:40} {seconds:9.2f} {seconds / floor:8.1f} {past:>11}  {outcomes[name]}")
    engine.dispose()


if __name__ == "__main__":
    main()
