"""Service benchmarks: the app under gunicorn, side by side with a floor, in one run.

The floor (`benchmarks/_floor.py`) is a bare Flask SSE app served by the very gunicorn command
the Procfile's `web:` line gives (bound to 127.0.0.1 and a free port), so every ratio is
app ÷ floor under the same server settings. Three parts, each printing a small table:

  idle    (a) N idle open answer streams: /login p50/p99, worker CPU, RSS per stream
  turns   (b) concurrent turns on the offline engine: first event and done p50/p99, errors
  wakeup  (f) an event written by one process reaching a reader in another: p50/p99 per delta
  all     the three, one after the other

Run: `.venv/bin/python benchmarks/bench_service.py all` (see benchmarks/README.md).
Every process it starts is stopped by pid, every database it makes is dropped, every wait
has a deadline, and the whole run stops after --max-seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import resource
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import _databases as databases
import _hog
import _idle
import _service as service
import _turns
import _wakeup

R = TypeVar("R")


def log(message: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


async def attempt(run: Awaitable[R], failed: R, set_error: Callable[[R, str], None]) -> R:
    """Await one measured run; on any failure, return `failed` carrying the reason."""
    try:
        return await run
    except Exception as exc:  # a broken run is reported in its table, and the rest go on
        reason = str(exc) if isinstance(exc, service.BenchError) else f"{type(exc).__name__}: {exc}"
        set_error(failed, " ".join(reason.split())[:300])
        log(f"  failed: {reason[:300]}")
        return failed


def _set_error(
    result: _idle.IdleResult | _turns.TurnsResult | _wakeup.WakeupResult, reason: str
) -> None:
    result.error = reason


async def idle_part(ctx: service.Context, options: _idle.IdleOptions, rounds: int) -> bool:
    results = []
    with service.cleanup() as undo:
        users = _idle.users_for(options.counts, options.per_answer)
        log(f"(a) preparing a {ctx.db} database with {users} users")
        try:
            database = databases.seeded_database(ctx.db, ctx.admin_url)
            undo(database.drop)
            tokens = databases.make_users(database, users)
        except Exception as exc:
            print(f"(a) idle open streams: could not prepare the database: {exc}")
            return False
        for n in options.counts:
            for round_ in range(1, rounds + 1):
                measured: dict[str, _idle.IdleResult] = {}
                for side in ("floor", "app") if round_ % 2 else ("app", "floor"):
                    log(f"(a) N={n}, round {round_}: {side}")
                    run = (
                        _idle.run_floor(ctx, n, options)
                        if side == "floor"
                        else _idle.run_app(ctx, database, tokens, n, options)
                    )
                    measured[side] = await attempt(
                        run, _idle.IdleResult(side, n, round=round_), _set_error
                    )
                    measured[side].round = round_
                results.append((measured["floor"], measured["app"]))
    print(_idle.report(results, options), flush=True)
    print()
    return not any(f.error or a.error for f, a in results)


async def turns_part(ctx: service.Context, options: _turns.TurnsOptions, rounds: int) -> bool:
    results: list[tuple[_turns.TurnsResult, _turns.TurnsResult]] = []
    with service.cleanup() as undo:
        users = _turns.users_for(options)
        log(f"(b) preparing a {ctx.db} database with {users} users")
        try:
            database = databases.seeded_database(ctx.db, ctx.admin_url)
            undo(database.drop)
            tokens = databases.make_users(database, users)
        except Exception as exc:
            print(f"(b) concurrent turns: could not prepare the database: {exc}")
            return False
        frames = ctx.logs / "floor-frames.json"
        sides: dict[str, _turns.Side | str] = {}
        for name in ("app", "floor"):  # the app first: its warm-up turn is the floor's frames
            log(f"(b) starting the {name}")
            try:
                sides[name] = await (
                    _turns.start_app(ctx, database, tokens, options, frames, undo)
                    if name == "app"
                    else _turns.start_floor(ctx, options, frames, undo)
                )
            except Exception as exc:  # its rounds say so; the other side's still run
                sides[name] = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
                log(f"  failed: {sides[name]}")
        for round_ in range(1, rounds + 1):
            measured: dict[str, _turns.TurnsResult] = {}
            for name in ("floor", "app") if round_ % 2 else ("app", "floor"):
                side, failed = sides[name], _turns.TurnsResult(name, options.turns, round=round_)
                log(f"(b) round {round_}: {options.turns} turns on the {name}")
                if isinstance(side, str):
                    failed.error = side
                    measured[name] = failed
                else:
                    measured[name] = await attempt(
                        _turns.run_round(side, options, round_), failed, _set_error
                    )
            results.append((measured["floor"], measured["app"]))
        log("(b) the engine's own compute per turn, in-process")
        try:
            compute = await asyncio.to_thread(_turns.engine_compute, database, options)
        except Exception as exc:
            log(f"  failed: {exc}")
            compute = None
    print(_turns.report(results, options), flush=True)
    for floor, app in results:
        print(_turns.goal_report(floor, app, compute), flush=True)
    print()
    return not any(f.error or a.error for f, a in results)


async def wakeup_part(ctx: service.Context, options: _wakeup.WakeupOptions) -> bool:
    results = []
    for name in options.configs:
        config = _wakeup.CONFIGS[name]
        log(f"(f) {config.label}")
        results.append(
            await attempt(
                _wakeup.run_config(ctx, config, options), _wakeup.WakeupResult(config), _set_error
            )
        )
    print(_wakeup.report(results, options), flush=True)
    print()
    return not any(r.error for r in results)


def raise_fd_limit(needed: int) -> None:
    """Let this process (and the servers it starts) hold `needed` sockets, as far as allowed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


