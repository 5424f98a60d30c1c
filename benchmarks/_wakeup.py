"""Part (f): how long an event written by one process takes to reach a reader in another.

Host A runs the turn: the fake Claude sends text deltas at a steady pace, each carrying its
send time. Streams read the answer from A and from B (a second gunicorn on the same
database); /proc says which worker serves each stream and which one runs the turn, so every
stream is classed as the turn's own worker, another worker of A, or host B.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from dataclasses import dataclass, field

import _client as client
import _databases as databases
import _procfs as procfs
import _service as service
from _client import HttpError, SseStream

STAMP = re.compile(r"T(\d{9,11}\.\d{6})")
REDIS_URL = "redis://127.0.0.1:6379/0"
SAME = "A: the turn's worker"
OTHER = "A: another worker"
REMOTE = "B: another host"
UNKNOWN = "worker unknown"
CLASSES = (SAME, OTHER, REMOTE, UNKNOWN)


@dataclass(frozen=True, slots=True)
class Config:
    label: str
    kind: str  # "postgres" or "sqlite"
    redis: bool
    hosts: int


CONFIGS = {
    "postgres": Config("PostgreSQL, 2 hosts", "postgres", False, 2),
    "postgres-redis": Config("PostgreSQL + Redis, 2 hosts", "postgres", True, 2),
    "sqlite": Config("SQLite, 1 host", "sqlite", False, 1),
}


@dataclass(frozen=True, slots=True)
class WakeupOptions:
    configs: list[str]
    rounds: int = 3
    deltas: int = 60
    interval: float = 0.05
    lead: float = 2.0
    streams: int = 2  # per host; a one-host config opens twice as many on A


@dataclass
class ClassStats:
    streams: int = 0
    latencies: list[float] = field(default_factory=list)
    missed: int = 0


@dataclass
class WakeupResult:
    config: Config
    classes: dict[str, ClassStats] = field(default_factory=dict)
    sent: int = 0
    failures: list[str] = field(default_factory=list)
    log_errors: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    rounds: list[dict[str, ClassStats]] = field(default_factory=list)  # each turn's own


@dataclass
class Reader:
    host: service.Server
    owner: int | None = None
    requested_at: float | None = None
    stamps: dict[float, float] = field(default_factory=dict)  # send time -> arrival
    error: str | None = None

    async def read(self, url: str, token: str, workers: list[int], budget: float) -> None:
        try:
            stream = await SseStream.connect(self.host.port, url, headers=client.bearer(token))
        except (HttpError, OSError) as exc:
            self.error = str(exc)
            return
        self.requested_at = stream.requested_at
        owner = asyncio.create_task(self._find_owner(workers, stream.client_port))
        try:
            await stream.response(budget)
            while (event := await stream.next_event()) is not None:
                if event.event == "done":
                    return
                if event.event == "packet" and "message_delta" in event.data:
                    for stamp in STAMP.findall(event.data):
                        self.stamps.setdefault(float(stamp), event.at)
            self.error = "the stream ended before done"
        except (HttpError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
            self.error = str(exc) or type(exc).__name__
        finally:
            stream.close()
            await owner

    async def _find_owner(self, workers: list[int], client_port: int) -> None:
        """Find the worker holding the server side of this connection, once it has accepted."""
        for _ in range(100):
            owners = procfs.socket_owners(workers, local=self.host.port, remote=client_port)
            if owners:
                self.owner = owners[0] if len(owners) == 1 else None
                return
            await asyncio.sleep(0.02)


async def turn_worker(host: service.Server, fake_port: int, timeout: float) -> int | None:
    """Return the worker of `host` that holds the connection to the fake Claude."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owners = procfs.socket_owners(host.workers(), remote=fake_port)
        if len(owners) == 1:
            return owners[0]
        await asyncio.sleep(0.05)
    return None


async def one_round(
    hosts: list[service.Server],
    fake: service.FakeClaude,
    token: str,
    options: WakeupOptions,
    result: WakeupResult,
) -> None:
    a = hosts[0]
    session = await client.create_session(a.port, token)
    url = await client.ask(a.port, token, session, "Stream me a steady answer.")
    per_host = options.streams * (2 if len(hosts) == 1 else 1)
    readers = [Reader(host) for host in hosts for _ in range(per_host)]
    workers = [pid for host in hosts for pid in host.workers()]
    budget = options.lead + options.deltas * options.interval + 30
    tasks = [asyncio.create_task(r.read(url, token, workers, budget)) for r in readers]
    turn = await turn_worker(a, fake.port, options.lead + 5)
    _, pending = await asyncio.wait(tasks, timeout=budget)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    sent: set[float] = set().union(*(r.stamps for r in readers))
    result.sent += len(sent)
    this: dict[str, ClassStats] = {}
    result.rounds.append(this)
    for r in readers:
        if r.error:
            result.failures.append(r.error)
        if r.requested_at is None:
            continue
        if r.host is not a:
            name = REMOTE
        elif r.owner is None or turn is None:
            name = UNKNOWN
        else:
            name = SAME if r.owner == turn else OTHER
        expected = {s for s in sent if s >= r.requested_at}
        latencies = [r.stamps[s] - s for s in expected if s in r.stamps]
        for stats in (
            result.classes.setdefault(name, ClassStats()),
            this.setdefault(name, ClassStats()),
        ):
            stats.streams += 1
            stats.latencies += latencies
            stats.missed += len(expected - r.stamps.keys())


