"""A rule a page states in words (a card's grace period, what the Fed's rate moves, where free
credit reports come from, how big an emergency fund should be, how compounding doubles money),
joined to the figures of the user's that bear on it: the page's sentences first, each cited,
then the user's cards, bank balances, rent or mortgage payment, each cited to its rows, with
the arithmetic the two together allow (months of rent a balance covers, the years a balance
takes to double at the rate the question names) and what the answer can't know."""

from __future__ import annotations

import math

from .advice_figures import months_said
from .charges import charges_said
from .cite import Block, number
from .guidance import Case
from .guidance_figure import stemmed
from .guidance_figures import cites, flow, listed, narrowed, of_kind, percent_said, total
from .words import join_words, money, sentence


def _cards(case: Case) -> list[Block]:
    cards = narrowed(case.question, of_kind(case.accounts, "credit"))
    if not cards:
        return [("You have no credit cards linked. ", [])]
    said = [f"{r.label} has {money(abs(r.balance or 0.0))} owed" for r in cards]
    limits = [r for r in cards if r.get("credit_limit")]
    text = sentence(join_words(said))
    if len(cards) > 1:  # "all three of my cards": what they come to together
        text += f", {money(total(cards))} in all"
    if len(limits) == 1 and len(cards) == 1:
        limit = float(limits[0].get("credit_limit") or 0)
        text += f", against a {money(limit)} limit ({money(limit - total(cards))} unused)"
    return [(text + ". ", cites(cards))]


def _holdings(case: Case) -> list[Block]:
    if not case.holdings:
        names = join_words(list(case.question.tickers))
        return [(f"You hold no {names} among your linked accounts. ", [])]
    blocks: list[Block] = []
    for row in case.holdings:
        shares = number(row.get("quantity")) or 0.0
        worth = number(row.get("market_value")) or 0.0
        place = f"your {row.get('institution_name')} {str(row.get('account_name')).lower()} account"
        blocks.append(
            (
                f"You hold {shares:g} shares of {row.get('ticker')}, worth {money(worth)}, "
                f"in {place}. ",
                [row.cite],
            )
        )
    return blocks


def _other_card(case: Case) -> list[Block]:
    """Say so when the question paid with a card other than the one whose benefits the page
    states ("I put it on my Citi card - can I claim under the Sapphire's protection?")."""
    mine = case.topic.card
    cards = narrowed(case.question, of_kind(case.accounts, "credit"))
    other = [r for r in cards if mine and mine not in r.label.lower()]
    if not mine or not other or len(other) == len(cards):
        return []
    names = join_words([r.label for r in other])
    return [
        (
            f"You say it went on {names}, not the {mine.title()}, so the {mine.title()}'s "
            "benefits wouldn't cover it: only the benefits of the card you paid with would. ",
            cites(other),
        )
    ]


def _banks(case: Case) -> tuple[list[Block], float]:
    banks = narrowed(case.question, of_kind(case.accounts, "depository"))
    if not banks:
        return [("You have no bank accounts linked. ", [])], 0.0
    held = total(banks)
    if len(banks) == 1:
        return [(f"{sentence(banks[0].label)} holds {money(held)}. ", cites(banks))], held
    text = f"Your bank accounts hold {money(held)} between them: {listed(banks)}. "
    return [(text, cites(banks))], held


def _housing(case: Case, held: float | None) -> list[Block]:
    kept = "RENT_AND_UTILITIES_RENT", "LOAN_PAYMENTS_MORTGAGE_PAYMENT"
    paid = next((f for f in (flow(case.flows, k) for k in kept) if f), None)
    if paid is None:
        return []
    what = "rent" if paid.rows[0].get("subcategory") == kept[0] else "mortgage payment"
    text = f"Your {what} is {money(paid.amount)} {paid.every}, to {paid.payee}"
    if held and paid.per_year == 12 and paid.amount:
        months = held / paid.amount
        text += f", so {money(held)} would cover about {months:.1f} months of it"
        text += _months_asked(case.question.text, paid.amount, held)
    return [(text + ". ", [r.cite for r in paid.rows[:1]])]


def _months_asked(text: str, amount: float, held: float) -> str:
    """The months of it the question names ("is 3 months of rent enough?"), against what the
    bank accounts hold: "; 3 months of it come to $5,625.00, so you are $2,504.56 short"."""
    count = months_said(text)
    if not count:
        return ""
    need = count * amount
    gap = f"so you are {money(need - held)} short of that" if held < need else "which you have"
    return f"; {count} months of it come to {money(need)}, {gap}"


def _doubling(case: Case, held: float) -> list[Block]:
    rate = percent_said(case.question.text)
    if not rate or not held or rate > 50:
        return []
    years = math.log(2) / math.log(1 + rate / 100)
    return [
        (
            f"At {rate:g}% a year, {money(held)} would grow to about {money(2 * held)} in "
            f"roughly {years:.1f} years (72 ÷ {rate:g} is {72 / rate:.1f}, the rule of thumb). "
            "That is arithmetic, not a forecast: returns vary from year to year.",
            [],
        )
    ]


def _asked(case: Case) -> tuple[str, ...]:
    """The topic's quotes the question asks about, or all of them when it asks of none in
    particular. A quote "cue|cue > key" is asked about when the question says a cue (compared
    by stem); a bare key, when it says one of the key's first words."""
    said = stemmed(case.question.text)
    keys, picked = [], []
    for quote in case.topic.quotes:
        cues, _, key = quote.rpartition(" > ")
        heard = cues.split("|") if cues else [w for w in key.split()[:3] if len(w) > 3]
        keys.append(key)
        if any(stemmed(c) in said for c in heard):
            picked.append(key)
    return tuple(picked if case.topic.pick and picked else keys)


def quoted(case: Case) -> list[Block]:
    """The page's sentences, then the user's figures that bear on them."""
    blocks = case.quote(*(k for k in (case.topic.limit, *_asked(case)) if k))
    if not blocks:
        return case.unread()
    mine: list[Block] = []
    held: float | None = None
    if {"deposits", "source", "tax_source"} & set(case.bearing):
        said, held = _banks(case)
        mine += said
    if "charge" in case.bearing:  # "the hulu charge on my visa": what that payee charged
        mine += charges_said(case.question, list(case.charges))
    if {"cards", "card_balance"} & set(case.bearing):
        mine += _cards(case)
    if {"cards", "card_balance", "card_used"} & set(case.bearing):
        mine += _other_card(case)  # a purchase on another card than the benefits' own
    if {"housing", "mortgage", "mortgage_payment"} & set(case.bearing):
        mine += _housing(case, held)
    if "holdings" in case.bearing:
        mine += _holdings(case)
    if case.topic.rule == "growth" and held:
        mine += _doubling(case, held)
    if mine:  # the user's figures, a paragraph of their own after the page's
        blocks += [("\n", []), *mine]
    if case.topic.unknown:
        blocks.append((f"\n{case.topic.unknown}", []))
    return blocks
