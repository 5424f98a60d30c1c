"""What a document can be quoted by: its sentences, list items and table rows, in reading
order, each with the lead-in or header it sits under; in a list of steps, each step's title
and place, so that an answer to "how do I" can give the steps in order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .cite import Result
from .words import word_set, words

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'$])")
# Abbreviations whose period does not end a sentence ("U.S. Treasury", "Apple Inc. shares").
_ABBREVIATION = re.compile(r"(?:\b[A-Z]\.[A-Z]\.|\b(?:e\.g|i\.e|etc|Inc|No|vs|Mr|Ms|Dr|St|Co))\.?$")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+")
_LEAD_IN = re.compile(r"^\*\*([^*]+?)(?:([.:?])\*\*|\*\*([.:]))\s+")
# Verbs that open an instruction: the steps a "how do I" question asks for.
STEPS = word_set("""
ask avoid call check choose close collect compare consider contact decline dispute file
follow gather give keep look make note open pay put read report request review save send
set sign start submit tell track use write
""")


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
    step: str = ""  # the title of the step it sits in ("Look again."), in a list of steps
    item: int = -1  # the place of that step in its list (-1: no list of steps)

    @property
    def result(self) -> Result:
        return self.source.result


def _clean(text: str) -> str:
    text = re.sub(r"\*\*|__|`", "", text)
    text = re.sub(r"(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)", "", text)
    text = " ".join(text.split()).rstrip(";,")
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?:" else text + "."


def is_note(paragraph: str) -> bool:
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


def _opens_step(item: str) -> bool:
    """Tell a list item that is a step: its bold title or its text opens with an instruction."""
    return (words(item)[:1] or [""])[0] in STEPS


def _units(paragraph: str) -> Iterator[tuple[str, str, str, int]]:
    """Split a paragraph into what can be quoted alone (sentences, list items, table rows),
    each with the lead-in or header it sits under, and in a list of steps (three or more
    items, each an instruction) the step's title and place."""
    lines = paragraph.strip().splitlines()
    if len(lines) > 1 and all(line.lstrip().startswith("|") for line in lines):
        yield from ((row, header, "", -1) for row, header in _table_rows(lines))
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
        # The conjunction before the last item stays, where the list says one ("; or ...").
        said = re.search(r"\s(and|or)[;.,]?$", " ".join(items[-2].split()))
        last = f"{said[1]} {parts[-1]}" if said else parts[-1]
        yield _clean("; ".join([*parts[:-1], last])), "", "", -1
        return
    listed = len(items) > 2 and all(_opens_step(item) for item in items)
    for number, item in enumerate(items):
        item = " ".join(item.split())
        lead_in = _LEAD_IN.match(item)
        context = lead_in[1] if lead_in else ""
        mark = (lead_in[2] or lead_in[3]).replace(".", ":") if lead_in else ""
        step = ""
        if words(context)[:1] and words(context)[0] in STEPS:
            mark = ""  # a step's title ("Note the dates."): its sentences read on their own
            step = _clean(context)
        for order, sentence in enumerate(_sentences(item[lead_in.end() :] if lead_in else item)):
            if len(sentence) > 3:
                # A bold lead-in ("Write to the address.") belongs to its first sentence.
                shown = f"{context}{mark} {sentence}" if mark and not order else sentence
                yield _clean(shown), context, step, number if listed else -1


def runs_on(unit: Unit) -> bool:
    """Tell the first unit of a list whose items are fragments of one sentence ("1. on or
    after ..."), which reads on after a lead-in that ends with a colon."""
    first = _ITEM.sub("", unit.result.texts[unit.block].lstrip())
    return not unit.order and first[:1].islower()


def units_of(source: Source) -> list[Unit]:
    """Return the quotable units of one document, in reading order."""
    found = []
    for block, text in enumerate(source.result.texts):
        if is_note(text):
            continue
        found += [
            Unit(source, block, order, unit, context, step, item)
            for order, (unit, context, step, item) in enumerate(_units(text))
        ]
    return found
