"""A guided answer's rules about the home: refinancing (what the data shows of the mortgage,
then what decides it), PMI's 80 percent of the original value, and the exclusion of a home
sale's gain, each set against the home's value and the mortgage payments the data holds."""

from __future__ import annotations

import re
from datetime import date

from .cite import Block
from .figures import Row
from .guidance import Case
from .guidance_figure import FIGURES, money_said
from .guidance_figures import as_of, cites, flow, listed, of_kind, source, total, whole
from .scope import padded
from .words import amounts, count_of, money, percent, sentence

_HOME_WORDS = frozenset({"home", "house", "my home", "my house", "residence", "property"})


def home_name(row: Row) -> str:
    """Name a home as a sentence opens: "Your home" for one the data calls "Home"."""
    return "Your home" if row.title.lower() in _HOME_WORDS else sentence(row.label)


_JOINT = frozenset({"married", "jointly", "joint", "spouse", "wife", "husband", "we", "our", "us"})
_SINGLE = re.compile(r"\b(single|unmarried|not married|separately|head of household|by myself)\b")
# What the person says they paid, and what they say it is worth or would sell for, each the
# first amount after its words: "bought it in 2019 for $390k", "it's worth $485k now".
_PAID = re.compile(r"\b(bought|paid|purchased|purchase price|cost me)\b(.*)")
_PRICE = re.compile(
    r"\b(worth|valued at|value of|(?:sell|selling|sold|list|listing)(?: \S+){0,2} (?:for|at)"
    r"|sale price|offer of|asking price of|get)\b(.*)"
)


def said_after(pattern: re.Pattern[str], text: str) -> float | None:
    """The first money amount after the words a pattern finds, if the text says one."""
    found = pattern.search(text.lower())
    named = amounts(found[2]) if found else []
    return named[0] if named else None


def filing_jointly(text: str, limits: list[float]) -> bool:
    """Tell whether the question speaks of a joint return ("we", "married"), unless it says
    the person files single."""
    lowered = text.lower()
    said = set(re.findall(r"[a-z]+", lowered))
    return bool(_JOINT & said) and not _SINGLE.search(lowered) and len(limits) > 1


def _home_lines(case: Case) -> tuple[list[Block], float | None]:
    """What the user's data says of their home and mortgage, each cited."""
    blocks: list[Block] = []
    homes = of_kind(case.accounts, "property")
    loans = of_kind(case.accounts, "mortgage")
    value = total(homes) if homes else None
    for home in homes:
        blocks.append(
            (
                f"{home_name(home)} is valued at {home.amount()} in your linked accounts. ",
                [home.cite],
            )
        )
    if loans:
        blocks.append(
            (f"Your mortgage balance is {money(total(loans))} ({listed(loans)}). ", cites(loans))
        )
    else:
        blocks.append(
            ("You have no mortgage account linked, so I can't see its balance, rate or term. ", [])
        )
    payment = flow(case.flows, "LOAN_PAYMENTS_MORTGAGE_PAYMENT")
    if payment:
        blocks.append(
            (
                f"{sentence(payment.account)} pays {payment.payee} {money(payment.amount)} "
                f"{payment.every} (the last {count_of(len(payment.rows), 'payment')}, the "
                f"latest on {payment.latest}).",
                cites(list(payment.rows)),
            )
        )
    elif "mortgage" in case.bearing:
        blocks.append(("I see no mortgage payments among your transactions either. ", []))
    return blocks, value


def mortgage(case: Case) -> list[Block]:
    """Refinancing: what the data shows of the mortgage, then what decides it."""
    blocks, _ = _home_lines(case)
    blocks.append(("\n\n", []))
    blocks += case.quote(*case.topic.quotes)
    blocks.append(
        (
            "\nWhether refinancing pays turns on the rate you'd get against the one you have, "
            "and on the up-front fees, and I don't have your mortgage's rate or balance.",
            [],
        )
    )
    return blocks


_BUYING = re.compile(r"\b(buy|buying|purchase|purchasing|put down|putting down|down payment)\b")
_PLACES = ("condo", "house", "home", "place", "apartment", "townhouse", "flat", "property")


def _down_payment(case: Case, price: float) -> list[Block]:
    """PMI on a home still to buy: the down payment that avoids it, against the bank
    accounts the question names (or all of them)."""
    said = case.quote("less than 20 percent")
    share = re.search(r"(\d+) percent", said[0][0]) if said else None
    if not share:
        return case.unread()
    need = price * int(share[1]) / 100
    place = next((p for p in _PLACES if p in case.question.text.lower().split()), "home")
    blocks = [
        *said,
        (
            f"\nOn a {money(price)} {place}, {share[1]} percent is {money(need)}: put down at "
            "least that much on a conventional loan and there is no PMI to pay.",
            [],
        ),
    ]
    banks = source(case.question, case.accounts)
    if banks:
        have = total(banks)
        where = sentence(banks[0].label) if len(banks) == 1 else "Your bank accounts"
        holds = "holds" if len(banks) == 1 else f"hold between them ({listed(banks)})"
        if have >= need:
            gap = f"enough for it, with {money(have - need)} to spare"
        else:
            gap = f"{money(need - have)} short of it, {percent(have, need)} of the way there"
        blocks.append((f" {where} {holds} {money(have)}: {gap}.", cites(banks)))
    blocks.append(
        (
            " Closing costs come on top of the down payment, and I've left them out.\n\n"
            "If you put down less, the PMI doesn't last for good. ",
            [],
        )
    )
    return blocks + case.quote(case.topic.limit)


_SHARE_DOWN = FIGURES["down_share"].told  # "only put 10% down": the share said


