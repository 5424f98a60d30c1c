"""An account's balance once a regular bill comes out of it ("if rent comes out of checking
tomorrow, how much do I have left?", "and what's left after rent?" after a question about the
checking balance): the bill read from the payees that recur in the user's transactions
(`regular.py`), the account from the question, else from the one before it, else the account
the bill is paid from. Each figure cites the account whose rows it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from ...tool_registry import EXECUTE_SQL
from .ask import Question, understand
from .cite import Block, Result, number
from .figures import Row, rows_of
from .periods import month_start
from .plan import ACCOUNT_COLUMNS, ToolCall, account_query
from .regular import BILL_KINDS, BILL_MARKS, named, read_span, regular_query
from .sides import resolve
from .words import join_words, money, words

# What asks for the balance that remains ("how much do I have left", "what will checking be
# at"), and what puts the bill first ("after rent", "once rent comes out", "if rent is paid").
_REMAINS = re.compile(
    r" (left|leftover|remaining|remain|remains|be at|end up with|end up at|balance be) |"
    r" (will|would|do|does) (i|we|it) (still )?(have|hold) "
)
_BILL_FIRST = re.compile(r" (after|once|when|if|minus|less|then) ")
_AFTER = re.compile(r" (after|once) ")
_SPEND = frozenset({"spend", "spent", "spending", "spends", "budget"})
_ORDER = " ORDER BY account_name, institution_name"


def accounts_query(asked: Question, bills: frozenset[str], today: date) -> str:
    """The accounts the question names (else the bank accounts) that the bill comes out of,
    or all of those when it comes out of none of them: only the account the answer is about,
    so that its figure cites that account and no other under its label."""
    named = asked.kinds or asked.institutions
    inner = (
        account_query(replace(asked, intents=("balances",)))
        if named
        else f"SELECT {ACCOUNT_COLUMNS} FROM account_details WHERE account_type = 'depository'"
    )
    marks = " OR ".join(f"subcategory LIKE '%{m}%'" for k in sorted(bills) for m in BILL_MARKS[k])
    paid = (
        "SELECT source_account_id FROM transaction_details"
        f" WHERE ({marks}) AND date >= '{month_start(today, 5).isoformat()}'"
    )
    return (
        f"SELECT * FROM ({inner}) AS asked WHERE source_account_id IN ({paid})"
        f" OR NOT EXISTS (SELECT 1 FROM ({inner}) AS again"
        f" WHERE source_account_id IN ({paid})){_ORDER}"
    )


@dataclass(frozen=True)
class AfterBill:
    """The task: the recurring payees and the bank accounts, and what one is left at."""

    text: str
    account: Question
    bills: frozenset[str]
    today: date

    def calls(self) -> list[ToolCall]:
        return [
            ToolCall(EXECUTE_SQL, {"query": regular_query(self.today)}),
            ToolCall(EXECUTE_SQL, {"query": accounts_query(self.account, self.bills, self.today)}),
        ]

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        payees = [r for r in rows if r.get("typical") is not None]
        bills = [r for r in named(self.text, payees) if (number(r.get("typical")) or 0.0) > 0]
        accounts = [r for r in rows if r.get("typical") is None and r.balance is not None]
        if not bills:
            return [
                (
                    "I couldn't find that bill among the ones that recur in your transactions"
                    " of the last six months.",
                    [],
                )
            ]
        asked = self.account
        base = resolve(asked, accounts) if asked.kinds or asked.institutions else accounts
        paying = [a for a in base if any(_same_account(a, b) for b in bills)]
        base = paying or base  # "checking": the one of them the bill comes out of
        if not base:
            what = " ".join([*(i.title() for i in asked.institutions), *asked.kinds])
            return [(f"You have no {what} account linked.", [])]
        if len(base) != 1:
            return [(_which(base), [r.cite for r in base])]
        (where,) = base
        start = where.balance or 0.0
        out = sum(number(b.get("typical")) or 0.0 for b in bills)
        names = join_words(
            [f"{b.get('merchant')} ({money(number(b.get('typical')) or 0.0)})" for b in bills]
        )
        left = start - out
        said = f"{where.label[:1].upper()}{where.label[1:]} has {money(start)}; after {names}" + (
            f" it would have {money(left)} left."
            if left >= 0
            else f" it would be {money(-left)} short."
        )
        paid = [b for b in bills if not _same_account(where, b)]
        note = (
            [
                (
                    f"({join_words([str(b.get('merchant')) for b in paid])} usually comes out of"
                    f" {join_words([b.label for b in paid])}.)",
                    [b.cite for b in paid],
                )
            ]
            if paid
            else []
        )
        return [(said, [where.cite, *(b.cite for b in bills)]), *note]


def _same_account(account: Row, bill: Row) -> bool:
    return all(account.get(c) == bill.get(c) for c in ("account_name", "institution_name"))


def _which(accounts: list[Row]) -> str:
    return (
        "Which account would it come out of? "
        + join_words([f"{a.label} has {a.amount()}" for a in accounts])
        + "."
    )


def read_after_bill(text: str, earlier: tuple[str, ...], today: date) -> AfterBill | None:
    """Read a question about what an account is left at once a regular bill is paid."""
    phrase = " " + " ".join(words(text)) + " "
    said = set(phrase.split())
    bills = said & BILL_KINDS
    if not bills or said & _SPEND or read_span(text) is not None:
        return None
    account = understand(text)
    # "once the mortgage is paid": the bill, not an account of that kind
    account = replace(account, kinds=tuple(k for k in account.kinds if k not in bills))
    before = understand(earlier[-1]) if earlier else None
    held = before is not None and bool(before.kinds or before.institutions)
    # "ok and after rent comes out?" after the checking balance: what it is left at, unsaid
    implied = held and len(words(text)) <= 8 and _AFTER.search(phrase) is not None
    if not (_REMAINS.search(phrase) and _BILL_FIRST.search(phrase)) and not implied:
        return None
    if not (account.kinds or account.institutions) and before is not None and held:
        account = before  # "and what's left after rent?" after the checking balance
    return AfterBill(text, account, frozenset(bills), today)
