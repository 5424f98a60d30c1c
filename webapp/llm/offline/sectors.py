"""A portfolio's sector or industry asked of ("is my portfolio too heavy in tech?", "what's my
exposure to energy stocks", "which sectors am I in?"): the linked data names each holding and
its type, not its sector, so the answer says that plainly and gives what it does hold, each
holding by name with its share, cited to the portfolio's rows. A fund holds many companies,
whose sectors the data doesn't list either: said of each fund held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...tool_registry import EXECUTE_SQL
from .cite import Block, Result
from .figures import rows_of
from .markets import allocation
from .plan import PORTFOLIO_QUERY, ToolCall
from .words import join_words

_SECTORS = re.compile(
    r"\b(?:sectors?|industr(?:y|ies)|tech|technology|energy|oil and gas|health ?care|pharma"
    r"|biotech|financials|bank stocks|semiconductors?|chips?|ai stocks|consumer staples"
    r"|consumer discretionary|real estate stocks|reits?|defen[cs]e stocks|utility stocks)\b"
)
# The person's own investments, not a sector's news or a rule.
_INVESTED = re.compile(
    r"\b(?:my|our) (?:\w+ ){0,2}(?:portfolio|holdings|investments|stocks|shares|brokerage)\b"
    r"|\b(?:am i|are we|i am|i'm|im) (?:\w+ ){0,2}(?:invested|exposed|overweight|underweight"
    r"|heavy|concentrated|diversified)\b|\bmy exposure\b"
)
_NOT_THIS = re.compile(r"\b(?:should|buy|sell|tax\w*|will|news|forecast|outlook)\b")


@dataclass(frozen=True)
class Sectors:
    """The task: the portfolio's holdings by name and share, its sectors said not to be held."""

    def calls(self) -> list[ToolCall]:
        return [ToolCall(EXECUTE_SQL, {"query": PORTFOLIO_QUERY})]

    def write(self, results: list[Result]) -> list[Block]:
        held = [r for r in rows_of(results) if r.get("ticker")]
        said = (
            "The linked data gives each holding's name and type (stock, fund, crypto), not the"
            " sector or industry it is in, so I can't measure how much of your portfolio is in"
            " one sector."
        )
        if not held:
            return [(said + " You have no investment holdings linked.", [])]
        funds = [
            str(r.get("ticker"))
            for r in held
            if any(m in (r.get("security_type") or "").lower() for m in ("etf", "mutual"))
        ]
        if funds:
            one = len(funds) == 1
            said += (
                f" {join_words(funds)} {'is a fund: it' if one else 'are funds: each'} holds many"
                " companies, whose sectors the data doesn't list either."
            )
        return [(said + " What you hold, by name and share:\n", []), *allocation(held)]


def read_sectors(text: str) -> Sectors | None:
    """Return the task of a question about the sectors of one's own investments, or None."""
    lowered = text.lower().replace("-", " ")
    if not _SECTORS.search(lowered) or _NOT_THIS.search(lowered):
        return None
    return Sectors() if _INVESTED.search(lowered) else None
