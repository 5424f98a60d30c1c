"""How each kind of rule is joined to the user's figures (a topic's `rule` in guidance.toml):
a cap per bank, a yearly limit funded from an account, a payroll limit, what a credit score
weighs (guidance_score.py), a gift's $250 line, the age to claim, and (guidance_home.py) a
mortgage, PMI's 80 percent and the home-sale exclusion. Each quotes its page's sentences
(cited), sets the user's figures against them (cited to their rows), shows the arithmetic and
says what it can't know."""

from __future__ import annotations

from collections.abc import Callable

from . import lexicon
from .cite import Block
from .figures import Row
from .guidance import Case
from .guidance_ages import claim_age
from .guidance_figure import money_said
from .guidance_figures import (
    absent,
    accounts_named,
    as_of,
    cites,
    flow,
    funded,
    listed,
    named,
    of_kind,
    percent_said,
    source,
    stated_pay,
    stated_schedule,
    total,
    whole,
)
from .guidance_home import home_sale, mortgage, pmi
from .guidance_ira import ira_excess, ira_income
from .guidance_pay import retirement_start, take_home
from .guidance_quoted import quoted
from .guidance_score import score
from .scope import padded
from .words import count_of, join_words, money, percent, sentence, years


def _named_as(place: str) -> str:
    """An institution as the question named it, capitalised: "Bank of America"."""
    return " ".join(w if w in ("of", "and", "the") else w.capitalize() for w in place.split())


def per_bank(case: Case) -> list[Block]:
    """Deposit insurance: each bank's deposits against the per-bank cap; what isn't a deposit."""
    limits = case.page.amounts(case.topic.limit)
    if not limits:
        return case.unread()
    cap = limits[0]
    blocks = case.quote(case.topic.limit)
    deposits = of_kind(case.accounts, "depository")
    asked = named(case.question, deposits) or deposits
    others = of_kind(case.accounts, "investment", "crypto")
    if case.question.institutions and not named(case.question, deposits):
        # "eth wallet + robinhood": a place whose accounts aren't deposits is said below
        shown = {str(r.get("institution_name") or "").lower() for r in others}
        places = [_named_as(i) for i in case.question.institutions if i not in shown]
        if places:
            said = f"You have no bank deposits at {join_words(places)} among your linked accounts."
            blocks.append((f"\n{said}", []))
    blocks += absent(case.question, deposits)
    if "deposits" in case.bearing or not asked:
        banks: dict[str, list[Row]] = {}
        for row in asked:
            banks.setdefault(str(row.get("institution_name") or row.title), []).append(row)
        for bank, rows in banks.items():
            held = total(rows)
            if len(rows) == 1:
                said = f"{sentence(rows[0].label)} holds {money(held)}: that is"
            else:
                said = f"At {bank} you have {money(held)} in deposits: {listed(rows)}. That is"
            if held <= cap:
                said += f" {money(cap - held)} under the {whole(cap)} limit, so none of it is over."
            else:
                said += (
                    f" {money(held - cap)} over the {whole(cap)} limit, so that much may not be "
                    "insured."
                )
            blocks.append((f"\n{said}", cites(rows)))
        if not banks:
            blocks.append(("\nYou have no bank accounts linked, so there are no deposits.", []))
    if "not_deposits" in case.bearing and others:
        blocks.append(("\n", []))
        blocks += case.quote(case.topic.quotes[0])
        one = len(others) == 1
        blocks.append(
            (
                f"So {listed(others)}"
                + ("" if one else f", {money(total(others))} in all,")
                + f" {'is not a deposit' if one else 'are not deposits'}, and "
                f"the FDIC doesn't insure {'it' if one else 'them'}.",
                cites(others),
            )
        )
    blocks.append(("\nI've assumed each account is in your name alone.", []))
    blocks += case.quote(case.topic.quotes[1])
    blocks.append(("The linked data doesn't show how your accounts are owned.", []))
    return blocks


_CUSHION = ("cushion", "emergency", "emergencies", "rainy day", "safety net", "buffer")


