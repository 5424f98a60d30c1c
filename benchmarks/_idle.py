"""Part (a): N idle open answer streams, app vs floor.

The app: N streams on ⌈N / K⌉ running answers (`--per-answer` K, default 20: one user's
stream cap), one answer per user, each asked a question that the fake Claude answers with
`message_start` and then pings only; K = 1 puts a running turn behind every stream. The
floor: N streams held open on a condition. While they are open: worker CPU over an idle
window, `GET /login` latency from sequential probes, and the workers' RSS growth per stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from dataclasses import dataclass, field

import _client as client
import _databases as databases
import _procfs as procfs
import _service as service
from _client import HttpError, SseStream

QUESTION = "What do I owe on my credit cards?"


@dataclass(frozen=True, slots=True)
class IdleOptions:
    counts: list[int]
    probes: int = 50
    probe_timeout: float = 5.0
    window: float = 10.0
    open_timeout: float = 25.0
    ping: float = 10.0
    per_answer: int = 20


@dataclass
class IdleResult:
    side: str
    n: int
    opened: list[float] = field(default_factory=list)  # seconds to headers, per open stream
    open_failures: Counter[str] = field(default_factory=Counter)
    asked: int | None = None  # app: turns started
    silent: int | None = None  # app: answers the fake Claude was holding open
    ended: int = 0  # streams the server ended or broke during the measurement
    probes: list[float] = field(default_factory=list)
    probe_failures: Counter[str] = field(default_factory=Counter)
    cpu_percent: float | None = None
    rss_per_stream: float | None = None
    restarts: int = 0
    log_errors: Counter[str] = field(default_factory=Counter)
    error: str | None = None
    round: int = 0


class Streams:
    """N SSE streams held open by one event loop; each notes when its headers came."""

    def __init__(
        self,
        port: int,
        targets: list[tuple[str, dict[str, str]]],
        timeout: float,
        result: IdleResult,
    ) -> None:
        self.port, self.targets, self.timeout, self.result = port, targets, timeout, result
        self.settled = 0
        self.all_settled = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.closing = False

    async def start(self) -> None:
        for i, (path, headers) in enumerate(self.targets):
            self.tasks.append(asyncio.create_task(self._hold(path, headers)))
            if i % 100 == 99:
                await asyncio.sleep(0.05)  # let the server accept in batches
        if not self.targets:
            self.all_settled.set()

    async def _hold(self, path: str, headers: dict[str, str]) -> None:
        start = time.monotonic()
        try:
            stream = await SseStream.open(self.port, path, headers=headers, timeout=self.timeout)
        except (HttpError, OSError) as exc:
            self.result.open_failures[str(exc)] += 1
            self._settle()
            return
        self.result.opened.append(time.monotonic() - start)
        self._settle()
        try:
            while await stream.next_event() is not None:
                pass
        except (HttpError, OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            stream.close()
        if not self.closing:
            self.result.ended += 1

    def _settle(self) -> None:
        self.settled += 1
        if self.settled == len(self.targets):
            self.all_settled.set()

    async def wait_settled(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(self.all_settled.wait(), timeout)

    async def close(self) -> None:
        self.closing = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def probe_login(port: int, result: IdleResult, options: IdleOptions) -> None:
    """Sequential `GET /login` on fresh connections; stop after 3 failures in a row."""
    in_a_row = 0
    for _ in range(options.probes):
        start = time.perf_counter()
        try:
            response = await client.request(port, "GET", "/login", timeout=options.probe_timeout)
            if response.status != 200:
                raise HttpError(f"HTTP {response.status}")
            result.probes.append(time.perf_counter() - start)
            in_a_row = 0
        except HttpError as exc:
            result.probe_failures[str(exc)] += 1
            in_a_row += 1
            if in_a_row >= 3:
                return


async def measure(
    server: service.Server,
    streams: Streams,
    result: IdleResult,
    options: IdleOptions,
    rss_before: int,
    workers_before: set[int],
) -> None:
    n = result.n
    await streams.start()
    await streams.wait_settled(options.open_timeout + n * 0.001 + 10)
    workers = server.workers()
    cpu_start = procfs.cpu_seconds(workers)
    await asyncio.sleep(options.window)
    cpu = procfs.cpu_seconds(workers) - cpu_start
    result.cpu_percent = 100 * cpu / options.window
    rss_after = procfs.rss_bytes(server.workers())
    await probe_login(server.port, result, options)
    now = set(server.workers())
    result.restarts = len(server.known_workers - workers_before)
    if not result.restarts and now == workers_before:
        result.rss_per_stream = (rss_after - rss_before) / n


async def run_floor(ctx: service.Context, n: int, options: IdleOptions) -> IdleResult:
    result = IdleResult("floor", n)
    with service.cleanup() as undo:
        server = service.Server.start(
            "floor-idle", ctx.web, {"BENCH_FLOOR_MODE": "idle"}, ctx.logs, floor=True
        )
        undo(server.stop)
        await server.wait_ready()
        for _ in range(5):
            await client.request(server.port, "GET", "/login")
        workers = set(server.workers())
        rss = procfs.rss_bytes(list(workers))
        path = "/api/chat/sessions/s{0}/messages/m{0}/stream"
        targets: list[tuple[str, dict[str, str]]] = [(path.format(i), {}) for i in range(n)]
        streams = Streams(server.port, targets, options.open_timeout, result)
        try:
            await measure(server, streams, result, options, rss, workers)
        finally:
            await streams.close()
        result.log_errors = server.log_errors()
    return result


async def run_app(
    ctx: service.Context,
    template: databases.Database,
    tokens: list[str],
    n: int,
    options: IdleOptions,
) -> IdleResult:
    result = IdleResult("app", n)
    with service.cleanup() as undo:
        database = template.copy()
        undo(database.drop)
        stall = options.open_timeout + options.window + options.probes * options.probe_timeout
        fake = service.FakeClaude.start(
            ctx.logs,
            "--mode",
            "stall",
            "--ping",
            str(options.ping),
            "--stall",
            str(stall + 300 + n * 0.1),
            "--lifetime",
            str(stall + 900 + n * 0.2),
        )
        undo(fake.stop)
        server = service.Server.start(
            "app-idle",
            ctx.web,
            {
                "DATABASE_URL": database.url,
                "ANTHROPIC_API_KEY": "bench-fake-key",
                "ANTHROPIC_BASE_URL": fake.url,
            },
            ctx.logs,
        )
        undo(server.stop)
        await server.wait_ready()
        for _ in range(5):
            await client.request(server.port, "GET", "/login")
        turns = math.ceil(n / options.per_answer)
        owners = [tokens[i] for i in range(turns)]
        sessions = await client.limited(
            turns, 16, lambda i: client.create_session(server.port, owners[i])
        )
        workers = set(server.workers())
        rss = procfs.rss_bytes(list(workers))

        async def ask(i: int) -> str | None:
            try:
                return await client.ask(server.port, owners[i], sessions[i], QUESTION)
            except HttpError as exc:
                result.open_failures[f"ask: {exc}"] += 1
                return None

        urls = await client.limited(turns, 16, ask)
        result.asked = sum(1 for url in urls if url)
        targets = [
            (url, client.bearer(owners[j // options.per_answer]))
            for j in range(n)
            if (url := urls[j // options.per_answer])
        ]
        deadline = time.monotonic() + 30 + n * 0.02
        while time.monotonic() < deadline:
            result.silent = (await fake.stats())["open"]
            if result.silent >= result.asked:
                break
            await asyncio.sleep(0.5)
        streams = Streams(server.port, targets, options.open_timeout, result)
        try:
            await measure(server, streams, result, options, rss, workers)
            result.silent = (await fake.stats())["open"]
        finally:
            await streams.close()
        result.log_errors = server.log_errors()
    return result


def users_for(counts: list[int], per_answer: int) -> int:
    return math.ceil(max(counts) / per_answer)


def _row(r: IdleResult) -> list[str]:
    if r.error:
        return [str(r.n), str(r.round), r.side, f"error: {r.error}"] + [""] * 8
    notes = []
    if r.asked is not None:
        notes.append(f"{r.asked} turns, {r.silent} silent at Claude")
    if r.open_failures:
        reason, count = r.open_failures.most_common(1)[0]
        notes.append(f"{sum(r.open_failures.values())} not open ({count}: {reason})")
    if r.ended:
        notes.append(f"{r.ended} ended early")
    if r.probe_failures:
        reason, count = r.probe_failures.most_common(1)[0]
        notes.append(f"probes: {count}x {reason}")
    if r.restarts:
        notes.append(f"{r.restarts} worker restarts")
    if r.log_errors:
        notes.append(service.log_note(r.log_errors))
    sent = len(r.probes) + sum(r.probe_failures.values())
    return [
        str(r.n),
        str(r.round),
        r.side,
        f"{len(r.opened)}/{r.n}",
        client.secs(client.percentile(r.opened, 50)),
        client.secs(client.percentile(r.opened, 99)),
        client.ms(client.percentile(r.probes, 50)),
        client.ms(client.percentile(r.probes, 99)),
        f"{sum(r.probe_failures.values())}/{sent}",
        "-" if r.cpu_percent is None else f"{r.cpu_percent:.1f}",
        "-" if r.rss_per_stream is None else f"{r.rss_per_stream / 1024:.1f}",
        "; ".join(notes),
    ]


def _figures(r: IdleResult) -> list[float | None]:
    p = client.percentile
    return [p(r.opened, 99), p(r.probes, 50), p(r.probes, 99), r.cpu_percent, r.rss_per_stream]


def _ratio_row(n: str, label: str, cells: list[str]) -> list[str]:
    opened, p50, p99, cpu, rss = cells
    return [n, "", label, "", "", opened, p50, p99, "", cpu, rss, ""]


def report(results: list[tuple[IdleResult, IdleResult]], options: IdleOptions) -> str:
    """Each round's floor, app and app ÷ floor, then for each N the median of its ratios."""
    rows: list[list[str]] = []
    by_n: dict[int, list[list[tuple[float | None, float | None]]]] = {}
    for i, (floor, app) in enumerate(results):
        rows += [_row(floor), _row(app)]
        if not (floor.error or app.error):
            pairs = list(zip(_figures(app), _figures(floor), strict=True))
            by_n.setdefault(app.n, []).append(pairs)
            rows.append(_ratio_row("", "app÷floor", [client.ratio(a, f) for a, f in pairs]))
        last = i == len(results) - 1 or results[i + 1][0].n != app.n
        if last and app.n in by_n:
            measured = by_n[app.n]
            columns = [[pairs[i] for pairs in measured] for i in range(len(measured[0]))]
            rows.append(
                _ratio_row(
                    str(app.n),
                    f"median of {len(measured)}",
                    [client.median_ratio(column) for column in columns],
                )
            )
    headers = [
        "N",
        "round",
        "side",
        "open",
        "headers p50",
        "headers p99",
        "/login p50",
        "/login p99",
        "probe fails",
        "worker CPU %",
        "RSS/stream KiB",
        "notes",
    ]
    title = (
        f"(a) idle open streams: {options.probes} sequential GET /login probes, worker CPU "
        f"over {options.window:g} s (% of one core), workers' RSS growth / N; floor and app "
        "rounds interleaved"
    )
    return client.table(title, headers, rows)
