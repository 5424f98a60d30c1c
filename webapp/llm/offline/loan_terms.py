"""The terms of a person's own loan or the interest their accounts earn, which the linked data
doesn't hold: said plainly, beside what it does hold, cited.

"How much interest am I paying on my mortgage?", "when will my car loan be paid off?", "how
many payments are left on my student loans?": the linked data has no loan's rate, balance
schedule or end date, only the payments seen in the transactions, which the answer gives (the
loan's regular payment, cited to the account it leaves). "Which of my accounts earns the most
interest?", "how much interest does my savings earn?": no account's APY is held either; the
answer says so and gives the interest paid in over the last six months, cited (none, said so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ...tool_registry import EXECUTE_SQL
from . import lexicon
from .cite import Block, Result, number
from .figures import Row, rows_of
from .periods import month_start
from .plan import ToolCall
from .regular import regular_query
from .scope import out_of_scope
from .spending_ask import ROW_COLUMNS
from .task import Context
from .words import join_words, money, words

# A loan of the person's own, as they name it, and the transaction detail of its payments.
_LOANS: tuple[tuple[str, str, str], ...] = (
    (r"mortgage|home loan|house loan", "mortgage", "LOAN_PAYMENTS_MORTGAGE_PAYMENT"),
    (r"car loan|auto loan|car note|car payment|vehicle loan", "car loan", "LOAN_PAYMENTS_CAR"),
    (r"student loans?", "student loans", "LOAN_PAYMENTS_STUDENT"),
    (r"heloc|home equity (?:loan|line)", "home equity loan", "LOAN_PAYMENTS"),
    (r"personal loan|loans?", "loan", "LOAN_PAYMENTS"),
)
_OWN_LOAN = re.compile(
    r" (?:my|our) (?:\w+ ){0,2}?(?P<loan>"
    + "|".join(f"(?:{p})" for p, _, _ in _LOANS)
    + r") | (?:my|our) (?P<thing>house|home|car) (?:\w+ ){0,4}?paid off "
)
# The facts of a loan the data doesn't hold, each as the answer names it.
_FACTS: tuple[tuple[str, str], ...] = (
    (r" interest| rate | rates | apr ", "the interest rate or the interest in each payment"),
    (
        r" paid off| pay off date| payoff| (?:pay|paying) (?:it |this |that |my |our )?off"
        r"| done paying| end date| ends? ",
        "when it will be paid off",
    ),
    (
        r" payments? (?:are )?(?:left|remaining)| years? (?:are )?(?:left|remaining)",
        "how much is left to pay",
    ),
    (
        r" months? (?:are )?(?:left|remaining)| how long (?:until|till|before|is left)",
        "how much is left to pay",
    ),
    (r" principal | term | amortization | schedule ", "the terms and schedule"),
)
# Advice or a rule asked of the loan, not a fact of it: the open and documents answers.
_NOT_A_FACT = re.compile(
    r" should | could (?:i|we) | would it | how (?:do|can|could|would) (?:i|we) | faster | early "
    r"| refinanc\w* | extra | deduct\w* | tax\w* | if (?:i|we) | worth | better | lower "
)
# The interest an account earns ("which of my accounts earns the most interest", "how much
# interest does my savings make"), not what a card or loan charges.
_EARN_WORDS = frozenset(
    {"earn", "earns", "earning", "earned", "earnings", "make", "makes", "making", "made"}
    | {"yield", "yields", "apy", "accrue", "accrues", "accrued", "get", "gets", "got", "gotten"}
)
_RANKS = frozenset({"most", "best", "highest", "which", "more", "top", "biggest"})
_RATES = frozenset({"apy", "apr", "rate", "rates", "yield", "yields"})
_CHARGED = frozenset({"card", "cards", "credit", "loan", "loans", "mortgage", "owe", "debt"})


def _asks_earned(said: set[str]) -> bool:
    return "interest" in said and bool(said & _EARN_WORDS) and not said & _CHARGED


_INTEREST_QUERY = (
    f"SELECT {ROW_COLUMNS} FROM transaction_details WHERE category = 'INCOME'"
    " AND (subcategory LIKE '%INTEREST%' OR lower(description) LIKE '%interest%')"
    " AND date >= '{since}' ORDER BY date DESC LIMIT 12"
)


@dataclass(frozen=True)
class LoanTerms:
    """The task: what isn't held, said, and the payments (or the interest earned) that are."""

    loan: str  # how the answer names the loan; "" for the interest accounts earn
    ranked: bool  # which account earns the most: a ranking the data can't give
    detail: str  # the transaction detail its payments carry
    facts: tuple[str, ...]
    today: date

    def calls(self) -> list[ToolCall]:
        if self.loan:
            return [ToolCall(EXECUTE_SQL, {"query": regular_query(self.today)})]
        since = month_start(self.today, 5).isoformat()
        return [ToolCall(EXECUTE_SQL, {"query": _INTEREST_QUERY.format(since=since)})]

    def write(self, results: list[Result]) -> list[Block]:
        rows = rows_of(results)
        return self._loan(rows) if self.loan else _earned(rows, self.ranked)

    def _loan(self, rows: list[Row]) -> list[Block]:
        facts = join_words(list(dict.fromkeys(self.facts))) or "its terms"
        said = (
            f"I don't have the details of your {self.loan} ({facts}): the data linked here holds no"
            " loan's rate, balance schedule or end date. Your lender's statement or app shows"
            " them."
        )
        paid = [
            r
            for r in rows
            if (r.get("subcategory") or "").startswith(self.detail)
            and (number(r.get("typical")) or 0.0) > 0
        ]
        if not paid:
            return [
                (
                    f"{said} I don't see regular payments on your {self.loan} in your"
                    " transactions.",
                    [],
                )
            ]
        blocks: list[Block] = [(said + " What your transactions do show is the payment:\n", [])]
        for row in paid:
            amount = money(number(row.get("typical")) or 0.0, row.currency)
            blocks.append(
                (f"- {row.get('merchant')}: {amount} a month, from {row.label}\n", [row.cite])
            )
        return blocks


