"""Answers from documents: lead with the sentence that answers, then one or two that support
it, each citing the passage it comes from.

The documents come ranked by the library; within them, each sentence, list item or table
row is scored by the question's words it contains (rare words count more; its section's
heading and the document's title count a little), with a bonus for figures when the
question asks how much, how long or when, for a definition when it asks what something is,
for a step when it asks how to, and for the passages and documents the library ranked best.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .cite import Block, Result, cite
from .words import STOPWORDS, SYNONYMS, stem, stems, word_set, words

MAX_SUPPORT = 2
MAX_CHARS = 900
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'$])")
# Abbreviations whose period does not end a sentence ("U.S. Treasury", "Apple Inc. shares").
_ABBREVIATION = re.compile(r"(?:\b[A-Z]\.[A-Z]\.|\b(?:e\.g|i\.e|etc|Inc|No|vs|Mr|Ms|Dr|St|Co))\.?$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
_AMOUNT = re.compile(r"\$\s?\d|\d\s?%|\b\d[\d,.]*\s*(?:percent|miles)\b", re.IGNORECASE)
_NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve|sixty|ninety)"
_TIME = re.compile(
    rf"\b{_NUMBER}\b[\s-]+(?:[\w-]+\s+){{0,3}}(?:days?|years?|months?|hours?|"
    r"billing cycles?)\b|\bage\s+\d+",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(r"^\*\*([^*]+?)(?:([.:?])\*\*|\*\*([.:]))\s+")
# Verbs that open an instruction: the steps a "how do I" question asks for.
_STEPS = word_set("""
ask avoid call check choose close collect compare consider contact decline dispute file
follow gather give keep look make note open pay put read report request review save send
set sign start submit tell track use write
""")
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
_PRONOUN = re.compile(r"^(?:It|Its|This|These|They|Their|That|Those|Both|Such)\b")


@dataclass(frozen=True, slots=True)
class Source:
    """A document to answer from: its tool result and its place in the library's ranking."""

    result: Result
    rank: int
    passages: tuple[str, ...] = ()  # the passages the library ranked best, best first


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence, list item or table row of a document's block."""

    source: Source
    block: int
    order: int  # position within the block
    text: str
    context: str = ""  # the lead-in or table header it sits under

    @property
    def result(self) -> Result:
        return self.source.result


def _clean(text: str) -> str:
    text = re.sub(r"\*\*|__|`", "", text)
    text = re.sub(r"(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)", "", text)
    text = " ".join(text.split()).rstrip(";,")
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?:" else text + "."


def _is_note(paragraph: str) -> bool:
    """A heading, or an italic note about the document itself."""
    stripped = paragraph.strip()
    return stripped.startswith("#") or (
        stripped.startswith("*") and stripped.endswith("*") and not stripped.startswith("**")
    )


def _table_rows(lines: list[str]) -> Iterator[tuple[str, str]]:
    """Yield each row as "first cell: header of the rest + the rest", and the header."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    header = rows[0]
    for cells in rows[1:]:
        if all(set(cell) <= set("-: ") for cell in cells) or len(cells) < 2:
            continue
        rest = "; ".join(cells[1:])
        if len(header) == 2 and header[1]:
            rest = f"{header[1][0].lower()}{header[1][1:]} {rest[0].lower()}{rest[1:]}"
        yield _clean(f"{cells[0]}: {rest}"), " ".join(header)


def _sentences(text: str) -> list[str]:
    """Split text into sentences, keeping "U.S." and "Inc." inside theirs."""
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if sentences and _ABBREVIATION.search(sentences[-1]):
            sentences[-1] += " " + piece
        else:
            sentences.append(piece)
    return sentences


def _units(paragraph: str) -> Iterator[tuple[str, str]]:
    """Split a paragraph into what can be quoted alone (sentences, list items, table rows),
    each with the lead-in or header it sits under."""
    lines = paragraph.strip().splitlines()
    if len(lines) > 1 and all(line.lstrip().startswith("|") for line in lines):
        yield from _table_rows(lines)
        return
    items: list[str] = []
    for line in lines:
        if _ITEM.match(line) or not items:
            items.append(_ITEM.sub("", line))
        else:
            items[-1] += " " + line.strip()
    if len(items) > 2 and all(item[:1].islower() for item in items):
        # Fragments of one sentence ("1. income; 2. assets; ..."): quote them together.
        parts = [
            # The list's own "; and" / "; or" goes, never the end of a word ("error;").
            re.sub(r"[;.,]?(?:\s+(?:and|or))?[;.,]?$", "", " ".join(item.split()))
            for item in items
        ]
        yield _clean("; ".join(parts)), ""
        return
    for item in items:
        item = " ".join(item.split())
        lead_in = _LEAD_IN.match(item)
        context = lead_in[1] if lead_in else ""
        mark = (lead_in[2] or lead_in[3]).replace(".", ":") if lead_in else ""
        if words(context)[:1] and words(context)[0] in _STEPS:
            mark = ""  # a step's title ("Note the dates."): its sentences read on their own
        for order, sentence in enumerate(_sentences(item[lead_in.end() :] if lead_in else item)):
            if len(sentence) > 3:
                # A bold lead-in ("Write to the address.") belongs to its first sentence.
                shown = f"{context}{mark} {sentence}" if mark and not order else sentence
                yield _clean(shown), context


def units_of(source: Source) -> list[Unit]:
    """Return the quotable units of one document, in reading order."""
    found = []
    for block, text in enumerate(source.result.texts):
        if _is_note(text):
            continue
        found += [
            Unit(source, block, order, unit, context)
            for order, (unit, context) in enumerate(_units(text))
        ]
    return found


def _groups(question: str, rarity: Callable[[str], float]) -> list[tuple[frozenset[str], float]]:
    """Return the question's topic words as stem groups (a word and its synonyms count once),
    each weighing as much as its rarest stem."""
    groups: list[set[str]] = []
    for word in words(question):
        if word in STOPWORDS:
            continue
        found = {stem(form) for form in (word, *SYNONYMS.get(word, ()))}
        for group in [g for g in groups if g & found]:
            groups.remove(group)
            found |= group
        groups.append(found)
    return [(frozenset(g), max(rarity(s) for s in g)) for g in groups]


class _Scorer:
    """Score a unit by the question's words in it, and (less) in its title and heading."""

    def __init__(self, question: str, rarity: Callable[[str], float]) -> None:
        self.groups = _groups(question, rarity)
        asked = set(words(question))
        self.amounts = bool(asked & (_AMOUNT_WORDS | _SIZE_WORDS))
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
        )
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
        if self.steps and words(unit.text)[:1] and words(unit.text)[0] in _STEPS:
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
    return _blocks(sorted(chosen, key=lambda u: (-first[id(u.source)], u.block, u.order)))


def _blocks(chosen: list[Unit]) -> list[Block]:
    """One text block per passage, in the order chosen, each citing its passage."""
    blocks: list[Block] = []
    keys: list[tuple[int, int]] = []
    for unit in chosen:
        key = (id(unit.source), unit.block)
        if keys and keys[-1] == key:
            text, cites = blocks[-1]
            blocks[-1] = (f"{text} {unit.text}", cites)
            continue
        keys.append(key)
        blocks.append((unit.text, [cite(unit.result, unit.block, unit.block + 1)]))
    return blocks
