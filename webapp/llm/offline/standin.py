"""A document the person names that the library doesn't hold, answered from one it does: a
bundled summary whose note says it sets out the named document's rules ("The IRS explains
the same rules in Publication 583"), or another document the same question names ("compare
pub 590-A and pub 590-B"), when it answers what the question asks. The answer says first
that the named document isn't held; with no such stand-in, `scope.py` declines as before."""

from __future__ import annotations

from dataclasses import dataclass

from .library import DocHit, Library
from .scope import LEADING, NAMED, PUBLICATION, named_held, named_label, publication_held
from .words import STOPWORDS, words


@dataclass(frozen=True, slots=True)
class Named:
    """A document the question names: how the answer says it, how a summary would name it,
    whether the library holds it, and where the question says it."""

    label: str
    mention: str
    held: bool
    span: tuple[int, int]


def _named(text: str, books: Library) -> list[Named]:
    """The documents the question names by number or title, publications first."""
    found = [
        Named(
            f"IRS Publication {m[1].upper()}",
            f"publication {m[1]}",
            publication_held(m[1], books),
            m.span(),
        )
        for m in PUBLICATION.finditer(text)
    ]
    for pattern, rule in NAMED:
        for m in pattern.finditer(text):
            name = " ".join(m["name"].split())
            label = named_label(rule, name)
            mention = name if any(c.isdigit() for c in name) else label.removeprefix("the ")
            found.append(Named(label, mention, named_held(rule, name, books), m.span()))
    return found


def stand_in(text: str, books: Library) -> tuple[str, list[DocHit]] | None:
    """The sentence that says which named document isn't held, and the held documents that
    answer the question in its place; None when there are none."""
    named = _named(text, books)
    missing = [n for n in named if not n.held]
    if not missing:
        return None
    kept = list(text)
    for n in named:
        kept[n.span[0] : n.span[1]] = " " * (n.span[1] - n.span[0])
    # The question's own topic: its words but the documents' names and the asking ("pull
    # up", "what does it say"); stopwords stay, so that "take money out" reads as a phrase.
    naming = (LEADING - STOPWORDS) | set(words(" ".join(n.label for n in named)))
    asked = " ".join(w for w in words("".join(kept)) if w not in naming)
    hits = books.rank(asked) if asked else []
    summaries = {n.label: books.summarising(n.mention) for n in missing}
    shown = next((n for n in missing if summaries[n.label]), None)
    if shown is not None:
        hits = [h for h in hits if h.doc in summaries[shown.label]]
        if not hits:
            return None
        titles = " and ".join(h.doc.title for h in hits)
        note = (
            f"I don't have {shown.label} among my documents, so I can't quote it, but "
            f"{titles}, which I have, sums up its rules:"
        )
        return note, hits
    if not hits or len(missing) == len(named):
        return None  # nothing sums it up, and the question names no document that is held
    return (
        f"I don't have {missing[0].label} among my documents, so I can't say what it says. "
        "Here is what the documents I have say:",
        hits,
    )
