"""A guided answer's rule about pay against the home's cost: the paychecks among the
transactions (how much, how often, a month's worth), the rent or mortgage payment and its
share of that pay, what is left after it, and (asked what could be put aside) last month's
spending taken from it, each figure cited to its rows; then the budget page's rule of thumb.
Take-home pay is all the deposits show: a share of gross pay, which lenders and rules of
thumb often use, can't be worked out from them, and the answer says so."""

from __future__ import annotations

import re

from .cite import Block, number
from .figures import Row
from .guidance import Case
from .guidance_figure import money_said
from .guidance_figures import Flow, cites, flow, listed, of_kind, stated_pay, total, whole
from .words import count_of, money, percent

_WEIGHED = re.compile(
    r"\b(too (big|much|high|large)|a lot|ok|okay|reasonable|normal|affordable|fine)\b"
)
# What asks for the page's own advice: a budget, what it suggests, a rule of thumb.
_ADVISED = re.compile(
    r"\b(budget\w*|structure|suggest\w*|recommend\w*|advi[cs]e\w*|rule of thumb|cfpb|should)\b"
)
_HOUSING = (("mortgage", "LOAN_PAYMENTS_MORTGAGE_PAYMENT"), ("rent", "RENT_AND_UTILITIES_RENT"))


def _housing(case: Case) -> tuple[str, Flow] | None:
    """The rent or mortgage payment the question names (else whichever the rows hold)."""
    said = case.question.text.lower()
    found = [(name, flow(case.flows, key)) for name, key in _HOUSING]
    held = [(name, f) for name, f in found if f is not None]
    named = [(name, f) for name, f in held if name in said]
    chosen = named or held
    return chosen[0] if chosen else None


def _pay_line(pay: Flow) -> Block:
    if pay.stated:
        return (f"You said you're paid {money(pay.amount)} {pay.every}. ", [])
    return (
        f"Your pay from {pay.payee} comes into {pay.account}: {money(pay.amount)} {pay.every} "
        f"(the last {count_of(len(pay.rows), 'deposit')}, the latest on {pay.latest}). ",
        cites(list(pay.rows)),
    )