async def run_config(ctx: service.Context, config: Config, options: WakeupOptions) -> WakeupResult:
    result = WakeupResult(config)
    with service.cleanup() as undo:
        if config.redis:
            import redis

            try:
                redis.Redis.from_url(REDIS_URL, socket_timeout=3).ping()
            except redis.RedisError as exc:
                raise service.BenchError(f"Redis at {REDIS_URL}: {exc}") from None
        database = databases.seeded_database(config.kind, ctx.admin_url)
        undo(database.drop)
        token = databases.demo_token(database)
        per_turn = options.lead + options.deltas * options.interval + 60
        fake = service.FakeClaude.start(
            ctx.logs,
            "--mode",
            "paced",
            "--deltas",
            str(options.deltas),
            "--interval",
            str(options.interval),
            "--lead",
            str(options.lead),
            "--lifetime",
            str(per_turn * options.rounds + 300),
        )
        undo(fake.stop)
        settings = {
            "DATABASE_URL": database.url,
            "ANTHROPIC_API_KEY": "bench-fake-key",
            "ANTHROPIC_BASE_URL": fake.url,
        }
        if config.redis:
            settings["REDIS_URL"] = REDIS_URL
        hosts = []
        for name in "AB"[: config.hosts]:
            host = service.Server.start(f"wakeup-{config.kind}-{name}", ctx.web, settings, ctx.logs)
            undo(host.stop)
            hosts.append(host)
        for host in hosts:
            await host.wait_ready()
        for _ in range(options.rounds):
            await one_round(hosts, fake, token, options, result)
        result.log_errors = sum((host.log_errors() for host in hosts), Counter())
    return result


def _round_rows(r: WakeupResult) -> list[list[str]]:
    """Each turn's p50/p99 ratios against its own worker's, then the median over the turns."""
    p = client.percentile
    rows: list[list[str]] = []
    for name in (OTHER, REMOTE):
        pairs: list[tuple[list[tuple[float | None, float | None]], int]] = []
        for i, classes in enumerate(r.rounds, 1):
            base, stats = classes.get(SAME), classes.get(name)
            if base is None or stats is None or not stats.latencies:
                continue
            pair = [(p(stats.latencies, q), p(base.latencies, q)) for q in (50, 99)]
            pairs.append((pair, i))
            cells = [client.ratio(a, f) for a, f in pair]
            rows.append([r.config.label, f"  turn {i}: {name}", "", "", "", "", "", *cells])
        if pairs:
            medians = [client.median_ratio([pair[k] for pair, _ in pairs]) for k in (0, 1)]
            label = f"  median of {len(pairs)} turns: {name}"
            rows.append([r.config.label, label, "", "", "", "", "", *medians])
    return rows


def report(results: list[WakeupResult], options: WakeupOptions) -> str:
    rows: list[list[str]] = []
    p = client.percentile
    for r in results:
        if r.error:
            rows.append([r.config.label, f"error: {r.error}"] + [""] * 7)
            continue
        base = r.classes.get(SAME)
        for name in CLASSES:
            stats = r.classes.get(name)
            if stats is None:
                continue
            same = name == SAME or base is None
            rows.append(
                [
                    r.config.label,
                    name,
                    str(stats.streams),
                    str(len(stats.latencies)),
                    str(stats.missed),
                    client.ms(p(stats.latencies, 50)),
                    client.ms(p(stats.latencies, 99)),
                    ""
                    if same
                    else client.ratio(
                        p(stats.latencies, 50), p(base.latencies, 50) if base else None
                    ),
                    ""
                    if same
                    else client.ratio(
                        p(stats.latencies, 99), p(base.latencies, 99) if base else None
                    ),
                ]
            )
        rows += _round_rows(r)
        notes = []
        if r.failures:
            notes.append(f"{len(r.failures)} stream failures (first: {r.failures[0]})")
        if r.log_errors:
            notes.append(service.log_note(r.log_errors))
        if notes:
            rows.append([r.config.label, "; ".join(notes)] + [""] * 7)
    headers = [
        "config",
        "stream read from",
        "streams",
        "deltas",
        "missed",
        "p50",
        "p99",
        "p50 ÷ turn's",
        "p99 ÷ turn's",
    ]
    title = (
        f"(f) cross-process wake-up: per-delta latency (arrival − send time), "
        f"{options.rounds} turns × {options.deltas} deltas every "
        f"{options.interval * 1000:g} ms"
    )
    return client.table(title, headers, rows)
