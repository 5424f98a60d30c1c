"""Write → client: how long a stored event takes to reach a reader in another process.

A plain Python process (this one) plays a turn's runner: it owns a running answer and stores
one event at a time, each carrying the time just before its transaction began. A client
streams that answer from the Procfile's gunicorn (gevent workers), so every event crosses
processes: the wake-up comes through PostgreSQL `LISTEN/NOTIFY`, Redis pub/sub, or SQLite's
`data_version` poll. Latency is arrival minus that time (one machine, one clock), so it holds
the commit, the wake-up, the reader's query and the HTTP hop. Side by side, the same reader
woken in the writer's own process (no cross-process hop) is the floor.

Run: `.venv/bin/python benchmarks/bench_wakeup.py [--events 200] [--interval 0.02] [--rounds 3]
[--configs postgres,postgres-redis,sqlite] [--hog]`; each round runs the floor and the
cross-process reader of every config, in turn (the floor first in odd rounds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import httpx
from sqlalchemy.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its helpers, when loaded by a test

import _hog  # noqa: E402
from _databases import scratch  # noqa: E402

from tests.support.gunicorn import gunicorn  # noqa: E402
from webapp.chat import event_log, leases
from webapp.chat.conversations import create_session
from webapp.chat.notes import StoredEvent
from webapp.chat.service import ChatService
from webapp.chat.wakeups import RedisListener  # noqa: E402
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.users import authenticate, create_api_token

LEASE = timedelta(minutes=10)
REDIS = "redis://127.0.0.1:6379/0"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def running_answer(engine: Engine) -> tuple[int, str, str]:
    user = authenticate(engine, "demo", "demo")
    assert user is not None
    session_id = create_session(engine, user.id).id
    _, message_id = leases.start_message(engine, user.id, session_id, "bench", LEASE, "bench")
    return user.id, session_id, message_id


def write(
    engine: Engine, message_id: str, count: int, interval: float, announce: list[RedisListener]
) -> None:
    for seq in range(1, count + 1):
        time.sleep(interval)
        data = json.dumps({"t": time.time()})
        event_log.append_events(
            engine, message_id, "bench", LEASE, [StoredEvent(seq, "packet", data)]
        )
        for redis in announce:
            redis.publish(message_id)


def over_http(url: str, redis: bool, events: int, interval: float, logs: Path) -> list[float]:
    """Latencies of events written here and read through gunicorn in other processes."""
    engine = create_store_engine(url)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    token = create_api_token(engine, "demo")
    _, session_id, message_id = running_answer(engine)
    env = {
        "DATABASE_URL": url,
        "SECRET_KEY": "bench",
        "ANTHROPIC_API_KEY": "",
        "REDIS_URL": REDIS if redis else "",
    }
    latencies: list[float] = []
    path = f"/api/chat/sessions/{session_id}/messages/{message_id}/stream"
    with (
        gunicorn(env, logs, name="wake") as server,
        httpx.Client(
            base_url=server.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(30, read=60),
        ) as client,
        client.stream("GET", path) as response,
    ):
        lines = response.iter_lines()
        next(lines)  # the opening comment: the reader is connected
        time.sleep(0.5)  # ... and waiting
        writer = threading.Thread(
            target=write,
            args=(engine, message_id, events, interval, [RedisListener(REDIS)] if redis else []),
        )
        writer.start()
        for line in lines:
            if line.startswith("data:"):
                latencies.append(time.time() - json.loads(line[5:])["t"])
                if len(latencies) == events:
                    break
        writer.join()
    engine.dispose()
    return latencies


def in_process(url: str, events: int, interval: float) -> list[float]:
    """The floor: the reader woken in the writer's own process."""
    engine = create_store_engine(url)
    upgrade_database(engine)
    seed_demo(engine, "demo")
    user_id, session_id, message_id = running_answer(engine)
    service = ChatService(engine, model=lambda: None, tools=lambda _: None)  # type: ignore[arg-type,return-value]
    latencies: list[float] = []

    def announce_after_write() -> None:
        for seq in range(1, events + 1):
            time.sleep(interval)
            data = json.dumps({"t": time.time()})
            event_log.append_events(
                engine, message_id, "bench", LEASE, [StoredEvent(seq, "packet", data)]
            )
            service.announce(message_id)

    writer = threading.Thread(target=announce_after_write)
    reader = service.events(user_id, session_id, message_id)
    writer.start()
    for event in reader:
        if event is not None:
            latencies.append(time.time() - json.loads(event.data)["t"])
            if len(latencies) == events:
                break
    writer.join()
    engine.dispose()
    return latencies


CONFIGS = {
    "postgres": ("PostgreSQL, LISTEN/NOTIFY", "postgres", False),
    "postgres-redis": ("PostgreSQL + Redis pub/sub", "postgres", True),
    "sqlite": ("SQLite, data_version poll", "sqlite", False),
}


def measure(
    configs: list[str], rounds: int, events: int, interval: float, admin_url: str
) -> list[tuple[str, list[float], list[float]]]:
    """Return each config's latencies across processes and its floor's, pooled over the
    rounds; in each round every config runs both, the floor first in odd rounds."""
    crossed: dict[str, list[float]] = {name: [] for name in configs}
    floors: dict[str, list[float]] = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as logs:
        for round_ in range(rounds):
            for name in configs:
                _, backend, redis = CONFIGS[name]
                sides = ["floor", "crossed"] if round_ % 2 == 0 else ["crossed", "floor"]
                for side in sides:
                    with scratch(backend, admin_url) as url:
                        if side == "floor":
                            floors[name] += in_process(url, events, interval)
                        else:
                            crossed[name] += over_http(url, redis, events, interval, Path(logs))
    return [(CONFIGS[name][0], crossed[name], floors[name]) for name in configs]


def _configs(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names or any(name not in CONFIGS for name in names):
        raise argparse.ArgumentTypeError(f"choose from {', '.join(CONFIGS)}")
    return names


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.02)
    parser.add_argument("--rounds", type=int, default=3, help="floor and product, each round")
    parser.add_argument("--configs", type=_configs, default=list(CONFIGS))
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("TEST_DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/test",
    )
    _hog.add_flag(parser)
    args = parser.parse_args(argv)
    with _hog.beside(args.hog):
        rows = measure(args.configs, args.rounds, args.events, args.interval, args.admin_url)
    print(
        f"write → client, {args.events} events {args.interval * 1000:g} ms apart, "
        "read through the Procfile's gunicorn (another process) vs in the writer's process, "
        f"{args.rounds} rounds interleaved, pooled"
    )
    print(
        f"{'wake-up':<28} {'events':>6} {'p50':>8} {'p99':>8} {'floor p50':>10} {'floor p99':>10}"
        f" {'p99 ÷ floor':>12}"
    )
    for name, crossed, floor in rows:
        print(
            f"{name:<28} {len(crossed):>6} {percentile(crossed, 50) * 1000:>6.1f}ms "
            f"{percentile(crossed, 99) * 1000:>6.1f}ms {percentile(floor, 50) * 1000:>8.1f}ms "
            f"{percentile(floor, 99) * 1000:>8.1f}ms"
            f" {percentile(crossed, 99) / percentile(floor, 99):>11.1f}x"
        )


if __name__ == "__main__":
    main()
