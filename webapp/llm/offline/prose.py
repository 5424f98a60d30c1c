"""Answers from documents: lead with the sentence that answers, then one or two that support
it, each citing the passage it comes from.

The documents come ranked by the library; within them, each sentence, list item or table
row is scored by the question's words it contains (rare words count more; its section's
heading and the document's title count a little), with a bonus for figures when the
question asks how much, how long or when, for a definition when it asks what something is,
for a step when it asks how to, and for the passages and documents the library ranked best.
A "how do I" question whose best sentence sits in a list of steps gets every step, in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import lexicon
from .cite import Block, cite
from .quotable import STEPS, Source, Unit, runs_on, units_of
from .words import STOPWORDS, as_documents_say, stem, stems, synonyms_of, word_set, words

MAX_SUPPORT = 2
MAX_CHARS = 900
_AMOUNT = re.compile(r"\$\s?\d|\d\s?%|\b\d[\d,.]*\s*(?:percent|miles)\b", re.IGNORECASE)
_NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixty|ninety)"
_TIME = re.compile(
    rf"\b{_NUMBER}\b[\s-]+(?:[\w-]+\s+){{0,3}}(?:days?|years?|months?|hours?|"
    r"billing cycles?)\b|\bage\s+\d+",
    re.IGNORECASE,
)
# Question words that ask for an amount of money, a time, or a size in either.
_AMOUNT_WORDS = frozenset(
    {
        "limit",
        "limits",
        "maximum",
        "max",
        "cap",
        "capped",
        "percent",
        "percentage",
        "rate",
        "minimum",
        "taxed",
        "cost",
        "costs",
        "fee",
        "fees",
    }
)
_SIZE_WORDS = frozenset({"much", "many", "big", "large", "size"})
_TIME_WORDS = frozenset(
    {"long", "when", "deadline", "soon", "often", "age", "old", "days", "years", "months"}
)
# Words that name a document, not what it is about (the word after one is its number).
_NAMING = word_set(
    "section sections subsection title usc cfr code publication pub chapter paragraph"
)
# "summarize", "pull up", "compare": asking for a document, not its subject, when they lead
# the question's words ("compare what pub 590-A says"); later ones ask of the subject
# ("which numbers should I compare").
_REQUESTS = lexicon.words_of("request_words")
_PRONOUN = re.compile(r"^(?:It|Its|This|These|They|Their|That|Those|Both|Such)\b")


def _groups(question: str, rarity: Callable[[str], float]) -> list[tuple[frozenset[str], float]]:
    """Return the question's topic words as stem groups (a word and its synonyms count once),
    each weighing as much as its rarest stem. Words that name the document ("section 121",
    "pub 590-a") chose it; within it they tell no sentence from another."""
    groups: list[set[str]] = []
    said = words(as_documents_say(question))
    naming = _NAMING | _REQUESTS
    for at, word in enumerate(said):
        numbered = at and said[at - 1] in naming and any(c.isdigit() for c in word)
        if word in STOPWORDS or word in _NAMING or numbered:
            continue
        if word in _REQUESTS and not groups:
            continue
        found = {stem(form) for form in (word, *synonyms_of(word))}
        for group in [g for g in groups if g & found]:
            groups.remove(group)
            found |= group
        groups.append(found)
    return [(frozenset(g), _weight(g, rarity)) for g in groups]


def _weight(group: set[str], rarity: Callable[[str], float]) -> float:
    """A group weighs as its rarest stem; a number in digits ("3 pages") that no document
    holds as such weighs as the word they spell it with ("three"): no sentence meets it else."""
    unheld = rarity("\0")
    spelled = [rarity(s) for s in group if not s.isdigit() or rarity(s) < unheld]
    return max(spelled or [rarity(s) for s in group])


class _Scorer:
    """Score a unit by the question's words in it, and (less) in its title and heading."""

    def __init__(self, question: str, rarity: Callable[[str], float]) -> None:
        self.groups = _groups(question, rarity)
        asked = set(words(question))
        # "the most I'd have to pay": a ceiling, asked as an amount
        ceiling = re.search(r"\b(the|at) most\b", question.lower()) is not None
        self.amounts = bool(asked & (_AMOUNT_WORDS | _SIZE_WORDS)) or ceiling
        self.times = bool(asked & (_TIME_WORDS | _SIZE_WORDS))
        self.timed = bool(asked & _TIME_WORDS)  # when, how long: not "how much"
        self.definition = bool(
            re.match(r"\s*(what's|whats|what\s+(is|are|goes|go))\b", question.lower())
        ) and not (self.amounts or self.times)
        self.steps = bool(
            re.match(
                r"\s*how\s+(do|can|should|would)\s+(i|we|you)\b|"
                r"\s*how\s+to\b|\s*what\s+steps\b",
                question.lower(),
            )
            or asked & {"steps", "step", "process", "procedure"}
            or re.search(r"\bgo about\b|\bwhat do (i|we) do\b", question.lower())
        )
        # "What does section 121 say about ...": the document's main points on it
        self.summary = re.search(
            r"\b(say|says|said|state|states|summari[sz]e|summary)\b", question.lower()
        )
        self.total = sum(w for _, w in self.groups)
        self._cache: dict[tuple[int, int, int], float] = {}

    def weight(self, found: set[str]) -> float:
        """Return the weight of the question's groups that `found` stems meet."""
        return sum(w for group, w in self.groups if group & found)

    def __call__(self, unit: Unit) -> float:
        key = (id(unit.source), unit.block, unit.order)
        if key not in self._cache:
            self._cache[key] = self._score(unit)
        return self._cache[key]

    def _score(self, unit: Unit) -> float:
        own = stems(unit.text)
        heading = heading_of(unit)
        section = stems(f"{heading} {unit.context}") | own
        titled = stems(unit.result.title) | section
        mine = self.weight(own)
        # A heading tells sections apart; the title only tells documents apart.
        around = 0.8 * (self.weight(section) - mine) + 0.3 * (
            self.weight(titled) - self.weight(section)
        )
        money = bool(self.amounts and _AMOUNT.search(unit.text))
        when = bool(self.times and _TIME.search(unit.text))
        asked = money or when
        if not mine and not (around and asked):
            return 0.0
        # "how much" asks an amount first: a figure in dollars or percent answers it a little
        # better than a time ("five years"), unless the question asks when or how long
        found = 4.0 + (1.0 if money and not self.timed else 0.0) if asked else 0.0
        score = mine + around + found
        total = sum(w for _, w in self.groups)
        if (
            heading
            and not unit.order
            and self.weight(stems(heading)) >= 0.5 * total
            and unit.result.texts[unit.block - 1].lstrip().startswith("#")
        ):
            score += 2.0  # the opening of the section the question names
        if self.definition and re.match(r"^(?:\S+\s+){0,5}(is|are|means)\b", unit.text):
            score += 1.5
        if self.steps and (words(unit.step or unit.text)[:1] or [""])[0] in STEPS:
            score += 2.0
        block = unit.result.texts[unit.block].strip()
        if any(block == p.strip() for p in unit.source.passages[:2]):
            score += 0.5
        # Earlier passages, sentences and table rows tend to say the general case.
        place = 0.1 * unit.block + (0.8 if block.startswith("|") else 0.01) * unit.order
        return score + 1.5 / (1 + unit.source.rank) - place - len(unit.text) / 2000


