"""Figures from the user's own rows: totals, net worth, utilization, per institution or
account, holdings and allocation. Each figure cites the rows it is computed from.

Balances follow the data: a credit or loan account's balance is the amount owed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ...tool_registry import EXECUTE_SQL
from .ask import Question
from .card_limits import one_limit, supposed
from .cite import Block, Result, cite, fields, number
from .words import count_of, join_words, money, percent, sentence, words

_OWED = ("credit", "loan")
_KIND_NOUNS = {
    "checking": "checking account",
    "savings": "savings account",
    "credit": "credit card",
    "depository": "bank account",
    "investment": "investment account",
    "retirement": "retirement account",
    "mortgage": "mortgage",
    "loan": "loan",
    "property": "property",
    "crypto": "crypto wallet",
}
# Names an institution gives an account by its type alone: said after the institution, as
# people say them ("your Chase checking account", "your Citi credit card"), never "Credit card
# at Citi". Other names ("Sapphire Preferred", "Home") are said as they are.
_TYPE_NAMES = {
    "checking": "checking account",
    "savings": "savings account",
    "credit card": "credit card",
    "individual": "individual account",
    "joint": "joint account",
    "brokerage": "brokerage account",
    "money market": "money market account",
}
_ASSET_GROUPS = (
    ("depository", "Cash"),
    ("investment", "Investments"),
    ("property", "Property"),
    ("crypto", "Crypto"),
)


@dataclass(frozen=True, slots=True)
class Row:
    """One SQL row of this turn: where it was written, and its values."""

    result: Result
    at: int
    values: dict[str, str | None]

    def get(self, key: str) -> str | None:
        return self.values.get(key)

    @property
    def cite(self) -> dict[str, Any]:
        return cite(self.result, self.at, self.at + 1)

    @property
    def kind(self) -> str:
        return self.get("account_type") or ""

    @property
    def owed(self) -> bool:
        return self.kind in _OWED

    @property
    def balance(self) -> float | None:
        return number(self.get("current_balance"))

    @property
    def currency(self) -> str | None:
        return self.get("currency")

    @property
    def label(self) -> str:
        """Name an account as a person would, inside a sentence: "your Chase checking
        account", "Sapphire Preferred at Chase", "Home"."""
        title = self.title
        return f"your {title}" if self._type_name else title

    @property
    def title(self) -> str:
        """Name an account as a list item would: "Chase checking account", "Home"."""
        name = self.get("account_name") or "An account"
        place = self.get("institution_name")
        if not place or place.lower() == name.lower():
            return name
        if self._type_name:
            return f"{place} {self._type_name}"
        crypto = "crypto" in (self.kind, self.get("security_type"))
        return f"{name} {'on' if crypto else 'at'} {place}"

    @property
    def _type_name(self) -> str | None:
        if not self.get("institution_name"):
            return None
        return _TYPE_NAMES.get((self.get("account_name") or "").strip().lower())

    def amount(self, value: float | None = None) -> str:
        shown = self.balance if value is None else value
        return "no balance on record" if shown is None else money(shown, self.currency)

    @property
    def owes(self) -> str:
        """The amount owed on a credit or loan account, as a positive figure."""
        return self.amount(abs(self.balance) if self.balance is not None else None)


def rows_of(results: Iterable[Result]) -> list[Row]:
    """Return every row of this turn's SQL results, in the order they were written."""
    return [
        Row(result, at, fields(text))
        for result in results
        if result.tool == EXECUTE_SQL
        for at, text in enumerate(result.texts)
        if ": " in text
    ]


def _cites(rows: Iterable[Row]) -> list[dict[str, Any]]:
    return [row.cite for row in rows]


def _total(rows: Iterable[Row]) -> float:
    return sum(abs(row.balance or 0.0) if row.owed else (row.balance or 0.0) for row in rows)


def _lines(rows: list[Row], say: Callable[[Row], str] | None = None) -> list[Block]:
    """One bullet per cited label ("Credit card" may be two cards), citing its rows."""
    groups: dict[tuple[int, str | None], list[Row]] = {}
    for row in rows:
        groups.setdefault((id(row.result), row.get("account_name")), []).append(row)
    lines: list[Block] = []
    for group in groups.values():
        if len(group) == 1:
            (row,) = group
            line = f"{row.title}: {say(row) if say else row.amount()}"
        else:
            parts = [
                f"{say(r) if say else r.amount()} at {r.get('institution_name')}"
                if r.get("institution_name")
                else f"{say(r) if say else r.amount()}"
                for r in group
            ]
            line = f"{group[0].get('account_name')}: {join_words(parts)}"
        lines.append((f"- {line}\n", [row.cite for row in group]))
    return lines


