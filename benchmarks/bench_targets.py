"""Citing a big SQL result: `targets_for_sql` and `from_sql` against plain loops over the rows.

Seed 000 groups an `execute_sql` result's rows by account label and types each label's
target from the ids its rows select. The floor is the least any correct implementation does
for the same output, and gives exactly that output (checked on every shape): each row's file
and label cells read (the other label columns too when the first is absent), the rows grouped
by label in a dict of lists, each row's id and source cells compared with its group's first,
and once per group its label stripped and slugged, its distinct ids checked, its provider
looked up, and its target and `SqlGroup` made with the row tuple. It knows only that these
shapes hold no file rows and no labels that slug alike (it raises otherwise), and slugs a
plain ASCII label inline. Below it, a loop that only groups each row's id under its label
cell (what the floor was until December 2026: no slug, no id check, no output). Beside them,
the seed's rules applied row by row (a slug and an id check per row, as `targets_for_sql`
once did). All run side by side on the same rows, which come through JSON like a real
result's, so no two rows share a string. Each row is graded against the goal:
`targets_for_sql` at most 2x the floor.
Run: `.venv/bin/python benchmarks/bench_targets.py [--counts 10000,100000] [--rounds 5]
[--clock wall|cpu]`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import cast

import _hog

from webapp.citations.account_ids import account_ref_from_row, is_account_id
from webapp.citations.citable import from_sql
from webapp.citations.sources import (
    ACCOUNT_SOURCE_PREFIX,
    FILE_ID_COLUMN,
    LABEL_COLUMNS,
    PORTFOLIO_SOURCE,
    SqlGroup,
    account_source,
    row_label,
    targets_for_sql,
)
from webapp.citations.targets import (
    PROVIDERS,
    AccountTarget,
    CitationAccountProvider,
    CitationAccountRef,
    CitationTarget,
    PortfolioTarget,
    target_for_accounts,
)

Row = Mapping[str, object]
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def account_id(number: int) -> str:
    """Return a Plaid-shaped id (37 letters and digits), distinct for each `number`."""
    chars = []
    for _ in range(33):
        number, index = divmod(number, 62)
        chars.append(_BASE62[index])
    return "acct" + "".join(chars)


def transactions(count: int, accounts: int) -> list[Row]:
    """Return `count` transaction rows over `accounts` accounts; cards share a label in pairs."""
    names = ("Credit card", "Checking", "Savings", "Sapphire Preferred®", "Brokerage")
    labels = [names[i % 5] if i < 10 else f"Account {i}" for i in range(accounts)]
    rows = [
        {
            "source": "plaid",
            "source_account_id": account_id(i % accounts),
            "account_name": labels[i % accounts],
            "date": f"2026-{i % 12 + 1:02d}-{i % 28 + 1:02d}",
            "amount": round(i * 0.37 % 500, 2),
            "merchant_name": f"Merchant {i % 97}",
            "category": "FOOD_AND_DRINK",
        }
        for i in range(count)
    ]
    return list(json.loads(json.dumps(rows)))


def holdings(count: int) -> list[Row]:
    """Return `count` holding rows that select no account label: the portfolio."""
    rows = [
        {"ticker": f"T{i % 500}", "quantity": i % 40, "market_value": i * 1.5} for i in range(count)
    ]
    return list(json.loads(json.dumps(rows)))


def grouping_only(rows: Sequence[Row]) -> object:
    """Each row's id gathered under its label cell: grouping alone, none of the output."""
    groups: dict[object, list[object]] = {}
    for row in rows:
        label = row.get("account_name")
        group = groups.get(label)
        if group is None:
            group = groups[label] = []
        group.append(row.get("source_account_id"))
    return groups


# What a row without `account_name` must also lack to be the portfolio's.
_NOT_PORTFOLIO = frozenset((*LABEL_COLUMNS[1:], FILE_ID_COLUMN))


def grouped_floor(rows: Sequence[Row]) -> list[SqlGroup]:
    """Return `targets_for_sql(rows)` for the shapes below with only the work it cannot skip.

    One pass, each row read once while it is in the cache: its label, file, id and source
    cells; a label's first row keeps its id and source cells beside its rows.
    """
    by_label: dict[str, tuple[list[Row], object, object]] = {}
    others: dict[str, dict[object, object]] = {}  # A label's other accounts: id -> source.
    portfolio: list[Row] = []
    for row in rows:
        label = row.get("account_name")
        if label is None:
            if not _NOT_PORTFOLIO.isdisjoint(row):
                raise ValueError("the floor knows only rows labelled by account_name")
            portfolio.append(row)
            continue
        if row.get(FILE_ID_COLUMN) is not None or label.__class__ is not str:
            raise ValueError("the floor knows no file rows and no labels but strings")
        account, cell = row.get("source_account_id"), row.get("source")
        group = by_label.get(label)
        if group is None:
            by_label[label] = ([row], account, cell)
            continue
        group[0].append(row)
        if account != group[1] or cell != group[2]:
            more = others.get(label)
            if more is None:
                more = others[label] = {}
            if more.setdefault(account, cell) != cell:
                raise ValueError("the floor knows no account under two source cells")
    providers: dict[object, str | None] = {}

    def provider_of(account: object, source: object) -> CitationAccountProvider:
        # Each distinct source cell read once; the floor's rows always name their account.
        provider = providers.get(source, "")
        if provider == "":
            plain = source.strip().lower() if isinstance(source, str) else None
            provider = providers[source] = plain if plain in PROVIDERS else None
        if provider is None or not is_account_id(account):
            raise ValueError("the floor knows only rows that name their account")
        return provider  # type: ignore[return-value]  # one of PROVIDERS

    cited: dict[str, SqlGroup] = {}
    for label, (members, said, source) in by_label.items():
        provider = provider_of(said, source)
        more = others.get(label)
        target: CitationTarget = (
            AccountTarget(said, provider)  # type: ignore[arg-type]  # provider_of checked it
            if more is None
            else target_for_accounts(
                (
                    CitationAccountRef(said, provider),  # type: ignore[arg-type]
                    *(CitationAccountRef(cast(str, a), provider_of(a, s)) for a, s in more.items()),
                )
            )
        )
        title = label.strip()
        words = title.lower().split()
        plain_words = title.isascii() and "".join(words).isalnum()
        slug = ACCOUNT_SOURCE_PREFIX + "-".join(words) if plain_words else account_source(title)
        if slug in cited or not title:
            raise ValueError("the floor knows no blank labels and none that slug alike")
        cited[slug] = SqlGroup(slug, title, tuple(members), target)
    if portfolio:
        cited[PORTFOLIO_SOURCE] = SqlGroup(
            PORTFOLIO_SOURCE, "Your portfolio", tuple(portfolio), PortfolioTarget()
        )
    return list(cited.values())


