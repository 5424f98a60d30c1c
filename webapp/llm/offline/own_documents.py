"""A paper of the user's own that the app doesn't hold: their lease, their 401(k) plan's
document, their bank's deposit agreement, an insurance policy or a contract ("read my Oakwood
Apartments lease and tell me the early termination fee", "what does the Fidelity 401k plan
document say about the employer match?"). The app holds the linked accounts and a library of
public documents, never the papers a person signed, so the answer says plainly which document
it doesn't have and what was asked of it, who has a copy, and cites nothing.

Read by meaning: a kind of personal document (`_KINDS`), the words before it as its name
("oakwood apartments", "fidelity 401k"), and a request for what it says ("say", "read",
"according to", "what's in"). A document the library does hold by that name and kind is no
miss, and a question that only mentions the paper ("my lease ends in june, can I afford a
move?") asks nothing of it.
"""

from __future__ import annotations

import re

from . import lexicon
from .library import Library
from .words import STOPWORDS, words

# Each kind of paper (several words, as the question says them) and who has its copy.
_KINDS: dict[str, str] = {
    "lease": "your landlord or property manager",
    "lease agreement": "your landlord or property manager",
    "rental agreement": "your landlord or property manager",
    "tenancy agreement": "your landlord or property manager",
    "plan document": "your plan's administrator or your employer's benefits office",
    "plan documents": "your plan's administrator or your employer's benefits office",
    "summary plan description": "your plan's administrator or your employer's benefits office",
    "benefits booklet": "your employer's benefits office",
    "deposit agreement": "the bank (its website or a branch)",
    "deposit account agreement": "the bank (its website or a branch)",
    "account agreement": "the bank (its website or a branch)",
    "fee schedule": "the bank (its website or a branch)",
    "insurance policy": "your insurer",
    "policy document": "your insurer",
    "employment contract": "your employer",
    "offer letter": "your employer",
    "loan agreement": "your lender",
    "promissory note": "your lender",
    "closing disclosure": "your lender or the closing agent",
    "contract": "whoever you signed it with",
}
_BY_LENGTH = sorted(_KINDS, key=lambda k: -len(k.split()))
# What asks for the paper's content rather than only mentions it.
_READS = re.compile(
    r" (say|says|said|saying|read|reading|according to|in it|whats in|what is in|pull up|"
    r"look at|look up|check|find|quote|state|states|mention|mentions|tell me|what in) "
)
_STARTS = frozenset({"the", "my", "our", "your"})
_LEADING = (
    STOPWORDS
    | lexicon.words_of("request_words")
    | lexicon.words_of("document_kind_words")
    | {"tell", "me", "and", "according", "to", "whats", "what", "does", "do", "did"}
)
_SMALL = frozenset({"of", "and", "the", "for", "to", "a", "an", "in", "on", "at"})


def _titled(name: str) -> str:
    """ "bank of america" -> "Bank of America"; "fidelity 401k" -> "Fidelity 401(k)"."""
    out = [w if (w in _SMALL and i) else w[:1].upper() + w[1:] for i, w in enumerate(name.split())]
    return " ".join(out).replace("401k", "401(k)").replace("403b", "403(b)")


def _topic(said: list[str], start: int, end: int) -> str:
    """What the question asks of the paper: the words after "about", else after "tell me
    (the)", else those after the kind; "" when it asks nothing in particular."""
    for cue in (["about"], ["on"], ["tell", "me"], ["regarding"]):
        size = len(cue)
        at = next(
            (i for i in range(end, len(said)) if said[i : i + size] == cue),
            next((i for i in range(0, start) if said[i : i + size] == cue), None),
        )
        if at is not None:
            rest = said[at + size :] if at >= end else said[at + size : start]
            while rest and rest[0] in {"what", "whats", "is", "its"}:
                rest = rest[1:]
            kept = [w for w in rest if w not in {"in", "it", "from", "says", "say"}]
            if kept:
                return " ".join(kept)
    return ""


def own_document(text: str, books: Library) -> str | None:
    """The plain reply when the question asks what a paper of the user's own says that the
    app doesn't hold, else None."""
    said = words(text)
    phrase = f" {' '.join(said)} "
    if not _READS.search(phrase):
        return None
    for kind in _BY_LENGTH:
        size = len(kind.split())
        at = next((i for i in range(len(said)) if said[i : i + size] == kind.split()), None)
        if at is None:
            continue
        before = said[max(0, at - 6) : at]
        starts = [i for i, w in enumerate(before) if w in _STARTS]
        if not starts:
            return None  # "what is a summary plan description?": the kind, not a paper
        owned = before[starts[-1]] in ("my", "our")
        name_words = before[starts[-1] + 1 :]
        while name_words and name_words[0] in _LEADING:
            name_words = name_words[1:]
        name = " ".join(name_words)
        if not owned and not name:
            return None  # "the lease": none in particular
        if books.mentions(f"{name} {kind}".strip()):
            return None
        topic = _topic(said, at, at + size)
        paper = f"your {_titled(name)} {kind}" if name else f"your {kind}"
        asked = f" what it says about {topic}" if topic else " what it says"
        return (
            f"I don't have {paper}: I hold your linked accounts' balances and transactions "
            "and a library of public documents (IRS publications, federal rules, card "
            "benefit guides and consumer guides), not papers of your own, so I can't tell you"
            f"{asked}. {_KINDS[kind][:1].upper()}{_KINDS[kind][1:]} can give you a copy."
        )
    return None