async def run(args: argparse.Namespace, ctx: service.Context) -> bool:
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    ok = True
    if args.part in ("idle", "all"):
        ok &= await idle_part(
            ctx,
            _idle.IdleOptions(
                counts=args.streams,
                probes=args.probes,
                probe_timeout=args.probe_timeout,
                window=args.window,
                open_timeout=args.open_timeout,
                ping=args.ping,
                per_answer=args.per_answer,
            ),
            args.rounds,
        )
    if args.part in ("turns", "all"):
        ok &= await turns_part(
            ctx,
            _turns.TurnsOptions(
                turns=args.turns, question=args.question, timeout=args.turn_timeout
            ),
            args.rounds,
        )
    if args.part in ("wakeup", "all"):
        ok &= await wakeup_part(
            ctx,
            _wakeup.WakeupOptions(
                configs=args.configs,
                rounds=args.rounds,
                deltas=args.deltas,
                interval=args.interval,
                lead=args.lead,
                streams=args.streams_per_host,
            ),
        )
    return ok


def _counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of positive numbers")
    return counts


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("a positive number")
    return value


def _configs(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in _wakeup.CONFIGS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(_wakeup.CONFIGS)}")
    return names


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--db",
        choices=("postgres", "sqlite"),
        default="postgres",
        help="the database of parts (a) and (b) (default: postgres)",
    )
    common.add_argument(
        "--admin-url",
        default=os.environ.get("TEST_DATABASE_URL") or databases.DEFAULT_ADMIN_URL,
        help="a PostgreSQL database to connect to when creating databases",
    )
    common.add_argument(
        "--max-seconds",
        type=float,
        default=3600.0,
        help="stop everything after this long (default: 3600)",
    )
    common.add_argument("--keep-logs", action="store_true", help="keep the servers' logs")
    common.add_argument(
        "--rounds",
        type=_positive,
        default=3,
        help="rounds of each measure, floor and app alternating; (f): turns per config "
        "(default: 3)",
    )
    _hog.add_flag(common)
    idle = argparse.ArgumentParser(add_help=False)
    idle.add_argument(
        "--streams",
        type=_counts,
        default=[100, 500],
        help="the Ns to run, e.g. 100,500,1000,2000 (default: 100,500)",
    )
    idle.add_argument("--probes", type=int, default=50)
    idle.add_argument("--probe-timeout", type=float, default=5.0)
    idle.add_argument("--window", type=float, default=10.0, help="the idle CPU window, s")
    idle.add_argument(
        "--open-timeout",
        type=float,
        default=25.0,
        help="how long a stream may take to send its headers (default: 25 s)",
    )
    idle.add_argument(
        "--ping",
        type=float,
        default=10.0,
        help="seconds between the fake Claude's pings (default: 10)",
    )
    idle.add_argument(
        "--per-answer",
        type=int,
        default=20,
        help="streams open on each running answer (default: 20, one user's cap)",
    )
    turns = argparse.ArgumentParser(add_help=False)
    turns.add_argument("--turns", type=int, default=200)
    turns.add_argument("--question", default=_turns.QUESTION)
    turns.add_argument("--turn-timeout", type=float, default=180.0)
    wakeup = argparse.ArgumentParser(add_help=False)
    wakeup.add_argument(
        "--configs",
        type=_configs,
        default=list(_wakeup.CONFIGS),
        help=f"from {','.join(_wakeup.CONFIGS)} (default: all)",
    )
    wakeup.add_argument("--deltas", type=int, default=60, help="text deltas per turn")
    wakeup.add_argument("--interval", type=float, default=0.05, help="seconds between deltas")
    wakeup.add_argument(
        "--lead",
        type=float,
        default=2.0,
        help="seconds between the turn's first text and its timed deltas",
    )
    wakeup.add_argument("--streams-per-host", type=int, default=2)
    main_parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parts = main_parser.add_subparsers(dest="part", required=True)
    parts.add_parser("idle", parents=[common, idle], help="(a) idle open streams")
    parts.add_parser("turns", parents=[common, turns], help="(b) concurrent turns")
    parts.add_parser("wakeup", parents=[common, wakeup], help="(f) cross-process wake-ups")
    parts.add_parser("all", parents=[common, idle, turns, wakeup], help="(a), (b) and (f)")
    return main_parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    raise_fd_limit(2 * max(getattr(args, "streams", [0])) + 2048)
    logs = Path(tempfile.mkdtemp(prefix="bench_service_logs_"))
    try:
        web = service.read_procfile()
    except (OSError, service.BenchError) as exc:
        print(f"cannot read the Procfile: {exc}")
        return 1
    ctx = service.Context(web, logs, args.admin_url, args.db)
    for name in databases.drop_orphans(args.admin_url):
        log(f"dropped {name}, left by an earlier run that was killed")
    print(
        f"bench_service {args.part}: {datetime.date.today()}, {os.cpu_count()} cores; "
        f"Procfile: {web.summary} (bound to 127.0.0.1); (a)/(b) database: {args.db}"
    )
    print(flush=True)
    ok = False
    try:
        with _hog.beside(args.hog):
            ok = asyncio.run(asyncio.wait_for(run(args, ctx), args.max_seconds))
    except TimeoutError:
        print(f"stopped: the run took longer than --max-seconds {args.max_seconds:g}")
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("stopped: interrupted")
    finally:
        if args.keep_logs or not ok or service.logs_have_problems(logs):
            print(f"server logs (kept: a run failed or a server logged a problem): {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
