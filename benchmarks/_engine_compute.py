"""The offline engine's own compute per turn, in-process: the "+ engine compute" of part (b)'s goal.

`python benchmarks/_engine_compute.py DATABASE_URL [--turns 20] [--question ...]` runs the
turn the app runs (`run_turn` with the app's offline model and tools, for a user of the
benchmark's database) into a sink that keeps the events in memory: no HTTP, no writes of
events, no readers. It prints one JSON line: the CPU time (`time.process_time`) per turn, the
fastest and the median of `--turns` turns after one warm-up turn, and the events per turn.
Part (b) runs it as a child process on a copy of its database.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp import create_app  # noqa: E402
from webapp.services import chat_service  # noqa: E402
from webapp.store.app_db import get_engine  # noqa: E402
from webapp.store.users import create_user  # noqa: E402
from webapp.turn.runner import run_turn, start_checkpoint  # noqa: E402


class MemorySink:
    """Keeps a turn's events as the store would get them (JSON text), and nothing else."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def emit(self, event: str, data: dict[str, Any]) -> None:
        self.events.append((event, json.dumps(data, separators=(",", ":"))))

    def save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        json.dumps(checkpoint)


def measure(database_url: str, question: str, turns: int) -> dict[str, float]:
    app = create_app({"DATABASE_URL": database_url, "ANTHROPIC_API_KEY": None})
    with app.app_context():
        service = chat_service(app)
        user = create_user(get_engine(app), "engine-compute", "engine-compute-password")
        times: list[float] = []
        events = 0
        for i in range(turns + 1):
            model, tools = service.model(), service.tools(user.id)
            sink = MemorySink()
            start = time.process_time()
            run_turn(model, tools, sink, start_checkpoint([], question), service.max_tokens)
            spent = time.process_time() - start
            model.close()
            if i:  # the first turn warms the engine's library and caches up
                times.append(spent)
                events = len(sink.events)
    return {
        "fastest_ms": 1e3 * min(times),
        "median_ms": 1e3 * statistics.median(times),
        "events": events,
        "turns": turns,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database_url")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--question", default="Can I deduct charitable donations?")
    args = parser.parse_args()
    print(json.dumps(measure(args.database_url, args.question, args.turns)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