def _none_found(question: Question) -> Block:
    what = join_words([_KIND_NOUNS[k] for k in question.kinds]) or "accounts"
    where = join_words([name.title() if name.islower() else name for name in question.institutions])
    if where:
        return (f"You have no {what} at {where} among your linked accounts.", [])
    if question.kinds:
        return (f"You have no {what} among your linked accounts.", [])
    return ("You have no accounts linked yet, so there are no balances to show.", [])


def _by_extreme(question: Question, rows: list[Row]) -> list[Row]:
    if question.extreme is None or len(rows) < 2:
        return rows
    return sorted(rows, key=lambda r: abs(r.balance or 0.0), reverse=question.extreme == "most")


def _extreme(question: Question, ranked: list[Row]) -> list[Block]:
    """Lead with the account the question singles out ("the highest balance"), if it does."""
    if question.extreme is None or len(ranked) < 2:
        return []
    top = ranked[0]
    word = "highest" if question.extreme == "most" else "lowest"
    return [
        (
            sentence(
                f"{top.label} has the {word} balance: {top.owes if top.owed else top.amount()}."
            ),
            [top.cite],
        )
    ]


def _versus(question: Question, total: float, rows: list[Row]) -> list[Block]:
    """Set a figure against the amount the question names ("Do I have $20,000 in savings?")."""
    if not question.amounts:
        return []
    asked = question.amounts[0]
    gap = total - asked
    relation = (
        "exactly"
        if not gap
        else (f"{money(abs(gap))} more than" if gap > 0 else f"{money(abs(gap))} short of")
    )
    return [(f"That is {relation} the {money(asked)} you asked about.", _cites(rows))]


def _listed(sentences: list[Block], lines: list[Block]) -> list[Block]:
    """End the sentences' paragraph where the list of accounts starts."""
    *head, (text, cites) = sentences
    return [*head, (text + "\n", cites), *lines]


def debts(question: Question, rows: list[Row]) -> list[Block]:
    """What the user owes: the total, then each account."""
    owed = [row for row in rows if row.owed] or rows
    if not rows:
        return [
            _none_found(question)
            if question.kinds or question.institutions
            else (
                "I found no credit cards or loans among your linked accounts, so there is "
                "nothing owed to show.",
                [],
            )
        ]
    total = _total(owed)
    if len(owed) == 1:
        (row,) = owed
        return [
            (f"You owe {row.owes} on {row.label}.", [row.cite]),
            *_versus(question, total, owed),
        ]
    cards = all(row.kind == "credit" for row in owed)
    noun = count_of(len(owed), "credit card" if cards else "account")
    ranked = _by_extreme(question, owed)
    return _listed(
        [
            *_extreme(question, ranked),
            (f"In total you owe {money(total)} across {noun}.", _cites(owed)),
            *_versus(question, total, owed),
        ],
        _lines(ranked, lambda r: r.owes),
    )


def cash(question: Question, rows: list[Row]) -> list[Block]:
    """Cash in checking and savings: the total, then each account (and a brokerage's
    uninvested cash, when the question names the brokerage)."""
    uninvested = [r for r in rows if r.kind == "investment"]
    rows = [r for r in rows if r.kind != "investment"]
    if uninvested and not rows:
        return [
            (
                f"{sentence(r.label)} holds {r.amount(number(r.get('available_balance')))} "
                f"in cash, not invested, of its {r.amount()} value.\n",
                [r.cite],
            )
            for r in uninvested
        ]
    if not rows:
        return [
            _none_found(question)
            if question.kinds or question.institutions
            else ("You have no checking or savings accounts linked.", [])
        ]
    total = _total(rows)
    if len(rows) == 1:
        (row,) = rows
        return [
            (f"You have {row.amount()} in {row.label}.", [row.cite]),
            *_versus(question, total, rows),
        ]
    return _listed(
        [
            (
                f"You have {money(total)} in cash across {count_of(len(rows), 'account')}.",
                _cites(rows),
            ),
            *_versus(question, total, rows),
        ],
        _lines(rows),
    )


