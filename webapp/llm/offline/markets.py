"""Holdings, allocation and quotes: what the user holds, and what a ticker last traded at.

A quote says when it is from; when that is days ago (the bundled snapshot, or a market
that is closed), the answer says it is not a live price.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from ...tools.python.market import MarketData, SnapshotMarket
from .ask import Question
from .cite import Block, Result, cite, number
from .figures import Row
from .words import join_words, money, percent

STALE_AFTER_DAYS = 4  # a weekend and a holiday
_QUOTE = re.compile(
    r"^(?P<ticker>\S+) last traded at (?P<price>\d[\d,]*(?:\.\d+)?)"
    r"(?:, (?P<change>[+-]\d[\d,]*(?:\.\d+)?) \((?P<pct>[+-]\d+(?:\.\d+)?)%\) on the day)?.*?"
    r"(?: as of (?P<day>\d{4}-\d{2}-\d{2}))?\.$"
)
_PROFILE = re.compile(r"^(?P<name>.+?) \((?P<ticker>[^)]+)\) trades on")


def without_data(tickers: tuple[str, ...], market: MarketData | None = None) -> tuple[str, ...]:
    """Return the tickers `market` (the bundled snapshot unless given) has nothing on: none
    when it is live."""
    market = SnapshotMarket() if market is None else market
    if not isinstance(market, SnapshotMarket):
        return ()
    return tuple(t for t in tickers if t not in market.symbols)


def no_data(tickers: tuple[str, ...]) -> Block:
    """Say plainly which tickers have no market data, and which do."""
    covered = join_words(list(SnapshotMarket().symbols))
    return (
        f"I have no market data for {join_words(list(tickers))}: the market data I have "
        f"covers {covered}.",
        [],
    )


def _quantity(value: float | None) -> str:
    if value is None:
        return "an unknown number of"
    return f"{value:,.0f}" if value == int(value) else f"{value:,.8f}".rstrip("0")


def _position(row: Row) -> str:
    ticker = row.get("ticker") or "?"
    amount = _quantity(number(row.get("quantity")))
    what = (
        f"{amount} {ticker}"
        if row.get("security_type") == "crypto"
        else f"{amount} {'share' if amount == '1' else 'shares'} of {ticker}"
    )
    if row.get("security_name"):
        what += f" ({row.get('security_name')})"
    value = number(row.get("market_value"))
    worth = f" worth {money(value, row.currency)}" if value is not None else ""
    return what + worth


_UNIT = r"(?:share|shares|coin|coins|unit|units|token|tokens"


def _each(question: Question, row: Row) -> str:
    """What one unit is worth by the account's own figures, when the question asks ("what's one
    ETH worth going by my wallet", "per share")."""
    names = "|".join(t.lower() for t in question.tickers)
    unit = _UNIT + (f"|{names})" if names else ")")
    # "each of my AAPL shares", "every one of those shares": one unit, by way of the many
    many = rf"(?:each|every)(?: one)? of (?:my|our|the|those|these) (?:\w+ )?{unit}"
    asked = rf"\bper {unit}\b|\b(?:one|1|a single|each|a) {unit}\b|\b{many}\b"
    value, quantity = number(row.get("market_value")), number(row.get("quantity"))
    if not re.search(asked, question.text.lower()) or not value or not quantity:
        return ""
    ticker = row.get("ticker") or ""
    return (
        f" By those figures one {ticker} is worth {money(value / quantity, row.currency)}"
        f" ({money(value, row.currency)} / {quantity:g})."
    )