def row_by_row(rows: Sequence[Row]) -> list[SqlGroup]:
    """Return what `targets_for_sql` does, the seed's rules applied one row at a time."""
    groups: dict[str, tuple[str, list[Row]]] = {}
    for row in rows:
        label = row_label(row)
        source = PORTFOLIO_SOURCE if label is None else account_source(label)
        groups.setdefault(source, (label or "Your portfolio", []))[1].append(row)
    cited = []
    for source, (title, group) in groups.items():
        refs = [account_ref_from_row(row) for row in group]
        typed = tuple(ref for ref in refs if ref is not None)
        target = (
            PortfolioTarget()
            if source == PORTFOLIO_SOURCE
            else target_for_accounts(typed)
            if len(typed) == len(refs)
            else None
        )
        cited.append(SqlGroup(source, title, tuple(group), target))
    return cited


@dataclass(frozen=True)
class Result:
    """What `from_sql` reads from the SQL tool's result."""

    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    truncated: bool = False


def fastest(
    runs: dict[str, Callable[[], object]],
    rounds: int = 5,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Time each run once per round, in turn, and return each one's fastest time in seconds.

    Taking turns keeps a burst of load on a shared machine from landing on one run only.
    """
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            start = clock()
            run()
            times[name].append(clock() - start)
    return {name: min(taken) for name, taken in times.items()}


SHAPES: tuple[tuple[str, Callable[[int], list[Row]]], ...] = (
    ("12 accounts", lambda count: transactions(count, 12)),
    ("1,000 accounts", lambda count: transactions(count, 1000)),
    ("a row per account", lambda count: transactions(count, count)),
    ("portfolio", holdings),
)


GOAL = 2.0
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    # `cpu`: this process's CPU time (the collector's included), not the time it waited for
    # a core; on a busy shared machine the wall clock also counts the other work's turns.
    parser.add_argument("--clock", choices=CLOCKS, default="wall")
    _hog.add_flag(parser)
    args = parser.parse_args(argv)
    with _hog.beside(args.hog):
        _table(args)


def _table(args: argparse.Namespace) -> None:
    clock = CLOCKS[args.clock]
    counts = [int(c) for c in args.counts.split(",") if c]
    print(
        "targets_for_sql beside the floor, grouping alone and the rules row by row"
        f" (goal: ≤ {GOAL:g}x the floor; {args.clock} clock)"
    )
    for count in counts:
        for name, make in SHAPES:
            rows = make(count)
            assert targets_for_sql(rows) == row_by_row(rows) == grouped_floor(rows)
            t = fastest(
                {
                    "grouping": partial(grouping_only, rows),
                    "floor": partial(grouped_floor, rows),
                    "fast": partial(targets_for_sql, rows),
                    "row by row": partial(row_by_row, rows),
                },
                args.rounds,
                clock,
            )
            ratio = t["fast"] / t["floor"]
            print(
                f"{count:>7} rows, {name:<17}  targets_for_sql {t['fast'] * 1e3:7.2f} ms"
                f" = {ratio:5.2f}x floor ({t['floor'] * 1e3:5.2f} ms)"
                f" {'met' if ratio <= GOAL else 'NOT met'}"
                f" = {t['fast'] / t['grouping']:6.2f}x grouping alone"
                f" ({t['grouping'] * 1e3:5.2f} ms);"
                f" row by row {t['row by row'] / t['floor']:5.2f}x floor"
            )
    print("from_sql end to end: targets, then search_result blocks (at most 40 per source)")
    for name, make in SHAPES:
        rows = make(min(counts))
        result = Result(tuple(rows[0]), tuple(rows))
        t = fastest(
            {
                "floor": partial(grouped_floor, rows),
                "targets": partial(targets_for_sql, rows),
                "from_sql": partial(from_sql, result, "2026-11-29T00:00:00Z"),
            },
            args.rounds,
            clock,
        )
        print(
            f"{len(rows):>7} rows, {name:<17}  from_sql {t['from_sql'] * 1e3:7.2f} ms"
            f" = {t['from_sql'] / t['floor']:5.2f}x floor ({t['floor'] * 1e3:4.2f} ms)"
            f" = {t['from_sql'] / t['targets']:4.2f}x targets_for_sql alone"
        )


if __name__ == "__main__":
    main()
