"""Part (b): concurrent turns on the offline engine, app vs floor.

Every turn is `POST .../messages` then its stream read to `done`, all at once, spread over
users (at most 3 running turns each). The first turn, asked alone before the clock starts,
is kept frame by frame: the floor replays exactly those frames. Both servers stay up for the
whole part, and its rounds alternate between them (floor then app, then app then floor, ...).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import _client as client
import _databases as databases
import _service as service
from _client import HttpError, SseStream
from _procfs import cpu_seconds

TURNS_PER_USER = 3
SETTLE_SECONDS = 0.5
QUESTION = "Can I deduct charitable donations?"


@dataclass(frozen=True, slots=True)
class TurnsOptions:
    turns: int = 200
    question: str = QUESTION
    timeout: float = 180.0


@dataclass
class TurnsResult:
    side: str
    turns: int
    first: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    frames: int = 0  # per answer
    wall: float | None = None
    cpu_ms: float | None = None  # the workers' CPU per turn (user + system, from /proc)
    log_errors: Counter[str] = field(default_factory=Counter)
    restarts: int = 0
    error: str | None = None
    round: int = 0


@dataclass(frozen=True, slots=True)
class Outcome:
    first: float | None
    done: float | None
    frames: list[str]
    error: str | None


async def one_turn(port: int, token: str, session_id: str, question: str) -> Outcome:
    """Ask, then read the stream to `done`; times are from just before the POST."""
    start = time.perf_counter()
    first: float | None = None
    frames: list[str] = []
    try:
        url = await client.ask(port, token, session_id, question, timeout=60.0)
        stream = await SseStream.open(port, url, headers=client.bearer(token), timeout=60.0)
        try:
            while (event := await stream.next_event()) is not None:
                if event.comment:
                    continue
                first = first if first is not None else time.perf_counter() - start
                frames.append(event.raw)
                if event.event == "done":
                    status = json.loads(event.data).get("status")
                    error = None if status == "complete" else f"done with status {status}"
                    return Outcome(first, time.perf_counter() - start, frames, error)
        finally:
            stream.close()
        return Outcome(first, None, frames, "the stream ended before done")
    except (HttpError, OSError, asyncio.IncompleteReadError, ValueError) as exc:
        return Outcome(first, None, frames, str(exc) or type(exc).__name__)


async def run_all(
    server: service.Server,
    tokens: list[str],
    sessions: list[str],
    options: TurnsOptions,
    result: TurnsResult,
) -> None:
    """Run every turn at once, each bounded by the options' timeout."""
    workers = set(server.workers())

    async def bounded(i: int) -> Outcome:
        try:
            return await asyncio.wait_for(
                one_turn(server.port, tokens[i], sessions[i], options.question), options.timeout
            )
        except TimeoutError:
            return Outcome(None, None, [], f"not done within {options.timeout:g} s")

    cpu_before = cpu_seconds(sorted(workers))
    start = time.perf_counter()
    outcomes = await asyncio.gather(*(bounded(i) for i in range(len(sessions))))
    result.wall = time.perf_counter() - start
    # What the turns left to finish after `done` (their last writes) counts too.
    await asyncio.sleep(SETTLE_SECONDS)
    cpu = cpu_seconds(sorted(workers | set(server.workers()))) - cpu_before
    result.cpu_ms = cpu * 1e3 / max(1, len(sessions))
    for outcome in outcomes:
        if outcome.first is not None:
            result.first.append(outcome.first)
        if outcome.done is not None and outcome.error is None:
            result.done.append(outcome.done)
        if outcome.error:
            result.errors[outcome.error] += 1
    server.workers()
    result.restarts = len(server.known_workers - workers)
    result.log_errors = server.log_errors()


def synthetic_frames(count: int = 46) -> list[str]:
    """Frames shaped like an answer's packets, for when no real answer could be captured."""
    place = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    frames = []
    for i in range(1, count):
        data = json.dumps(
            {"placement": place, "obj": {"type": "message_delta", "content": "word " * 60}}
        )
        frames.append(f"id: {i}\nevent: packet\ndata: {data}\n\n")
    return [*frames, f'id: {count}\nevent: done\ndata: {{"status": "complete"}}\n\n']