def holdings(question: Question, rows: list[Row], cash: list[Row] | None = None) -> list[Block]:
    """What the user holds, per account (or per ticker for the portfolio, with `cash`: the
    uninvested cash of investment accounts, when the question asks how all is divided)."""
    held = [row for row in rows if row.get("ticker")]
    if not held:
        wanted = join_words(list(question.tickers))
        return [
            (
                f"You don't hold any {wanted} in your linked accounts."
                if wanted
                else "You have no investment holdings (stocks, funds or crypto) in your "
                "linked accounts.",
                [],
            )
        ]
    if _BY_TYPE.search(f" {question.text.lower()} ") and not question.tickers:
        return by_type(held, cash or [])
    kind = None if question.tickers else kind_asked(question.text)
    if kind is not None:
        return of_kind(kind, held)
    if "allocation" in question.intents or not any(r.get("account_name") for r in held):
        return allocation(held) + _uninvested(cash or [])
    total = sum(number(row.get("market_value")) or 0.0 for row in held)
    if len(held) == 1:
        (row,) = held
        return [(f"You own {_position(row)}, in {row.label}.{_each(question, row)}", [row.cite])]
    blocks: list[Block] = [
        (f"Your holdings are worth {money(total)} in all:\n", [row.cite for row in held])
    ]
    for row in held:
        each = _each(question, row).removeprefix(" By those figures").rstrip(".")
        blocks.append(
            (f"- {_position(row)}, in {row.label}{';' if each else ''}{each}\n", [row.cite])
        )
    return blocks


def allocation(rows: list[Row]) -> list[Block]:
    """The portfolio's value and each holding's share of it, largest first."""
    values = [(number(row.get("market_value")) or 0.0, row) for row in rows]
    total = sum(value for value, _ in values)
    ranked = sorted(values, key=lambda pair: -pair[0])
    shares = join_words([f"{row.get('ticker')} {percent(value, total)}" for value, row in ranked])
    blocks: list[Block] = [
        (f"Your portfolio is worth {money(total)}: {shares}.\n", [row.cite for _, row in ranked])
    ]
    for value, row in ranked:
        name = f" ({row.get('security_name')})" if row.get("security_name") else ""
        blocks.append(
            (
                f"- {row.get('ticker')}{name}: {money(value, row.currency)}, "
                f"{percent(value, total)}\n",
                [row.cite],
            )
        )
    return blocks


_TYPES = r"(?:stocks?|etfs?|crypto|funds?|mutual funds?|bonds?|cash|equities|equity)"
# A split asked by kind of investment: "by type", "stocks vs etfs vs crypto vs cash".
_BY_TYPE = re.compile(
    rf"\bby (?:type|kind|asset class|class|category)\b|\basset class(?:es)?\b"
    rf"|\btypes? of (?:investments?|assets?|holdings?)\b"
    rf"|\b{_TYPES},? (?:vs\.?|versus|and|or|/) {_TYPES}\b"
)
_TYPE_NAMES = (
    ("etf", "ETFs"),
    ("mutual", "Mutual funds"),
    ("fund", "Funds"),
    ("crypto", "Crypto"),
    ("bond", "Bonds"),
    ("equity", "Stocks"),
    ("stock", "Stocks"),
)


def _type_of(row: Row) -> str:
    said = (row.get("security_type") or "").lower()
    return next((name for mark, name in _TYPE_NAMES if mark in said), "Other")


def by_type(held: list[Row], cash: list[Row]) -> list[Block]:
    """The investments by kind (stocks, ETFs, crypto, ...) and the brokers' uninvested cash,
    each kind's value and share of the whole, largest first."""
    kinds: dict[str, list[Row]] = {}
    for row in held:
        kinds.setdefault(_type_of(row), []).append(row)
    spare = [r for r in cash if number(r.get("uninvested_cash"))]
    values = {
        k: sum(number(r.get("market_value")) or 0.0 for r in rows) for k, rows in kinds.items()
    }
    if spare:
        kinds["Cash"] = spare
        values["Cash"] = sum(number(r.get("uninvested_cash")) or 0.0 for r in spare)
    total = sum(values.values())
    ranked = sorted(kinds, key=lambda k: -values[k])
    blocks: list[Block] = [
        (
            f"Your investments come to {money(total)}, split by type:\n",
            [r.cite for k in ranked for r in kinds[k]],
        )
    ]
    for kind in ranked:
        rows = kinds[kind]
        what = (
            "uninvested, in " + join_words([r.label for r in rows])
            if kind == "Cash"
            else join_words([str(r.get("ticker")) for r in rows])
        )
        blocks.append(
            (
                f"- {kind}: {money(values[kind])}, {percent(values[kind], total)} ({what})\n",
                [r.cite for r in rows],
            )
        )
    return blocks