def heading_of(unit: Unit) -> str:
    """Return the heading the unit's passage sits under, if any."""
    for text in reversed(unit.result.texts[: unit.block]):
        if text.lstrip().startswith("#"):
            return text.lstrip("# ").strip()
    return ""


def _similar(a: Unit, b: Unit) -> bool:
    sa, sb = stems(a.text), stems(b.text)
    return bool(sa and sb) and len(sa & sb) / len(sa | sb) > 0.6


def _with_antecedent(unit: Unit, units: list[Unit]) -> list[Unit]:
    """A unit opening with "It" or "They" reads only after the one before it."""
    if unit.order and _PRONOUN.match(unit.text):
        before = [
            u
            for u in units
            if u.source is unit.source and u.block == unit.block and u.order == unit.order - 1
        ]
        return before + [unit]
    return [unit]


def _on_topic(unit: Unit, lead: Source, score: _Scorer) -> bool:
    """A sentence of the lead document, or of one whose title or section names the topic."""
    if unit.source is lead:
        return True
    return score.weight(stems(f"{unit.result.title} {heading_of(unit)}")) > 0


def document_answer(
    question: str, sources: list[Source], rarity: Callable[[str], float]
) -> list[Block]:
    """Write the answer from ranked documents: the best unit, then what supports it."""
    units = [unit for source in sources for unit in units_of(source)]
    score = _Scorer(question, rarity)
    ranked = sorted(units, key=lambda u: (-score(u), u.source.rank, u.block, u.order))
    if units and score.summary and not score.groups:  # "summarize section 121"
        return _blocks(_openings(units[0].source, units))
    if not ranked or score(ranked[0]) <= 0:
        return []
    chosen = _with_antecedent(ranked[0], units)
    best = score(ranked[0])
    lead = ranked[0].source

    def support(unit: Unit) -> float:
        return score(unit) + (1.0 if unit.source is lead else 0.0)

    supports = 0
    for unit in sorted(ranked[1:], key=lambda u: -support(u)):
        if supports == MAX_SUPPORT or support(unit) < 0.5 * best:
            break
        if unit in chosen or any(_similar(unit, c) for c in chosen):
            continue
        if not _on_topic(unit, lead, score) and support(unit) < 0.8 * best:
            continue  # another document that shares words, not the subject
        extra = [u for u in _with_antecedent(unit, units) if u not in chosen]
        if sum(len(u.text) for u in chosen + extra) > MAX_CHARS:
            break
        chosen += extra
        supports += 1
    # Read as the documents are written: each document's sentences in its own order, the
    # documents in the order the answer reaches them.
    first = {id(u.source): -i for i, u in reversed(list(enumerate(chosen)))}
    if score.steps and ranked[0].item >= 0:
        return _steps(ranked[0], units, chosen)
    if score.summary and score.weight(stems(lead.result.title)) >= 0.75 * score.total:
        chosen = _openings(lead, units) or chosen
    return _blocks(sorted(chosen, key=lambda u: (-first[id(u.source)], u.block, u.order)))