def take_home(case: Case) -> list[Block]:
    """Pay a month against the rent or mortgage, what is left, and what could be saved."""
    pay = flow(case.flows, "INCOME") or stated_pay(case.question, money_said(case.question))
    if pay is None:
        return [
            (
                "I don't see any paychecks among your transactions: tell me what you're paid "
                "and how often, and I'll set your housing costs against it.",
                [],
            )
        ]
    blocks = [_pay_line(pay)]
    monthly = pay.amount * pay.per_year / 12
    usual = pay.amount * (pay.per_year // 12)  # the paychecks of an ordinary month
    if pay.per_year == 26:
        blocks.append(
            (
                f"That is {money(monthly)} a month on average; most months bring two paychecks "
                f"({money(usual)}) and two months a year bring a third.",
                [],
            )
        )
    else:
        usual = monthly
        blocks.append((f"That is {money(monthly)} a month.", []))
    found = _housing(case)
    left = usual
    if found is None:
        if "housing" in case.bearing:  # the payments are looked for only when asked of
            blocks.append(("\nI see no rent or mortgage payments among your transactions.", []))
    else:
        name, home = found
        home_month = home.amount * home.per_year / 12
        left = usual - home_month
        share = f"{percent(home_month, monthly)} of your average month's pay"
        if usual != monthly:
            share += f", {percent(home_month, usual)} of a two-paycheck month"
        of = "those two paychecks" if usual != monthly else "the month's pay"
        blocks.append(
            (
                f"\n{home.account[0].upper()}{home.account[1:]} pays {home.payee} "
                f"{money(home.amount)} {home.every} for your {name}: {share}. After it, "
                f"{money(left)} of {of} is left.",
                cites(list(home.rows)),
            )
        )
    spent = [r for r in case.accounts if r.get("total") is not None and r.get("category")]
    if "saving" in case.bearing:
        named = found[0] if found else "bills"
        blocks += _saving(spent, usual, usual != monthly, named)
    if found and _WEIGHED.search(case.question.text.lower()):
        blocks.append(
            (
                f"\nThe pages I have set no limit on what share of pay a {found[0]} should take, "
                "so I can't call it too big: that turns on what the rest of your spending needs.",
                [],
            )
        )
    asked = case.question.text.lower()
    if "saving" not in case.bearing and not (_WEIGHED.search(asked) or _ADVISED.search(asked)):
        return blocks  # a sum ("how much is left after rent?"): the figures answer it alone
    # a question of saving, of whether it is too much, or of the page's advice: its rules
    blocks.append(
        (
            "\nThose deposits are your take-home pay; a share of your gross pay, before tax, "
            "which some rules of thumb use, I can't work out from them.",
            [],
        )
    )
    blocks.append(("\n", []))
    blocks += case.quote(*case.topic.quotes)
    return blocks


def _saving(spent: list[Row], usual: float, two: bool, named: str) -> list[Block]:
    """Last month's spending, rent included, taken from an ordinary month's pay."""
    if not spent:
        return [("\nI found no spending last month to take from it.", [])]
    total = sum(number(r.get("total")) or 0.0 for r in spent)
    period = str(spent[0].get("period") or "last month")
    spare = usual - total
    kinds = {"mortgage": "LOAN_PAYMENTS", "rent": "RENT_AND_UTILITIES"}
    held = kinds.get(named) in {r.get("category") for r in spent}
    included = f", your {named} included" if held else ""
    pay = "two paychecks" if two else "a month's pay"
    said = (
        f"\nEverything you spent {period}{included}, came to "
        f"{money(total)}. Set against {pay} ({money(usual)}), that "
        + (
            f"leaves about {money(spare)} you could realistically put aside in a month like it"
            + (", and a third paycheck's worth more in the months that bring one." if two else ".")
            if spare > 0
            else f"is {money(-spare)} more than came in, so nothing was left to put aside."
        )
    )
    return [(said, cites(spent))]


def _held(rows: list[Row]) -> str:
    """ "$3,120.44, in your checking account", or the sum and each account's part."""
    if len(rows) == 1:
        return f"{money(total(rows))}, in {rows[0].label}"
    return f"{money(total(rows))}: {listed(rows)}"


def retirement_start(case: Case) -> list[Block]:
    """Saving for retirement: what is put by, the yearly limits the page gives, and what
    they would take from each paycheck; no target by age, which the pages don't give."""
    limits = case.page.amounts(case.topic.limit)
    if not limits:
        return case.unread()
    held = of_kind(case.accounts, "retirement")
    invested = [r for r in of_kind(case.accounts, "investment") if r not in held]
    cash = of_kind(case.accounts, "depository")
    blocks: list[Block] = []
    if held:
        blocks.append((f"Your retirement accounts hold {_held(held)}. ", cites(held)))
    else:
        blocks.append(
            ("You have no retirement accounts linked, so I see no retirement savings. ", [])
        )
        stated = money_said(case.question)
        if stated:  # "I only have 20k saved for retirement": theirs, held elsewhere
            blocks.append((f"You say you have {money(stated[0])} put by for it elsewhere. ", []))
    if invested:
        blocks.append((f"Your investments hold {_held(invested)}. ", cites(invested)))
    if cash:
        blocks.append((f"Your cash is {_held(cash)}.", cites(cash)))
    blocks.append(
        (
            "\nThe pages I have set no savings target by age, so I can't say whether you're "
            "behind. What they give is the most you can put in each year.",
            [],
        )
    )
    blocks += case.quote(case.topic.limit, *case.topic.quotes)
    ira = case.page.amounts(case.topic.quotes[0]) if case.topic.quotes else []
    pay = flow(case.flows, "INCOME") or stated_pay(case.question, money_said(case.question))
    if pay is None:
        blocks.append(
            (
                "\nTell me what you're paid and how often, and I'll work out each paycheck's part.",
                [],
            )
        )
        return blocks
    year = pay.amount * pay.per_year
    said = (
        f"\nYour pay from {pay.payee} is {money(pay.amount)} {pay.every}, {money(year)} a year "
        f"as it reaches your account. Putting 10% of it away, for example, would be "
        f"{money(year / 10)} a year ({money(pay.amount / 10)} a paycheck)"
    )
    if ira:
        each = ira[0] / pay.per_year
        said += (
            f"; filling an IRA's {whole(ira[0])} would take {money(each)} a paycheck, "
            f"{percent(each, pay.amount)} of each"
        )
    blocks.append((said + ".", cites(list(pay.rows))))
    blocks.append(
        (
            " How much you need turns on when you want to retire and what you'll live on, which "
            "I can't see; what you can spare is your pay less your spending.",
            [],
        )
    )
    return blocks