def yearly_limit(case: Case) -> list[Block]:
    """A yearly limit (an IRA's, I bonds'), funded from the account the question names."""
    limits = case.page.amounts(case.topic.limit)
    if not limits:
        return case.unread()
    cap = limits[0]
    said = money_said(case.question)
    asked = said[0] if said else cap
    blocks = case.quote(case.topic.limit)
    if asked > cap:
        blocks.append((f"\n{money(asked)} is more than that {whole(cap)} limit.", []))
    blocks += _year_note(case, limits)
    into = case.topic.noun_for(case.question)
    rows = source(case.question, case.accounts) if "source" in case.bearing else []
    blocks += absent(case.question, rows) if rows else []
    if rows:
        blocks += funded(rows, asked, into)
        if lexicon.has_phrase(padded(case.question.text), _CUSHION) and total(rows) >= asked:
            blocks.append(
                (
                    "Whether what's left is enough of a cushion depends on your monthly expenses, "
                    "which balances alone don't show.",
                    [],
                )
            )
    elif "source" in case.bearing:
        blocks.append(
            ("\nYou have no bank accounts linked, so I can't see what it would come from.", [])
        )
    pay = flow(case.flows, "INCOME") if "pay" in case.bearing else None
    if pay:
        blocks.append(
            (
                f"\nYour pay from {pay.payee} comes into {pay.account}: {money(pay.amount)} "
                f"{pay.every}, {pay.per_year} paychecks a year. Spread over them, "
                f"{money(asked)} is {money(asked / pay.per_year)} a paycheck.",
                cites(list(pay.rows)),
            )
        )
    elif "pay" in case.bearing:
        blocks.append(("\nI don't see any paychecks among your transactions.", []))
    elif rows and total(rows) < asked:
        blocks.append((f"Spread over a year, it is {money(asked / 12)} a month.", []))
    blocks.append(("\n", []))
    blocks += case.quote(*case.topic.quotes)
    if case.topic.unknown:
        blocks.append((case.topic.unknown, []))
    return blocks


def _year_note(case: Case, limits: list[float]) -> list[Block]:
    """Say so when the page's limit is for a year before the data's, and the question didn't
    ask for that year: the page is what the answer knows."""
    said = case.page.sentence(case.topic.limit)
    page_year = years(said[0]) if said else []
    now = as_of(case.accounts + case.flows)
    if not page_year or not now or now <= page_year[0] or page_year[0] in case.question.years:
        return []
    return [
        (
            f"That is the limit for {page_year[0]}, the latest year the page I have gives; "
            f"the limit for {now} may differ.",
            [],
        )
    ]