def _openings(lead: Source, units: list[Unit]) -> list[Unit]:
    """What a document says about its own subject, the one its title names ("what does
    section 121 say about excluding gain on a home sale?"): the opening sentence of each of
    its sections, in its order, while the answer stays short."""
    found: list[Unit] = []
    for unit in units:
        if unit.source is not lead or unit.order:
            continue
        if not unit.result.texts[unit.block - 1].lstrip().startswith("#"):
            continue  # not a section's opening
        if len(found) > MAX_SUPPORT or sum(len(u.text) for u in [*found, unit]) > MAX_CHARS:
            break
        found.append(unit)
    return found


def _steps(lead: Unit, units: list[Unit], chosen: list[Unit]) -> list[Block]:
    """The steps a "how do I" question asks for, when its best sentence sits in a list of
    them: every step of that list in order, each by its title, then the sentences chosen for
    the question (or its first sentence, while the answer stays short)."""
    listed = [u for u in units if u.source is lead.source and u.block == lead.block]
    steps = [
        [u for u in listed if u.item == item] for item in dict.fromkeys(u.item for u in listed)
    ]
    said = [[u for u in step if u in chosen] or step[:1] for step in steps]
    if sum(len(u.text) for step in said for u in step) > MAX_CHARS:  # titles say the rest
        said = [[u for u in s if u in chosen] or s[: 0 if s[0].step else 1] for s in steps]
    lines = [
        "- " + " ".join([step[0].step] * bool(step[0].step) + [u.text for u in mine])
        for step, mine in zip(steps, said, strict=True)
    ]
    return [("\n".join(lines), [cite(lead.result, lead.block, lead.block + 1)])]


def _blocks(chosen: list[Unit]) -> list[Block]:
    """One text block per passage, in the order chosen, each citing its passage."""
    blocks: list[Block] = []
    keys: list[tuple[int, int]] = []
    for unit in chosen:
        said = unit.text
        key = (id(unit.source), unit.block)
        if keys and keys[-1] == key:
            text, cites = blocks[-1]
            blocks[-1] = (f"{text} {said}", cites)
            continue
        keys.append(key)
        if blocks and blocks[-1][0].endswith(":") and runs_on(unit):
            said = said[:1].lower() + said[1:]  # "... it is made: on or after ..."
        blocks.append((said, [cite(unit.result, unit.block, unit.block + 1)]))
    return blocks