# One kind of investment asked about alone ("what stocks do I own", "what percent of my
# portfolio is crypto"): the security types it takes in, as the holdings table spells them.
# A stock ETF is stocks to the person who holds it, so stocks take in ETFs; a fund question
# takes ETFs and mutual funds.
INVESTMENT_KINDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (r"stocks?|shares|equities|equity", "stocks", ("equity", "stock", "etf")),
    (r"etfs?|index funds?|funds?|mutual funds?", "funds", ("etf", "mutual")),
    (r"crypto(?:currenc(?:y|ies))?|coins?", "crypto", ("crypto",)),
)


def kind_asked(text: str) -> str | None:
    """Return the one kind of investment a question names ("stocks", "funds", "crypto"), or
    None when it names none or several."""
    said = {
        name for words, name, _ in INVESTMENT_KINDS if re.search(rf"\b(?:{words})\b", text.lower())
    }
    return said.pop() if len(said) == 1 else None


def of_kind(kind: str, held: list[Row]) -> list[Block]:
    """The holdings of one kind, each with its value, and their share of all the holdings."""
    marks = next(types for _, name, types in INVESTMENT_KINDS if name == kind)
    chosen = [r for r in held if any(m in (r.get("security_type") or "").lower() for m in marks)]
    total = sum(number(r.get("market_value")) or 0.0 for r in held)
    if not chosen:
        return [(f"You hold no {kind} in your linked accounts.", [])]
    value = sum(number(r.get("market_value")) or 0.0 for r in chosen)
    verb = "is" if kind == "crypto" else "are"
    blocks: list[Block] = [
        (
            f"Your {kind} {verb} worth {money(value)}, {percent(value, total)} of your "
            f"holdings ({money(total)}):\n",
            [r.cite for r in chosen],
        )
    ]
    for row in chosen:
        where = f", in {row.label}" if row.get("account_name") else ""
        blocks.append((f"- {_position(row)}{where}\n", [row.cite]))
    return blocks


def _uninvested(rows: list[Row]) -> list[Block]:
    """Each investment account's cash not in any holding, said beside the holdings' shares."""
    blocks: list[Block] = []
    for row in rows:
        value = number(row.get("uninvested_cash"))
        if value:
            blocks.append(
                (
                    f"\nBesides those holdings, {row.label} has {money(value, row.currency)} of "
                    "uninvested cash.\n",
                    [row.cite],
                )
            )
    return blocks


def _day(text: str) -> str:
    when = date.fromisoformat(text)
    return f"{when:%B} {when.day}, {when.year}"


def day_move(result: Result) -> tuple[float, Block] | None:
    """A quote result's change on the day, in percent, and the block that says it."""
    for at, text in enumerate(result.texts):
        found = _QUOTE.match(text)
        if found and found["pct"]:
            return float(found["pct"]), (text, [cite(result, at, at + 1)])
    return None


def quote(result: Result, today: date | None = None) -> Block:
    """Say what a ticker last traded at, when, and whether that is live."""
    ticker = result.source.rsplit("/", 1)[-1]
    name = ticker
    for text in result.texts:
        profile = _PROFILE.match(text)
        if profile:
            name = f"{profile['name']} ({ticker})"
    for at, text in enumerate(result.texts):
        found = _QUOTE.match(text)
        price = number((found["price"] or "").replace(",", "")) if found else None
        if not found or not price or not found["day"]:
            continue
        sentence = f"{name} last traded at {money(price)}"
        change = number((found["change"] or "").replace(",", ""))
        if change is not None and found["pct"]:
            direction = "up" if change >= 0 else "down"
            sentence += f", {direction} {money(abs(change))} ({found['pct']}%) on the day"
        age = ((today or datetime.now(UTC).date()) - date.fromisoformat(found["day"])).days
        if age > STALE_AFTER_DAYS:
            sentence += (
                f". That price is from {_day(found['day'])}: a snapshot in my market "
                "data, not a live quote"
            )
        else:
            sentence += f", as of {_day(found['day'])}"
        return sentence + ".", [cite(result, at, at + 1)]
    return f"I have no market data for {ticker}.", []