def _share_down(case: Case, said: float, below: bool) -> list[Block]:
    """PMI on a home still to buy at a share down the question names ("only 10% down", "less
    than 20%": `below` it): that share set against the page's, and when PMI ends if it is
    paid."""
    rule = case.quote("less than 20 percent")
    share = re.search(r"(\d+) percent", rule[0][0]) if rule else None
    if not share:
        return case.unread()
    line, named = int(share[1]), f"{'less than ' if below else ''}{said:g} percent"
    under = said < line or (below and said <= line)
    if under:
        told = (
            f"\nAt {named} down you would be under the {line} percent, so on a conventional "
            "loan expect to pay PMI, though not for good. "
        )
    else:
        told = f"\nAt {named} down you would be at or past the {line} percent: no PMI to pay. "
    return [*rule, (told, []), *(case.quote(case.topic.limit) if under else [])]


def pmi(case: Case) -> list[Block]:
    """PMI: the home's value set against the 80 percent rule, and why that isn't enough; or,
    for a home still to buy at a price the question names, the down payment that avoids it,
    and at a share down it names, whether that share avoids it."""
    price = money_said(case.question)
    if price and _BUYING.search(case.question.text.lower()):
        return _down_payment(case, price[0])
    share = _SHARE_DOWN.search(padded(case.question.text)) if _SHARE_DOWN else None
    if share and "down_share" in case.bearing:
        said = float(share["share"] or share["put"])
        return _share_down(case, said, bool(share["below"] or share["under"]))
    blocks, value = _home_lines(case)
    blocks.append(("\n\n", []))
    blocks += case.quote(case.topic.limit)
    if value:
        blocks.append(
            (
                f"\nThe rule counts from the home's original value (when the loan was made), "
                f"not today's {money(value)}: if that were its original value, 80 percent would "
                f"be {money(0.8 * value)} and 78 percent {money(0.78 * value)}.",
                cites(of_kind(case.accounts, "property")),
            )
        )
    blocks.append(
        (
            " I don't have your mortgage balance or the home's original value, so I can't say "
            "whether you're past that point; your lender can tell you when your balance is "
            "scheduled to reach it.",
            [],
        )
    )
    return blocks


def _gain(case: Case, paid: float, cap: float, whose: str) -> list[Block]:
    """The gain from the price the person paid and the price they give (else the home's value
    in their accounts), set against the exclusion."""
    homes = of_kind(case.accounts, "property")
    price = said_after(_PRICE, case.question.text)
    if price is not None and not (homes and abs(total(homes) - price) < 1):
        worth: Block = (f"\nAt {money(price)}, against the {money(paid)} you paid", [])
    elif homes:  # the value in their accounts (which the question may have said too)
        price = total(homes)
        worth = (
            f"\n{home_name(homes[0])} is valued at {money(price)} in your linked accounts, and "
            f"you paid {money(paid)}",
            cites(homes),
        )
    else:
        return [
            (f"\nYou paid {money(paid)}; tell me what it would sell for to work out the gain.", [])
        ]
    gain = price - paid
    if gain <= 0:
        said = ", so selling at that price would bring no gain to tax."
    elif gain <= cap:
        said = (
            f": a gain of about {money(gain)}, within the {whole(cap)} you may exclude{whose}, "
            "so if you qualify none of it would be taxed."
        )
    else:
        said = (
            f": a gain of about {money(gain)}, so the {money(gain - cap)} above the "
            f"{whole(cap)} you may exclude{whose} would be taxed."
        )
    note = (
        " Improvements you made and the costs of selling lower the gain; I've left them out, "
        "as I don't have them."
    )
    return [(worth[0] + said + (note if gain > 0 else ""), worth[1])]


def home_sale(case: Case) -> list[Block]:
    """Selling a home: its value against the exclusion, and the tests to qualify."""
    limits = case.page.amounts(case.topic.limit)
    if not limits:
        return case.unread()
    joint = filing_jointly(case.question.text, limits)
    cap = limits[1] if joint else limits[0]
    blocks = case.quote(case.topic.limit)
    homes = of_kind(case.accounts, "property")
    if not homes and said_after(_PAID, case.question.text) is None:
        blocks.append(
            (
                "\nYou have no home among your linked accounts, so I can't set its "
                "value against that.",
                [],
            )
        )
    whose = " on a joint return" if joint else ""
    paid = said_after(_PAID, case.question.text)
    if paid is not None:
        blocks += _gain(case, paid, cap, whose)
    elif homes:
        value = total(homes)
        blocks.append(
            (
                f"\n{home_name(homes[0])} is valued at {money(value)} in your linked accounts.",
                cites(homes),
            )
        )
        blocks.append(
            (
                " Your gain is what you sell for minus what you paid for the home (and its "
                "improvements), which I don't have. "
                + (
                    f"But even if the whole {money(value)} were gain, it would be within the "
                    f"{whole(cap)} you may exclude{whose}, so if you qualify none of it would "
                    "be taxed."
                    if value <= cap
                    else f"Only the gain above the {whole(cap)} you may exclude{whose} would "
                    "be taxed."
                ),
                [],
            )
        )
    blocks.append(("\n", []))
    blocks += case.quote(case.topic.quotes[0])
    now = as_of(case.accounts + case.flows) or date.today().year  # a manual home never syncs
    since = [y for y in case.question.years if y < 2100]
    if now and since and now - since[0] >= 2:
        blocks.append(
            (
                f"Living there since {since[0]} is more than two years, so you'd meet that test "
                "if it has been your main home and you haven't excluded a gain on another home "
                "within two years.",
                [],
            )
        )
    blocks += case.quote(*case.topic.quotes[1:])
    return blocks
