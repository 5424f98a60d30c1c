"""Benchmarks run at a small size by the test command, so none can stop running unnoticed.

Only what each measures is checked, never how fast: speed is the benchmarks' to report.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_chat_wakeups import redis_reachable

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))  # the benchmarks' own helpers (_hog, _databases, ...)


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_stream_bytes_runs_and_the_settled_stream_sends_less(
    capsys: pytest.CaptureFixture[str],
) -> None:
    load("bench_stream_bytes").main((10, 100), ())
    rows = [
        line.split() for line in capsys.readouterr().out.splitlines() if line[:7].strip().isdigit()
    ]
    assert [row[0] for row in rows] == ["10", "100"]
    for row in rows:
        settled, whole = float(row[3].rstrip("KB")), float(row[7].rstrip("KB"))
        assert settled < whole


def test_history_sidebar_runs_and_lists_a_page_of_chats(
    capsys: pytest.CaptureFixture[str],
) -> None:
    load("bench_history_sidebar").main((3, 60), rounds=1)
    rows = [
        line.split() for line in capsys.readouterr().out.splitlines() if line[:6].strip().isdigit()
    ]
    assert [row[0] for row in rows] == ["3", "60"]
    # The page of 60 chats lists 50 of them: more bytes than 3 chats, a page's worth at most.
    small, paged = (float(row[2].rstrip("K")) for row in rows)
    assert small < paged


def test_history_runs_and_a_long_chats_page_is_one_page(capsys: pytest.CaptureFixture[str]) -> None:
    load("bench_history").main((10, 60), rounds=1)
    rows = {
        row[0]: row
        for row in (line.split() for line in capsys.readouterr().out.splitlines())
        if row and row[0].isdigit()
    }
    assert set(rows) == {"10", "60"}
    # messages | page ms ratio size shown | API ms ratio size listed | first ratio ÷new
    assert [rows[n][5] for n in ("10", "60")] == ["10", "20"]
    assert [rows[n][10] for n in ("10", "60")] == ["10", "60"]
    assert float(rows["60"][4].removesuffix("KB")) <= 300


def _rows(out: str, marker: str) -> list[str]:
    return [line for line in out.splitlines() if marker in line]


def test_packets_runs_with_its_json_decode_floor(capsys: pytest.CaptureFixture[str]) -> None:
    load("bench_packets").main(["--deltas", "50,500", "--rounds", "2"])
    rows = _rows(capsys.readouterr().out, " packets: decode ")
    assert [row.split()[0] for row in rows] == ["54", "513"]
    assert all(" met" in row or "NOT met" in row for row in rows)


def test_targets_runs_and_grades_against_twice_the_floor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = load("bench_targets")
    assert bench.GOAL == 2.0
    bench.main(["--counts", "200", "--rounds", "1"])
    out = capsys.readouterr().out
    assert "goal: ≤ 2x the floor" in out
    graded = [row for row in _rows(out, " rows, ") if row.rstrip().endswith("x floor")]
    assert len(graded) == 4 and all(" met = " in row for row in graded)
    assert len(_rows(out, "  from_sql ")) == 4


@pytest.mark.postgres
def test_transactions_counts_what_postgresql_sees(
    pg_admin_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    load("bench_transactions").main(
        ["--deltas", "5", "--idle", "0", "--no-offline", "--admin-url", pg_admin_url]
    )
    (row,) = _rows(capsys.readouterr().out, "Claude-shaped")
    events, commits, xact = (int(cell) for cell in row.split()[-4:-1])
    assert events > 5 and 0 < commits <= xact  # the database sees at least the app's own


# The benchmarks that start servers (gunicorn, the fake Claude): the rows each prints and
# their counts, the floor's beside the product's, round after round.


def _cells(out: str) -> list[list[str]]:
    """The table rows of a bench_service run, split on runs of two or more spaces."""
    return [[c.strip() for c in line.split("  ") if c.strip()] for line in out.splitlines()]


def _service(argv: list[str]) -> str:
    """Run bench_service as its command line does, in a process of its own (its `asyncio.run`
    and signal handlers need a main thread with no event loop, and a pytest worker that ran a
    browser test holds Playwright's); return what it printed, having checked it succeeded."""
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_service.py"), *argv],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_service_idle_interleaves_floor_and_app() -> None:
    argv = ["idle", "--db", "sqlite", "--streams", "6", "--per-answer", "3", "--window", "0.5"]
    argv += ["--probes", "3", "--rounds", "1", "--max-seconds", "300"]
    rows = [row for row in _cells(_service(argv)) if row[:2] == ["6", "1"]]
    assert [row[2] for row in rows] == ["floor", "app"]
    assert all(row[3] == "6/6" and row[8] == "0/3" for row in rows)  # open; probe failures
    assert "2 turns, 2 silent at Claude" in rows[1][-1]  # 6 streams on 2 held answers


@pytest.mark.postgres
def test_service_turns_alternates_rounds(pg_admin_url: str) -> None:
    argv = ["turns", "--turns", "6", "--rounds", "2", "--admin-url", pg_admin_url]
    out = _service([*argv, "--max-seconds", "300"])
    rows = [row for row in _cells(out) if row[:1] in (["1"], ["2"])]
    assert [(row[0], row[1]) for row in rows] == [
        ("1", "floor"),
        ("1", "app"),
        ("2", "floor"),
        ("2", "app"),
    ]
    # Every turn answered, and the floor replays exactly the app's frames.
    assert {row[3] for row in rows} == {"0"}
    # The workers' CPU per turn (the floor's may round to nothing in a round this small).
    cpu = {row[1]: float(row[9].removesuffix(" ms")) for row in rows}
    assert cpu["app"] > 0 and cpu["floor"] >= 0
    assert len({row[2] for row in rows}) == 1 and int(rows[0][2]) > 2
    assert sum(1 for row in _cells(out) if row[:1] == ["app÷floor"]) == 2
    assert any(row[:2] == ["all", "median of 2"] for row in _cells(out))


def test_service_wakeup_classes_every_stream() -> None:
    argv = ["wakeup", "--configs", "sqlite", "--rounds", "2", "--deltas", "4", "--lead", "0.5"]
    out = _service([*argv, "--interval", "0.02", "--max-seconds", "300"])
    rows = [row for row in _cells(out) if row[:1] == ["SQLite, 1 host"]]
    classed = [row for row in rows if row[1].startswith("A: ")]
    # Two turns, four streams each, every one classed as the turn's worker or another.
    assert sum(int(row[2]) for row in classed) == 8
    assert classed[0][1] == "A: the turn's worker" and int(classed[0][3]) > 0


def _wakeup_rows(out: str) -> dict[str, list[str]]:
    return {
        line[:28].strip(): line[28:].split()
        for line in out.splitlines()
        if line.startswith(("PostgreSQL", "SQLite"))
    }


def test_wakeup_reads_every_event_beside_its_floor(capsys: pytest.CaptureFixture[str]) -> None:
    load("bench_wakeup").main(["--events", "4", "--rounds", "2", "--configs", "sqlite"])
    rows = _wakeup_rows(capsys.readouterr().out)
    (events, *figures) = rows["SQLite, data_version poll"]
    assert events == "8" and len(figures) == 5  # p50, p99, the floor's, and the ratio


@pytest.mark.postgres
@pytest.mark.skipif(not redis_reachable(), reason="no Redis at 127.0.0.1:6379")
def test_wakeup_on_postgresql_and_redis(
    pg_admin_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--events", "4", "--rounds", "1", "--configs", "postgres,postgres-redis"]
    load("bench_wakeup").main([*argv, "--admin-url", pg_admin_url])
    rows = _wakeup_rows(capsys.readouterr().out)
    assert set(rows) == {"PostgreSQL, LISTEN/NOTIFY", "PostgreSQL + Redis pub/sub"}
    assert {row[0] for row in rows.values()} == {"4"}


def test_sandbox_limits_each_limit_trips(capsys: pytest.CaptureFixture[str]) -> None:
    load("bench_sandbox_limits").main(["--runs", "1"])
    lines = {line[:40].strip(): line[40:] for line in capsys.readouterr().out.splitlines()}
    assert lines["floor: print(1)"].split()[1] == "1.0"  # the floor's own ratio
    for case, outcome in (
        ("fork bomb -> process limit", "the process limit was reached"),
        ("memory bomb -> memory limit", "memory limit reached"),
        ("20 MB of stderr -> output cap", "truncated"),
        ("busy loop -> timeout 1 s", "timed out after 1 s"),
        ("sleep -> timeout 1.5 s", "timed out after 1.5 s"),
        ("recursive CTE -> SQL deadline 0.5 s", "was stopped"),
    ):
        assert outcome in lines[case], (case, lines[case])


def test_the_hog_runs_a_busy_loop_per_core_and_stops_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hog = load("_hog")
    with hog.beside(True, count=2) as pids:
        assert len(pids) == 2
        for pid in pids:  # each one the busy loop, alive
            assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[-2] == hog.LOOP.encode()
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids)  # killed and reaped
    assert "beside a CPU hog: 2 busy loops" in capsys.readouterr().out
    with hog.beside(False) as none:
        assert none == []
