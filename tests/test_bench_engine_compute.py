"""`benchmarks/_engine_compute.py` (part (b)'s "+ engine compute") run small: it runs the
app's offline turn and says how many events it made, never how fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.apps import app_on_copy, shared_template

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "_engine_compute.py"


def test_the_engines_compute_is_measured_on_the_apps_own_turn(tmp_path: Path) -> None:
    database = tmp_path / "engine.sqlite"
    app_on_copy(shared_template(), database)  # a migrated, seeded copy
    done = subprocess.run(
        [sys.executable, str(SCRIPT), f"sqlite:///{database}", "--turns", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["turns"] == 2 and found["events"] > 10
    assert 0 < found["fastest_ms"] <= found["median_ms"]
