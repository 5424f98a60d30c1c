"""Advice questions read by meaning rather than phrasing: a word that asks for a judgement
("should", "which ... first", "good idea", "enough", "can I swing") with the words of what it
is about (debts, an amount to spend, a holding, cash set aside, investing), matched by stems
so "prioritise", "prioritising" and "priority" are one word. Which open answer that is
(`overview.py`) is for `lexicon.toml`'s `[[advice.rule]]` entries to say, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from . import lexicon
from .ask import Question
from .cite import Block, number
from .figures import Row
from .words import bare_amounts, join_words, money, percent, stem

_ADVICE = lexicon.table("advice")


def stem_phrase(text: str) -> str:
    """A padded phrase with each word stemmed: " prioritis my card "."""
    return " " + " ".join(stem(w) for w in text.split()) + " "


_stemmed = stem_phrase
_MARKERS = tuple(_stemmed(m).strip() for m in _ADVICE["markers"])
# "pay my card off", "pay the amex off": the words between are what is paid.
_PAY_OFF = re.compile(r" (pay|paying|paid) ((?:\S+ ){1,3})off ")


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    groups: tuple[tuple[str, ...], ...]
    needs: str = ""  # "ticker", "amount", "debt", "own": what the question must also name
    markers: tuple[str, ...] = ()  # the rule's own words of judgement, if not the common ones


_RULES = tuple(
    _Rule(
        str(rule["kind"]),
        tuple(tuple(_stemmed(c).strip() for c in group) for group in rule.get("groups", ())),
        str(rule.get("needs", "")),
        tuple(_stemmed(m).strip() for m in rule.get("markers", ())),
    )
    for rule in _ADVICE["rule"]
)


_DEBT_WORDS = tuple(_stemmed(w).strip() for w in _ADVICE["debt_words"])
_OWN_WORDS = tuple(_stemmed(w).strip() for w in _ADVICE["own_words"])


def _needs(need: str, said: str, question: Question) -> bool:
    if need == "ticker":
        return bool(question.tickers)
    if need == "amount":
        return bool(question.amounts or bare_amounts(question.text))
    if need == "debt":
        return bool({"credit", "loan", "mortgage"} & set(question.kinds)) or (
            "debts" in question.intents or lexicon.has_phrase(said, _DEBT_WORDS)
        )
    if need == "own":  # the user's own cash: an account kind, or "what I have"
        return bool(question.kinds) or lexicon.has_phrase(said, _OWN_WORDS)
    return True


# "worth putting $2k into", "worth refinancing": worth as a judgement of doing something.
_WORTH_DOING = re.compile(r" worth \w+ing ")


def asks_judgement(phrase: str) -> bool:
    """Tell whether a padded phrase asks for a judgement ("should I", "can I rely on")."""
    said = _stemmed(phrase.strip())
    return lexicon.has_phrase(said, _MARKERS) or _WORTH_DOING.search(phrase) is not None


def advice_kind(phrase: str, question: Question) -> str | None:
    """Return which advice a padded phrase asks for ("payoff", "afford", "sell", "plan",
    "cushion", "allocate"), or None when it asks for no judgement."""
    said = _stemmed(_PAY_OFF.sub(r" \1 off \2", phrase).strip())
    if not asks_judgement(phrase):
        return None
    worth = _WORTH_DOING.search(phrase) is not None
    for rule in _RULES:
        groups = all(lexicon.has_phrase(said, group) for group in rule.groups)
        judged = not rule.markers or lexicon.has_phrase(said, rule.markers) or worth
        if groups and judged and _needs(rule.needs, said, question):
            return rule.kind
    return None


def advice_after(phrase: str, question: Question, earlier: Question) -> str | None:
    """The advice a follow-up asks of what the earlier question was about ("which one makes
    the most sense?" after "how much do I owe on my cards?"): its debts, holding or amount."""
    kept = replace(
        question,
        intents=question.intents + earlier.intents,
        kinds=question.kinds + earlier.kinds,
        tickers=question.tickers or earlier.tickers,
        amounts=question.amounts or earlier.amounts,
    )
    return advice_kind(phrase, kept)


def allocate(rows: list[Row], guidance: list[Block]) -> list[Block]:
    """How to invest: not personal advice, the mix the user holds, and the guide's rule."""
    held = [r for r in rows if r.get("ticker")]
    cash = [r for r in rows if r.kind == "depository" and r.balance is not None]
    if not held:
        start: list[Block] = [
            ("You have no investment holdings linked, so there is no mix to look at yet.", [])
        ]
        if cash:
            start.append(
                (
                    "The cash you could start from is "
                    + join_words([f"the {r.amount()} in {r.label}" for r in cash])
                    + ". An emergency fund usually comes before investing any of it.",
                    [r.cite for r in cash],
                )
            )
        return start + guidance
    total = sum(number(r.get("market_value")) or 0.0 for r in held)
    ranked = sorted(held, key=lambda r: -(number(r.get("market_value")) or 0.0))
    blocks: list[Block] = [
        (
            "I can't give personal investment advice: the right mix depends on your goals, "
            "your timeline and how much risk you can stomach. Here is the mix you hold, "
            f"{money(total)} in all:\n",
            [],
        )
    ]
    for r in ranked:
        value = number(r.get("market_value")) or 0.0
        blocks.append((f"- {r.get('ticker')}: {money(value)}, {percent(value, total)}\n", [r.cite]))
    return blocks + guidance