@dataclass(frozen=True, slots=True)
class Side:
    """One side's running server, kept up for every round: the app or the floor."""

    name: str
    server: service.Server
    owners: list[str]  # the token of each turn's user
    frames: int  # per answer


async def start_app(
    ctx: service.Context,
    template: databases.Database,
    tokens: list[str],
    options: TurnsOptions,
    frames_file: Path,
    undo: Callable[[Callable[[], None]], None],
) -> Side:
    """Start the app on a fresh copy of `template`; ask one turn alone (a warm-up), whose
    frames, as received, are written to `frames_file` for the floor to replay."""
    database = template.copy()
    undo(database.drop)
    server = service.Server.start("app-turns", ctx.web, {"DATABASE_URL": database.url}, ctx.logs)
    undo(server.stop)
    await server.wait_ready()
    session = await client.create_session(server.port, tokens[-1])
    capture = await asyncio.wait_for(
        one_turn(server.port, tokens[-1], session, options.question), options.timeout
    )
    frames = 0
    if capture.error is None and capture.frames:
        frames_file.write_text(json.dumps(capture.frames))
        frames = len(capture.frames)
    else:
        print(
            f"  (b) capturing an answer failed ({capture.error}); the floor replays "
            "46 synthetic frames"
        )
    owners = [tokens[i // TURNS_PER_USER] for i in range(options.turns)]
    return Side("app", server, owners, frames)


async def start_floor(
    ctx: service.Context,
    options: TurnsOptions,
    frames_file: Path,
    undo: Callable[[Callable[[], None]], None],
) -> Side:
    """Start the floor replaying `frames_file` (synthetic frames if the app gave none)."""
    if not frames_file.exists():
        frames_file.write_text(json.dumps(synthetic_frames()))
    frames = len(json.loads(frames_file.read_text()))
    server = service.Server.start(
        "floor-turns",
        ctx.web,
        {"BENCH_FLOOR_MODE": "replay", "BENCH_FLOOR_FRAMES": str(frames_file)},
        ctx.logs,
        floor=True,
    )
    undo(server.stop)
    await server.wait_ready()
    await one_turn(server.port, "floor", "warm-up", options.question)
    return Side("floor", server, ["floor"] * options.turns, frames)


async def run_round(side: Side, options: TurnsOptions, round_: int) -> TurnsResult:
    """All turns at once on `side`'s server, each in a new chat."""
    result = TurnsResult(side.name, options.turns, frames=side.frames, round=round_)
    port = side.server.port
    if side.name == "app":
        sessions = await client.limited(
            options.turns, 16, lambda i: client.create_session(port, side.owners[i])
        )
    else:
        sessions = [f"r{round_}s{i}" for i in range(options.turns)]
    before = side.server.log_errors()
    await run_all(side.server, side.owners, sessions, options, result)
    result.log_errors -= before  # this round's problems only
    return result


def users_for(options: TurnsOptions) -> int:
    return math.ceil(options.turns / TURNS_PER_USER) + 1  # and one for the captured turn


def _row(r: TurnsResult) -> list[str]:
    if r.error:
        return [str(r.round), r.side, f"error: {r.error}"] + [""] * 8
    notes = [f"{count}x {reason}" for reason, count in r.errors.most_common(2)]
    if r.restarts:
        notes.append(f"{r.restarts} worker restarts")
    if r.log_errors:
        notes.append(service.log_note(r.log_errors))
    return [
        str(r.round),
        r.side,
        str(r.frames),
        str(sum(r.errors.values())),
        client.ms(client.percentile(r.first, 50)),
        client.ms(client.percentile(r.first, 99)),
        client.ms(client.percentile(r.done, 50)),
        client.ms(client.percentile(r.done, 99)),
        client.secs(r.wall),
        "-" if r.cpu_ms is None else f"{r.cpu_ms:.1f} ms",
        "; ".join(notes),
    ]


def _figures(r: TurnsResult) -> list[float | None]:
    p = client.percentile
    return [p(r.first, 50), p(r.first, 99), p(r.done, 50), p(r.done, 99), r.wall, r.cpu_ms]


def report(rounds: list[tuple[TurnsResult, TurnsResult]], options: TurnsOptions) -> str:
    """Each round's floor, app and app ÷ floor, then the median of the rounds' ratios."""
    rows: list[list[str]] = []
    measured = []
    for floor, app in rounds:
        rows += [_row(floor), _row(app)]
        if not (floor.error or app.error):
            pairs = list(zip(_figures(app), _figures(floor), strict=True))
            measured.append(pairs)
            rows.append(["", "app÷floor", "", ""] + [client.ratio(a, f) for a, f in pairs] + [""])
    if measured:
        columns = [[pairs[i] for pairs in measured] for i in range(6)]
        rows.append(
            ["all", f"median of {len(measured)}", "", ""]
            + [client.median_ratio(column) for column in columns]
            + [""]
        )
    headers = [
        "round",
        "side",
        "frames",
        "errors",
        "first p50",
        "first p99",
        "done p50",
        "done p99",
        "wall",
        "CPU/turn",
        "notes",
    ]
    title = (
        f"(b) {options.turns} concurrent turns on the offline engine "
        f"({options.question!r}); times from the POST; floor and app rounds interleaved"
    )
    return client.table(title, headers, rows)


COMPUTE_TURNS = 20


def engine_compute(template: databases.Database, options: TurnsOptions) -> dict[str, float]:
    """The offline engine's own CPU per turn, in-process (`_engine_compute.py`), on a copy."""
    database = template.copy()
    try:
        script = service.BENCH / "_engine_compute.py"
        argv = [str(service.BIN / "python"), str(script), database.url]
        argv += ["--turns", str(COMPUTE_TURNS), "--question", options.question]
        done = subprocess.run(
            argv, env=service.child_env({}), capture_output=True, text=True, timeout=600
        )
        if done.returncode:
            raise service.BenchError(f"_engine_compute.py failed: {done.stderr[-300:]}")
        found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        return found
    finally:
        database.drop()


def goal_report(floor: TurnsResult, app: TurnsResult, compute: dict[str, float] | None) -> str:
    """Part (b)'s goal: first-event p99 <= 3x the floor's + the engine's compute of the turns
    spread over the machine's cores; the ratio both with and without that compute."""
    if compute is None or floor.error or app.error:
        return "(b) goal: not graded (a run or the engine's compute failed)"
    floor_p99 = client.percentile(floor.first, 99)
    app_p99 = client.percentile(app.first, 99)
    if floor_p99 is None or app_p99 is None:
        return "(b) goal: not graded (no first events)"
    cores = os.cpu_count() or 1
    spread = compute["median_ms"] / 1e3 * app.turns / cores
    goal = 3 * floor_p99 + spread
    verdict = "met" if app_p99 <= goal else "NOT met"
    return (
        f"(b) goal: engine compute {compute['median_ms']:.1f} ms a turn (median of "
        f"{compute['turns']:g}, in-process, {compute['events']:g} events), {app.turns} turns over "
        f"{cores} cores = {spread:.2f} s; first p99 {app_p99:.2f} s against 3 x "
        f"{floor_p99:.3f} s + {spread:.2f} s = {goal:.2f} s: {verdict}; "
        f"p99 / floor = {app_p99 / floor_p99:.1f}x, "
        f"(p99 - engine compute) / floor = {(app_p99 - spread) / floor_p99:.1f}x"
        + (
            ""
            if app.cpu_ms is None
            else f"; the app's workers used {app.cpu_ms:.1f} ms of CPU a turn "
            f"({app.cpu_ms / compute['median_ms']:.1f}x the engine's compute)"
        )
    )