def net_worth(question: Question, rows: list[Row]) -> list[Block]:
    """Assets minus debts, saying what each side counts."""
    if not rows:
        return [("You have no accounts linked yet, so there is no net worth to add up.", [])]
    known = [row for row in rows if row.balance is not None]
    assets = [row for row in known if not row.owed]
    owed = [row for row in known if row.owed]
    worth = _total(assets) - _total(owed)
    blocks: list[Block] = [
        (
            f"Your net worth is {money(worth)}: {money(_total(assets))} in assets minus "
            f"{money(_total(owed))} in debts.\n",
            _cites(known),
        )
    ]
    groups = [(title, [r for r in assets if r.kind == kind]) for kind, title in _ASSET_GROUPS]
    groups.append(
        ("Other assets", [r for r in assets if r.kind not in {k for k, _ in _ASSET_GROUPS}])
    )
    for title, members in groups:
        if members:
            names = join_words([r.label for r in members])
            blocks.append((f"- {title}: {money(_total(members))} ({names})\n", _cites(members)))
    if owed:
        names = join_words([f"{r.label} {r.owes}" for r in owed])
        blocks.append((f"- Debts: {money(_total(owed))} ({names})\n", _cites(owed)))
    missing = [row for row in rows if row.balance is None]
    if missing:
        blocks.append(
            (
                f"Not counted, with no balance on record: "
                f"{join_words([r.label for r in missing])}.",
                _cites(missing),
            )
        )
    return blocks


def utilization(question: Question, rows: list[Row]) -> list[Block]:
    """Credit used against credit limits, overall and per card."""
    cards = [row for row in rows if row.kind == "credit"]
    if not cards and rows and question.kinds and "credit" not in question.kinds:
        named = join_words([r.label for r in rows])
        return [(sentence(f"{named} has no credit limit: only a card has one.\n"), _cites(rows))]
    if not cards:
        return [("You have no credit cards linked, so there is no credit utilization.", [])]
    limited = [row for row in cards if number(row.get("credit_limit"))]
    used = _total(limited)
    limits = sum(number(row.get("credit_limit")) or 0.0 for row in limited)
    blocks: list[Block] = []
    if len(cards) == 1 and limited and {"limit", "limits"} & set(words(question.text)):
        return one_limit(cards[0], used, limits)  # "Amex limit?": that card's, named
    if limited:
        blocks.append(
            (
                f"Your credit utilization is {percent(used, limits)}: "
                f"you owe {money(used)} against {money(limits)} in credit limits, "
                f"leaving {money(limits - used)} available.\n",
                _cites(limited),
            )
        )

    def say(row: Row) -> str:
        limit = number(row.get("credit_limit"))
        if not limit:
            return f"{row.owes} owed, no credit limit on record"
        return (
            f"{row.owes} of {money(limit, row.currency)} "
            f"({percent(abs(row.balance or 0.0), limit)})"
        )

    if len(cards) > 1 or not limited:
        blocks += _lines(_by_extreme(question, cards), say)
    return blocks + supposed(question.text, question.amounts, used, limits, limited)


def balances(question: Question, rows: list[Row]) -> list[Block]:
    """Balances of the accounts the question names (or of all of them)."""
    if not rows:
        return [_none_found(question)]
    if all(row.owed for row in rows) and (question.kinds or not question.names):
        return debts(question, rows)
    assets = [row for row in rows if not row.owed]
    owed = [row for row in rows if row.owed]
    if len(rows) == 1:
        (row,) = rows
        if row.owed:
            return [(f"You owe {row.owes} on {row.label}.", [row.cite])]
        verb = "is valued at" if row.kind == "property" else "has a balance of"
        return [
            (sentence(f"{row.label} {verb} {row.amount()}."), [row.cite]),
            *_versus(question, _total(rows), rows),
        ]
    ranked = _by_extreme(question, rows)
    places = {row.get("institution_name") for row in rows}
    where = f" at {places.pop()}" if len(places) == 1 and None not in places else ""
    parts = []
    if assets:
        parts.append(f"{money(_total(assets))} in {'them' if not owed else 'assets'}")
    if owed:
        parts.append(
            f"{money(_total(owed))} owed on {count_of(len(owed), 'card')}"
            if all(r.kind == "credit" for r in owed)
            else f"{money(_total(owed))} owed"
        )
    return _listed(
        [
            *_extreme(question, ranked),
            (
                f"You have {count_of(len(rows), 'account')}{where}, with {join_words(parts)}.",
                _cites(rows),
            ),
            *_versus(question, _total(assets), assets),
        ],
        _lines(ranked, lambda r: f"{r.owes} owed" if r.owed else r.amount()),
    )