def _earned(rows: list[Row], ranked: bool) -> list[Block]:
    """No account's rate is held: the interest paid in (if any) and the accounts that could."""
    said = (
        "I don't have the interest rates (APY) your accounts earn: they aren't in the data"
        " linked here, so I can't "
        + ("rank your accounts by interest." if ranked else "work out what they earn.")
        + " Your bank's app shows them."
    )
    paid = [r for r in rows if r.get("transaction_id")]
    blocks: list[Block] = [(said + " ", [])]
    if paid:
        total = sum(-(number(r.get("amount")) or 0.0) for r in paid)
        blocks.append(
            (
                f"In the last six months {money(total)} of interest was paid into your accounts.",
                [r.cite for r in paid],
            )
        )
    else:
        blocks.append(("Your transactions of the last six months show no interest paid in.", []))
    return blocks


def read_loan_terms(text: str, today: date) -> LoanTerms | None:
    """Return the task of a question about one's own loan's terms or the interest one's
    accounts earn, or None."""
    phrase = " " + " ".join(words(text.replace("-", " "))) + " "
    if _NOT_A_FACT.search(phrase):
        return None
    said = set(phrase.split())
    if _asks_earned(said) and not said & _RATES:  # a rate asked: scope's plain reply
        return (
            LoanTerms("", _RANKS & said != set(), "", (), today)
            if said & {"my", "our", "i", "we", "mine", "me"}
            else None
        )
    own = _OWN_LOAN.search(phrase)
    if own is None:
        return None
    facts = tuple(said for pattern, said in _FACTS if re.search(pattern, phrase))
    if not facts:
        return None
    named = own["loan"] or {"car": "car loan"}.get(own["thing"] or "", "mortgage")
    loan, detail = next(
        ((name, detail) for p, name, detail in _LOANS if re.fullmatch(p, named)),
        ("loan", "LOAN_PAYMENTS"),
    )
    return LoanTerms(loan, False, detail, facts, today)


# The replies of data not held (or of a future unknowable) that a loan's terms or an account's
# interest answer better, with what is held beside them.
_TERMS_NOT_HELD = frozenset(
    r.reply
    for r in lexicon.rules("scope")
    if r.kind in ("interest rate", "statement details", "projection")
)


def loan_terms_asked(text: str, context: Context) -> LoanTerms | None:
    """The task of a loan's terms or an account's interest, unless the question is declined
    or names a document not held or an action (scope's reply answers those)."""
    said = out_of_scope(text, context.books)
    if said and said not in _TERMS_NOT_HELD:
        return None
    return read_loan_terms(text, context.today or date.today())
