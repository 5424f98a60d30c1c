"""Benchmarks run at a small size by the test command, so none can stop running unnoticed.

Only what each measures is checked, never how fast: speed is the benchmarks' to report.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


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
