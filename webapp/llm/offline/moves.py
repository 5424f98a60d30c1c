"""Which of the tickers a message names, or the question before it named, moved more on the
day ("and msft? which one moved more today" after a quote of NVDA): each one's quote, then
the one whose price changed most in percent, up or down, citing each quote it compares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...tool_registry import EXECUTE_PYTHON
from ...tools.python.market import MarketData
from .ask import tickers_in, understand
from .cite import Block, Result
from .conversation import questions_of
from .markets import day_move, quote, without_data
from .plan import ToolCall, quote_code
from .words import join_words, words

_MOVED = re.compile(
    r" (which|what|who) (one |ones |of them |of the two |of those |stock |ticker )?"
    r"((moved|move|changed|change|swung|swing|jumped|rose|gained|fell|dropped|went up|went down"
    r"|is up|was up|is down|was down) (more|most|the most|less|further|bigger)"
    r"|(did|does|is doing|was doing|performed|has done) (better|worse|best|worst))\b"
)


@dataclass(frozen=True)
class Moves:
    """The task: the tickers' quotes, and which moved more."""

    tickers: tuple[str, ...]

    def calls(self) -> list[ToolCall]:
        return [ToolCall(EXECUTE_PYTHON, {"code": quote_code(self.tickers)})]

    def write(self, results: list[Result]) -> list[Block]:
        quotes = [r for r in results if r.source.startswith("silvia://market-data/finnhub/")]
        blocks: list[Block] = [(f"{text}\n", cites) for text, cites in map(quote, quotes)]
        moves = [(r.source.rsplit("/", 1)[-1], found) for r in quotes if (found := day_move(r))]
        if len(moves) < 2:
            return [*blocks, ("I don't have the day's change for both of them to compare.", [])]
        ranked = sorted(moves, key=lambda m: -abs(m[1][0]))
        (top, (pct, _)), rest = ranked[0], ranked[1:]
        others = join_words([f"{t}'s {p:+.2f}%" for t, (p, _) in rest])
        said = f"{top} moved more on the day: {pct:+.2f}%, against {others}."
        return [*blocks, (said, [c for _, (_, (_, found)) in ranked for c in found])]


def read_moves(text: str, earlier: tuple[str, ...], market: MarketData | None) -> Moves | None:
    """Read a message that asks which of its (or the last question's) tickers moved more,
    every other part of it a quote."""
    parts = questions_of(text)
    asking = [p for p in parts if _MOVED.search(" " + " ".join(words(p)) + " ")]
    if not asking:
        return None
    for part in parts:
        if part not in asking and set(understand(part).intents) - {"quote"}:
            return None  # "... and what's my balance?": a question of its own
    tickers = list(dict.fromkeys(tickers_in(text)))
    if len(tickers) < 2 and earlier:
        tickers = list(dict.fromkeys(tickers_in(earlier[-1]) + tickers))
    held = tuple(t for t in tickers if t not in without_data(tuple(tickers), market))
    return Moves(held) if len(held) >= 2 else None
