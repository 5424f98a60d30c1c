"""Requests the engine declines: help to break the law or to harm another person (hiding
income from the IRS, structuring deposits, a fake pay stub, a phishing text, a keylogger,
another person's accounts, a false dispute, debt run up before a bankruptcy), and demands it
can't honestly meet (a pick "guaranteed" to rise, a bare yes or no on a trade). Each kind is
read by meaning, by the words of what is done and to what or whom (`refusal.toml`), never by
whole phrasings; a question about the harm itself ("what happens if I don't report ...", "how
do I spot a phishing text") is not a request and is answered as any other question."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .lexicon import has_phrase

_DATA: dict[str, Any] = tomllib.loads(
    Path(__file__).with_name("refusal.toml").read_text(encoding="utf-8")
)
_DEFENSIVE = tuple(str(p) for p in _DATA["defensive"])
_CONTRACTION = re.compile(r" (\w+n) t ")  # "don t" (from "don't") -> "dont"


@dataclass(frozen=True, slots=True)
class Refusal:
    """One kind of harmful request: every group must be said, and the pattern if any, and
    none of `unless`."""

    kind: str
    groups: tuple[tuple[str, ...], ...]
    reply: str
    pattern: re.Pattern[str] | None = None
    unless: tuple[str, ...] = ()

    def asked(self, phrase: str) -> bool:
        if self.pattern and not self.pattern.search(phrase):
            return False
        if has_phrase(phrase, self.unless):
            return False
        return all(has_phrase(phrase, group) for group in self.groups)


RULES = tuple(
    Refusal(
        str(rule["kind"]),
        tuple(tuple(str(p) for p in group) for group in rule["groups"]),
        str(rule["reply"]),
        re.compile(str(rule["pattern"])) if "pattern" in rule else None,
        tuple(str(p) for p in rule.get("unless", ())),
    )
    for rule in _DATA["rule"]
)


# Every word the rules use, so that the typo reader never "corrects" one ("crash").
VOCABULARY = frozenset(
    w
    for rule in RULES
    for text in (*(p for g in rule.groups for p in g), rule.pattern.pattern if rule.pattern else "")
    for w in re.findall(r"[a-z]{3,}", text)
)


def joined(phrase: str) -> str:
    """Return a padded phrase with its contractions joined: " i don t " -> " i dont "."""
    while _CONTRACTION.search(phrase):
        phrase = _CONTRACTION.sub(r" \1t ", phrase)
    return phrase


_OTHERS = next(rule for rule in RULES if rule.kind == "someone else")
# "alex's accounts": a possessive name before what only a person has (accounts, a login).
# (A lookahead, so that "what's alex's checking" tries "alex" after "what".)
_POSSESSIVE = re.compile(
    r"\b([a-z]+)['’]s\s+(?=(?:\S+\s+){0,2}?(?:" + "|".join(_DATA["personal"]) + r")\b)"
)
_NOT_PEOPLE = frozenset(str(w) for w in _DATA["not_people"])
_THIRD_PERSON = frozenset({"she", "he", "her", "him", "his", "hers", "they", "them", "their"})


def another_persons(text: str, names: frozenset[str] = frozenset()) -> str | None:
    """Decline a request for a named person's accounts ("show me alex's accounts"): a
    possessive that is no institution, company or account (`names`: words the question
    model knows as such) before what only a person has."""
    for found in _POSSESSIVE.finditer(text.lower()):
        owner = found[1]
        if owner not in _NOT_PEOPLE and owner not in names and len(owner) > 1:
            return None if has_phrase(joined(f" {text.lower()} "), _DEFENSIVE) else _OTHERS.reply
    return None


def continues(reply: str, phrase: str) -> bool:
    """Tell whether a part after a decline of another person's accounts goes on about that
    person ("... pull up her balance and what she spent last month?")."""
    return reply == _OTHERS.reply and bool(_THIRD_PERSON & set(phrase.split()))


def refusal(phrase: str) -> str | None:
    """Return the plain decline of a request to break the law or harm someone, or None.

    `phrase` is the question's words, padded (`scope.padded`)."""
    phrase = joined(phrase)
    if has_phrase(phrase, _DEFENSIVE):
        return None
    return next((rule.reply for rule in RULES if rule.asked(phrase)), None)
