"""A guided answer's rules from IRS Publication 590-A, set against what the person earns:
the Roth IRA's income phase-out for their filing status and the traditional IRA's deduction
(whole without a plan at work, phased out with one), from the paychecks among their
transactions or the income they state; and the 6% tax on what they put in over the limit.
Each quotes the publication's sentences, shows the arithmetic and says what the take-home
pay in the data can't show (the pay before tax that modified AGI starts from)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cite import Block
from .guidance import Case
from .guidance_figure import money_said
from .guidance_figures import Flow, cites, flow, funded, source, whole
from .guidance_home import filing_jointly
from .words import amounts, money

# The age a person gives ("i'm 26", "I am 55", "turned 52", "age 61", "26 years old").
_AGE = re.compile(
    r"\b(?:i'?m|i am|im|turned|turning|age|aged)\s+(\d{2})\b|\b(\d{2})\s*(?:years? old|yo|y/o)\b"
)
_CATCH_UP_AGE = 50
# A plan at work the question says the person has, or says they don't.
_PLAN = r"(401\s?\(?k\)?|403\s?\(?b\)?|457|tsp|pension|(retirement|workplace) plan|plan at work)"
_NO_PLAN = re.compile(
    rf"\b(no|not|dont|don't|doesnt|doesn't|without|isnt|isn't|lacks?|never)\b[^.?!;]{{0,30}}{_PLAN}"
    r"|\bnot covered\b"
)
_HAS_PLAN = re.compile(_PLAN)
_EARNS = re.compile(
    r"\b(making|make|earning|earn|earns|salary|income|paid|gross|bring in|take home)\b(.*)"
)
_COMPARED = re.compile(
    r"\b(roth (or|vs|versus) (a )?traditional|traditional (or|vs|versus) (a )?roth)\b"
)


def age_said(text: str) -> int | None:
    """Return the age the person gives, if any."""
    found = _AGE.search(text.lower())
    return int(found[1] or found[2]) if found else None


def _plan_at_work(text: str) -> bool | None:
    """Whether the question says the person has a retirement plan at work (None: unsaid)."""
    lowered = text.lower()
    if _NO_PLAN.search(lowered):
        return False
    return True if _HAS_PLAN.search(lowered) else None


def _limit(case: Case) -> tuple[list[Block], float | None]:
    """The publication's yearly limit, and the one that applies at the age the person gives."""
    limits = case.page.amounts(case.topic.limit)
    if not limits:
        return case.unread(), None
    blocks = case.quote(case.topic.limit)
    age = age_said(case.question.text)
    if age is None or len(limits) < 2:
        return blocks, limits[0]
    cap = limits[1] if age >= _CATCH_UP_AGE else limits[0]
    return [*blocks, (f"At {age}, yours is {whole(cap)}.", [])], cap


def _income(case: Case) -> tuple[list[Block], float | None, bool]:
    """The person's income for the year: the pay they state, else their paychecks over a
    year (take-home pay), each said with where it comes from; and whether it is take-home."""
    stated = _earned(case)
    if stated is not None:
        return [(f"\nYou say you earn about {money(stated)} a year.", [])], stated, False
    pay: Flow | None = flow(case.flows, "INCOME")
    if pay is None:
        return [("\nI don't see any paychecks among your transactions.", [])], None, False
    yearly = pay.amount * pay.per_year
    said = (
        f"\nYour pay from {pay.payee} comes into {pay.account}: {money(pay.amount)} "
        f"{pay.every}, {pay.per_year} paychecks a year, which is {money(yearly)} a year."
    )
    return [(said, cites(list(pay.rows)))], yearly, True


def _earned(case: Case) -> float | None:
    """A yearly income the question states ("making about 57k", "I earn $80,000")."""
    found = _EARNS.search(case.question.text.lower())
    said = [a for a in amounts(found[2]) if a >= 10_000] if found else []
    if not said:
        said = [a for a in money_said(case.question) if a >= 10_000] if found else []
    return said[0] if said else None


@dataclass(frozen=True, slots=True)
class _Phase:
    """A phase-out as the answer speaks of it: its name, and what it does inside and past."""

    name: str
    inside: str
    past: str


_ROTH = _Phase(
    "the Roth phase-out", "your Roth limit is reduced", "you can't contribute to a Roth directly"
)
_DEDUCTION = _Phase(
    "the deduction's phase-out", "the deduction is reduced", "there is no deduction"
)


def _against(income: float, low: float, high: float, phase: _Phase, net: bool) -> str:
    """Where an income sits against a phase-out range, said plainly."""
    shown = "Your take-home pay" if net else "That"
    if income < low:
        said = f"{shown} is {money(low - income)} under the {whole(low)} where {phase.name} starts"
        if net:
            said += (
                f"; your pay before tax is higher, and would have to be about "
                f"{low / income:.1f} times what you take home to reach it"
            )
        return said + "."
    if income <= high:
        return f"{shown} is inside the {whole(low)} to {whole(high)} range, so {phase.inside}."
    return f"{shown} is above {whole(high)}, the top of the range, so {phase.past}."


