"""A sum that has come in (a bonus, a windfall, a tax refund, an inheritance) and what to do
with it, read by meaning: a word of money come in, an amount, and a question of its use
("what's the most sensible thing to do with it?", "overpay the mortgage, clear the cards or
invest it?"). The answer takes the order a careful plan usually does, each step with the
user's own figures, cited: the card and loan debt first (what paying it would leave), then
the emergency fund (the cash against three to six months of the fixed bills from their
transactions), then the mortgage or investing, with what it can't know (interest rates,
goals) said, and the emergency-fund guide's sentence on windfalls, cited to its page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...tool_registry import EXECUTE_PYTHON, EXECUTE_SQL
from . import lexicon
from .bills import Outgoings, bills_queries, months
from .cite import Block, Result
from .figures import Row, rows_of
from .overview import GUIDES, guidance
from .plan import ToolCall, article_code
from .scope import padded
from .words import amounts, bare_amounts, join_words, money

_CAME_IN = (
    "bonus", "windfall", "inheritance", "inherited", "tax refund", "refund", "came into",
    "come into", "coming into", "lump sum", "extra cash", "extra money", "spare cash",
    "payout", "settlement", "prize", "won", "cash gift", "gifted", "unexpected", "left me",
    "left us", "landed", "received", "gave me", "gave us", "given me", "from selling",
)  # fmt: skip
_USE = (
    "do with", "best use", "use it", "sensible", "smartest", "wisest", "best thing",
    "prioritise", "prioritize", "priority", "or invest", "invest it", "save it", "where should",
    "what should", "put it", "spend it", "should i", "would you", "use of", "how best",
)  # fmt: skip
# "got $5k from ...", "just received 2000": a sum that came in, said with its amount.
_GOT = re.compile(r"\b(got|received|receiving) (an? |about |around )?\$?\d")
_WHICH_DEBT = re.compile(r" which (of my )?(\S+ )?(card|cards|debt|debts|one|loan)s? | first ")
_ALL_ACCOUNTS = (
    "SELECT source, source_account_id, account_name, institution_name, account_type,"
    " account_subtype, current_balance, currency, synced_at, credit_limit FROM account_details"
    " ORDER BY account_name, institution_name"
)


def read_windfall(text: str) -> float | None:
    """Return the sum a message says has come in and asks what to do with, or None."""
    phrase = padded(text)
    came_in = lexicon.has_phrase(phrase, _CAME_IN) or _GOT.search(text.lower()) is not None
    if not (came_in and lexicon.has_phrase(phrase, _USE)):
        return None
    if _WHICH_DEBT.search(phrase):
        return None  # "a $2,000 bonus: which card should it go to first?" is the payoff order
    found = amounts(text) or [a for a in bare_amounts(text) if a >= 100]
    return found[0] if found else None


def _total(rows: list[Row]) -> float:
    return sum(abs(r.balance or 0.0) for r in rows)


@dataclass(frozen=True)
class Windfall:
    """The task of a sum come in: the user's accounts, their bills, the guide page."""

    text: str
    amount: float
    today: date | None = None

    def calls(self) -> list[ToolCall]:
        today = self.today or date.today()
        calls = [ToolCall(EXECUTE_SQL, {"query": _ALL_ACCOUNTS})]
        calls += [ToolCall(EXECUTE_SQL, {"query": q}) for q in bills_queries(today)]
        calls.append(ToolCall(EXECUTE_PYTHON, {"code": article_code([GUIDES["cushion"]["title"]])}))
        return calls

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        known = [r for r in rows if r.balance is not None and r.get("typical") is None]
        cards = [r for r in known if r.owed]
        cash = [r for r in known if r.kind == "depository"]
        invested = [r for r in known if r.kind in ("investment", "crypto")]
        spend = Outgoings.of(rows)
        left = self.amount
        blocks: list[Block] = [
            (
                f"I can't give personal financial advice, but a careful plan for "
                f"{money(self.amount)} usually goes in this order. I don't have your interest "
                "rates, which would decide close calls.\n",
                [],
            )
        ]
        if cards:
            owed = _total(cards)
            each = (
                f"on {cards[0].label}"
                if len(cards) == 1
                else "(" + join_words([f"{r.owes} on {r.label}" for r in cards]) + ")"
            )
            paid = min(owed, left)
            left -= paid
            after = (
                f"Clearing all of it would leave {money(left)} of the {money(self.amount)}."
                if paid == owed
                else f"The {money(self.amount)} would pay off {money(paid)} of it, largest "
                "rate first if you know your rates."
            )
            blocks.append(
                (
                    f"1. Card and loan debt: you owe {money(owed)} {each}. Card interest "
                    f"usually costs more than savings or investments earn, so this comes first. "
                    f"{after}\n",
                    [r.cite for r in cards],
                )
            )
        else:
            blocks.append(("1. Debt: you have no card or loan balances linked to pay off.\n", []))
        cushion, left = self._cushion(cash, spend, left)
        blocks += cushion + self._then(invested, spend, left)
        blocks += guidance("cushion_windfall", results) or guidance("cushion", results)
        return blocks

    def _cushion(self, cash: list[Row], spend: Outgoings, left: float) -> tuple[list[Block], float]:
        """The cash against three to six months of the fixed bills, and what is left after
        topping it up to three."""
        if not cash:
            none = "2. Emergency fund: you have no bank accounts linked to measure it by.\n"
            return [(none, [])], left
        have = _total(cash)
        if len(cash) == 1:
            said = f"2. Emergency fund: you have {money(have)} in {cash[0].label}"
        else:
            where = join_words([f"{r.amount()} in {r.label}" for r in cash])
            said = f"2. Emergency fund: you have {money(have)} in cash ({where})"
        if not spend.bills:
            said += "; a common target is three to six months of expenses.\n"
            return [(said, [r.cite for r in cash])], left
        monthly = spend.monthly
        cites = [r.cite for r in cash] + [r.cite for r in spend.bills]
        said += f", {months(have, monthly)} of your fixed bills ({money(monthly)} a month). "
        target = 3 * monthly
        if have >= 6 * monthly:
            said += "That is already past six months, so it needs none of this."
        elif have >= target:
            said += (
                f"That is past three months ({money(target)}); some of what is left could "
                "take it toward six."
            )
        elif left > 0:
            put = min(left, target - have)
            left -= put
            said += (
                f"Three months would be {money(target)}: putting {money(put)} there would bring "
                f"it to {money(have + put)}."
            )
        else:
            said += f"Three months would be {money(target)}, so building it comes next."
        return [(said + "\n", cites)], left

    def _then(self, invested: list[Row], spend: Outgoings, left: float) -> list[Block]:
        mortgage = [r for r in spend.bills if "MORTGAGE" in str(r.get("subcategory") or "")]
        start = f"3. With the {money(left)} left" if left >= 0.01 else "3. After that"
        said = f"{start}, the longer term: retirement savings or investing"
        cites = []
        if invested:
            said += f" (you hold {money(_total(invested))} in investments now)"
            cites += [r.cite for r in invested]
        if mortgage or re.search(r"\bmortgage\b", self.text.lower()):
            bill = mortgage[0] if mortgage else None
            each = money(float(bill.get("typical") or 0)) if bill else ""
            paid = f" (you pay {bill.get('merchant')} {each} a month)" if bill else ""
            said += (
                f", or paying extra on the mortgage{paid}, a sure saving at its interest rate, "
                "which I don't have; investing may earn more or less than that rate"
            )
            cites += [r.cite for r in mortgage]
        return [
            (said + ". Which suits you depends on your goals and when you need the money.\n", cites)
        ]
