"""A sum spent and the months of a bill left after it ("thinking of putting 10k down on a car.
would i still have 6 months of mortgage payments left in savings after that?", "if I spend
$2,000 on a trip, does my checking still cover three months of rent?"): the account the
question names (else all the cash), what it holds and would hold after the sum, the bill it
names (or the fixed bills) from the transactions over the months it names, and whether what
is left covers them, each figure cited to its rows.

Read by meaning: one amount, one count of months, a bill (rent, the mortgage, the bills), and
a word that asks what would be left ("still", "left", "after", "leave")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...tool_registry import EXECUTE_SQL
from .advice_figures import months_said
from .ask import understand
from .bills import Outgoings, bill_names, bills_queries, months, said_bills
from .cite import Block, Result
from .figures import Row, rows_of
from .plan import ACCOUNT_COLUMNS, ToolCall
from .words import amounts, count_of, money

_CASH = (
    f"SELECT {ACCOUNT_COLUMNS} FROM account_details WHERE account_type = 'depository'"
    " ORDER BY account_name, institution_name"
)
_LEFT = re.compile(r"\b(still|left|leave|leaves|leaving|remaining|after that|afterwards|after)\b")
_BILL = re.compile(r"\b(rent|mortgage|bills|expenses|outgoings|fixed costs)\b")


@dataclass(frozen=True)
class MonthsLeft:
    """The task of a sum spent and the months of a bill its account would still cover."""

    text: str
    amount: float
    count: int
    today: date | None = None

    def calls(self) -> list[ToolCall]:
        today = self.today or date.today()
        calls = [ToolCall(EXECUTE_SQL, {"query": _CASH})]
        return calls + [ToolCall(EXECUTE_SQL, {"query": q}) for q in bills_queries(today)]

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
        if not cash:
            return [("You have no bank accounts linked, so I can't see what would be left.", [])]
        kinds = set(understand(self.text).kinds) & {"savings", "checking"}
        chosen = [r for r in cash if r.get("account_subtype") in kinds] or cash
        held = sum(r.balance or 0.0 for r in chosen)
        after = held - self.amount
        where = chosen[0].label if len(chosen) == 1 else "your bank accounts"
        verb = "holds" if len(chosen) == 1 else "hold"
        text = (
            f"{where[0].upper()}{where[1:]} {verb} {money(held)}; after the {money(self.amount)} "
            f"it would hold {money(after)}."
        )
        blocks: list[Block] = [(text + " ", [r.cite for r in chosen])]
        return blocks + self._bills(Outgoings.of(rows), after, chosen)

    def _bills(self, spend: Outgoings, after: float, chosen: list[Row]) -> list[Block]:
        bills = spend.named(self.text) or spend.bills
        if not bills:
            return [("I found no regular bills in your transactions to count the months by.", [])]
        monthly = sum(float(r.get("typical") or 0) for r in bills)
        need = self.count * monthly
        span = count_of(self.count, "month")
        said = (
            f"{span[0].upper()}{span[1:]} of {said_bills(self.text, bills)} "
            f"({bill_names(bills)}) come to {money(need)}"
        )
        cites = [r.cite for r in bills] + [r.cite for r in chosen]
        if after >= need:
            over = money(after - need)
            verdict = f", so yes: {money(after)} would still cover them, with {over} over."
        elif after > 0:
            lasts = months(after, monthly).removeprefix("about ")
            verdict = (
                f", so no: {money(after)} would be {money(need - after)} short of that, "
                f"enough for about {lasts}."
            )
        else:
            verdict = ", so no: nothing would be left to cover them."
        return [(said + verdict, cites)]


def read_months_left(text: str, today: date | None = None) -> MonthsLeft | None:
    """The task of a sum spent and the months of a bill left after it, or None."""
    lowered = text.lower()
    count = months_said(text)
    found = amounts(text)
    if not count or len(found) != 1 or not _LEFT.search(lowered) or not _BILL.search(lowered):
        return None
    return MonthsLeft(text, found[0], count, today)