def _range(sentence: str) -> tuple[float, float] | None:
    found = amounts(sentence)
    return (found[0], found[1]) if len(found) >= 2 else None


_DEDUCTING = re.compile(r"\b(deduct\w*|traditional|write (it )?off|tax break)\b")


def ira_income(case: Case) -> list[Block]:
    """The Roth phase-out and the traditional deduction, against the person's income: the
    Roth's when the question speaks of a Roth, the deduction's when it speaks of deducting,
    a traditional IRA or a plan at work."""
    blocks, cap = _limit(case)
    if cap is None:
        return blocks
    lowered = case.question.text.lower()
    joint = filing_jointly(case.question.text, [1.0, 2.0])
    said, income, net = _income(case)
    blocks += said
    rows = source(case.question, case.accounts) if "source" in case.bearing else []
    if rows:  # "... and would my checking cover it?": what putting the limit in would leave
        blocks += funded(rows, cap, case.topic.noun_for(case.question))
    plan = _plan_at_work(lowered)
    deducting = plan is not None or bool(_DEDUCTING.search(lowered))
    if "roth" in lowered or not deducting:
        blocks += _roth(case, income, net, joint)
    if deducting:
        blocks += _deduction(case, income, net, joint, plan)
    if net:
        blocks.append(
            (
                "\nModified AGI starts from your pay before tax (less pre-tax contributions to a "
                "plan at work), which the deposits don't show, so check it against your pay stub "
                "or last year's return.",
                [],
            )
        )
    if _COMPARED.search(lowered):
        blocks.append(
            (
                "\nThe choice between the two turns on your tax rate: a deduction saves tax at "
                "today's rate, while a Roth's qualified withdrawals come out tax-free later.",
                [],
            )
        )
    return blocks


def _roth(case: Case, income: float | None, net: bool, joint: bool) -> list[Block]:
    """The Roth's phase-out range for the filing status, and where the income sits in it."""
    row = "married filing jointly or" if joint else "single, head of household"
    roth = case.quote("Roth contribution limit is reduced", row)
    blocks: list[Block] = [("\n", []), *roth]
    limits = _range(roth[-1][0]) if len(roth) > 1 else None
    if income and limits:
        blocks.append((_against(income, *limits, _ROTH, net) + " ", []))
    return blocks


def _deduction(
    case: Case, income: float | None, net: bool, joint: bool, plan: bool | None
) -> list[Block]:
    """The traditional IRA's deduction: whole without a plan at work, else phased out."""
    blocks: list[Block] = [("\n", [])]
    if plan is False:
        blocks += case.quote("fully deductible")
        spouse = ", unless your spouse is covered by one at their work" if joint else ""
        blocks.append((f"You say your job has no retirement plan, so yours would be{spouse}.", []))
        return blocks
    if plan is None:
        blocks += case.quote("fully deductible")
    phased = case.quote("If you are covered")
    blocks += phased
    found = amounts(phased[0][0]) if phased else []
    limits = (
        (found[2], found[3])
        if joint and len(found) >= 4
        else _range(phased[0][0])
        if phased
        else None
    )
    if plan and income and limits:
        blocks.append((_against(income, *limits, _DEDUCTION, net), []))
    return blocks


def ira_excess(case: Case) -> list[Block]:
    """A contribution over the limit: the excess, and the 6% a year it costs if left in."""
    blocks, cap = _limit(case)
    if cap is None:
        return blocks
    said = [a for a in money_said(case.question) if a >= 100]
    if not said:
        return [*blocks, ("\n", []), *case.quote("excess contribution", "taxed at")]
    put = said[0]
    if put <= cap:
        blocks.append(
            (
                f"\n{money(put)} is within that {whole(cap)} limit, so none of it is an excess "
                "contribution, as long as you earned at least that much this year.",
                [],
            )
        )
        return blocks
    excess = put - cap
    blocks.append((f"\n{money(put)} is {money(excess)} over the {whole(cap)} limit.", []))
    blocks.append(("\n", []))
    taxed = case.quote("excess contribution", "taxed at")
    blocks += taxed
    rate = re.search(r"(\d+(?:\.\d+)?)\s*%", taxed[-1][0]) if taxed else None
    if rate:
        yearly = excess * float(rate[1]) / 100
        blocks.append(
            (
                f"Left in, the {money(excess)} would cost {money(yearly)} in tax for each year "
                "it stays.",
                [],
            )
        )
    blocks += case.quote("Withdrawing the excess")
    return blocks
