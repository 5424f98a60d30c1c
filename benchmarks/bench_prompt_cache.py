"""Input tokens billed per turn, with prompt caching and without, side by side in one run.

Each turn is the real thing on the real HTTP path: the Claude engine with the product's own
system prompt and tools, three tool rounds (each result a few kilobytes of account rows) and
an answer, against the fake Claude server on loopback. The fake reports usage the way the API
counts it (`input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`; see
`tests/support/fake_claude.py`, `CacheLedger`), and a turn is billed at the API's rates
relative to plain input: a cache write 1.25x, a cache read 0.1x. Tokens are the fake's
estimate (a token per four characters of JSON): the ratio is what carries over.

Two chats of `--turns` questions each run interleaved, one engine with caching and one
without; the second turn onward of a chat also reads the system prompt and tools cached by
the turn before. Run: `.venv/bin/python benchmarks/bench_prompt_cache.py [--turns 3]`.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.fake_claude import CacheLedger, FakeClaude, text_reply, tool_reply  # noqa: E402
from tests.support.turns import CannedTools, MemorySink  # noqa: E402
from webapp.llm.claude import ClaudeModel  # noqa: E402
from webapp.turn.runner import run_turn, start_checkpoint  # noqa: E402

WRITE, READ = 1.25, 0.1  # a cache write and a cache read, priced against plain input
ROUNDS = 3


def _rows(round_index: int) -> list[dict[str, object]]:
    return [
        {
            "source": "plaid",
            "source_account_id": f"acct{round_index:02d}{i:04d}" + "x" * 20,
            "account_name": f"Account {i}",
            "institution_name": "Chase",
            "current_balance": 1000.0 + i,
            "currency": "USD",
        }
        for i in range(40)
    ]


QUERIES = [f"SELECT * FROM account_details WHERE round = {r}" for r in range(ROUNDS)]
TOOLS = CannedTools({q: _rows(r) for r, q in enumerate(QUERIES)})


def _turn_replies() -> list[Any]:
    calls = [tool_reply((f"tu_{r}", "execute_sql", {"query": q})) for r, q in enumerate(QUERIES)]
    return [*calls, text_reply(("Your accounts hold $41,000 in all.", []))]


@dataclass
class Bill:
    plain: int = 0
    written: int = 0
    read: int = 0

    def add(self, usage: dict[str, int]) -> None:
        self.plain += usage["input_tokens"]
        self.written += usage["cache_creation_input_tokens"]
        self.read += usage["cache_read_input_tokens"]

    @property
    def billed(self) -> float:
        return self.plain + WRITE * self.written + READ * self.read


def run(turns: int) -> dict[bool, list[Bill]]:
    """Return each turn's bill, with caching (True) and without (False)."""
    bills: dict[bool, list[Bill]] = {True: [], False: []}
    # One API cache per chat, kept across its turns, as the real one is for five minutes.
    ledgers = {True: CacheLedger(), False: CacheLedger()}
    histories: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for index in range(turns):
        for cache in (False, True):  # interleaved: neither side runs on a warmer machine
            with FakeClaude(_turn_replies()) as fake:
                fake.ledger = ledgers[cache]
                engine = ClaudeModel("sk-bench", base_url=fake.url, prompt_cache=cache)
                question = f"Question {index}: what do my accounts hold?"
                result = run_turn(
                    engine, TOOLS, MemorySink(), start_checkpoint(histories[cache], question)
                )
                assert result.status == "complete", result.error
                bill = Bill()
                for usage in fake.usages:
                    bill.add(usage)
                bills[cache].append(bill)
                histories[cache] += [
                    {"role": "user", "content": question},
                    {"role": "assistant", "content": result.content},
                ]
    return bills


def main(argv: list[str] | None = None) -> dict[bool, list[Bill]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args(argv)
    bills = run(args.turns)
    print(f"{ROUNDS} tool rounds and an answer per turn; tokens as the fake counts them")
    print("turn  uncached billed   cached: plain  written   read   billed   ratio")
    for i, (off, on) in enumerate(zip(bills[False], bills[True], strict=True), 1):
        print(
            f"{i:>4}  {off.billed:>14.0f}   {on.plain:>12} {on.written:>8} {on.read:>6}"
            f" {on.billed:>8.0f}   {on.billed / off.billed:>5.2f}x"
        )
    total_off = sum(b.billed for b in bills[False])
    total_on = sum(b.billed for b in bills[True])
    print(
        f"all turns: {total_on:.0f} billed with caching, {total_off:.0f} without: "
        f"{total_on / total_off:.2f}x"
    )
    return bills


if __name__ == "__main__":
    main()