def payroll_limit(case: Case) -> list[Block]:
    """A payroll plan's limit (a 401(k)'s) per paycheck, from the pay among the transactions."""
    limits = case.page.amounts(case.topic.limit)
    if not limits:
        return case.unread()
    cap = limits[0]
    blocks = case.quote(case.topic.limit)
    pay = flow(case.flows, "INCOME") or stated_pay(case.question, money_said(case.question))
    schedule = stated_schedule(case.question)
    if pay is None and schedule and "pay" not in case.bearing:
        # "I'm paid every two weeks": the limit over the paychecks, no deposit needed
        count, every = schedule
        blocks.append(
            (
                f"\nPaid {every}, you get {count} paychecks a year, so maxing out the "
                f"{whole(cap)} takes {whole(cap)} ÷ {count} = {money(cap / count)} from each "
                "one (your plan takes it from your gross pay, before tax).",
                [],
            )
        )
        return [*blocks, ("\n", []), *case.quote(*case.topic.quotes)]
    if pay is None:
        blocks.append(
            (
                "\nI don't see any paychecks among your transactions: tell me what you're paid "
                "and how often, and I'll work out each paycheck's share.",
                [],
            )
        )
        return blocks
    if pay.stated:
        blocks.append(
            (
                f"\nYou said you're paid {money(pay.amount)} {pay.every}: "
                f"{pay.per_year} paychecks a year.",
                [],
            )
        )
    else:
        blocks.append(
            (
                f"\nYour pay from {pay.payee} comes into {pay.account}: {money(pay.amount)} "
                f"{pay.every} (the last {count_of(len(pay.rows), 'deposit')}, the latest on "
                f"{pay.latest}), "
                f"{pay.per_year} paychecks a year.",
                cites(list(pay.rows)),
            )
        )
    share = percent_said(case.question.text)
    if share is not None:
        each = pay.amount * share / 100
        year = each * pay.per_year
        blocks.append(
            (
                f"\n{share:g}% of each paycheck is {money(each)}, or {money(year)} over "
                f"{pay.per_year} paychecks: "
                + (
                    f"{money(cap - year)} under the {whole(cap)} limit."
                    if year <= cap
                    else f"{money(year - cap)} over the {whole(cap)} limit."
                ),
                [],
            )
        )
        net = "what's left of each deposit would be " + money(pay.amount - each)
        blocks.append(
            (
                f" If it came out of the deposits themselves, {net}; but a plan takes its share "
                f"of your gross pay, before tax, which I can't see, so {share:g}% of it would be "
                f"more than {money(each)} and your take-home pay would fall by less.",
                [],
            )
        )
    else:
        each = cap / pay.per_year
        blocks.append(
            (
                f"\nMaxing out the {whole(cap)} takes {whole(cap)} ÷ {pay.per_year} = "
                f"{money(each)} from each paycheck, {percent(each, pay.amount)} of each "
                f"{money(pay.amount)} deposit.",
                [],
            )
        )
        blocks.append(
            (
                " Those deposits are your take-home pay; your plan takes its contributions from "
                "your gross pay, before tax, which I can't see.",
                [],
            )
        )
    blocks.append(("\n", []))
    blocks += case.quote(*case.topic.quotes)
    return blocks


def gift(case: Case) -> list[Block]:
    """A gift to charity: the deduction's conditions, the $250 line, the account it's from."""
    limits = case.page.amounts(case.topic.limit)
    blocks = case.quote(*case.topic.quotes, case.topic.limit)
    said = money_said(case.question)
    if said and limits:
        line = limits[0]
        blocks.append(
            (
                f"\nAt {money(said[0])}, your gift is "
                + (
                    f"over the {whole(line)} line, so you'd need that written acknowledgment "
                    "from the charity before you file."
                    if said[0] >= line
                    else f"under the {whole(line)} line for a written acknowledgment."
                ),
                [],
            )
        )
    banks = of_kind(case.accounts, "depository")
    asked_for = named(case.question, banks) or {"checking", "savings"} & set(case.question.kinds)
    rows = source(case.question, banks) if asked_for else []
    if said and rows:
        have = total(rows)
        where = rows[0].label if len(rows) == 1 else accounts_named(rows)
        blocks.append(
            (
                f" {sentence(where)} {'holds' if len(rows) == 1 else 'hold'} {money(have)}; "
                f"giving {money(said[0])} from {'it' if len(rows) == 1 else 'them'} would leave "
                f"{money(have - said[0])}.",
                cites(rows),
            )
        )
    blocks.append(("\n", []))
    blocks += case.quote("Tax Exempt Organization Search")
    blocks.append(
        (
            "It lowers your tax only if you itemize rather than take the standard deduction, "
            "which I can't tell from your accounts.",
            [],
        )
    )
    return blocks


RULES: dict[str, Callable[[Case], list[Block]]] = {
    "per_bank": per_bank,
    "yearly_limit": yearly_limit,
    "payroll_limit": payroll_limit,
    "mortgage": mortgage,
    "pmi": pmi,
    "home_sale": home_sale,
    "score": score,
    "gift": gift,
    "claim_age": claim_age,
    "take_home": take_home,
    "retirement_start": retirement_start,
    "quoted": quoted,
    "growth": quoted,
    "ira_income": ira_income,
    "ira_excess": ira_excess,
}
