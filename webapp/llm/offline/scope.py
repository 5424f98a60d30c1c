"""Honest scope: what the product can't do (move money, trade, pay, predict), data it
doesn't hold (a credit score, a card's interest rate), and documents it doesn't have, each
answered plainly with what it can do instead, and with no sources."""

from __future__ import annotations

import re

from . import lexicon
from .library import Library
from .words import STOPWORDS, join_words, stems, words

_SCOPE = lexicon.rules("scope")
_PUBLICATION = re.compile(r"\b(?:publication|pub\.?)\s*(\d+[a-z]?(?:-[a-z])?)\b", re.IGNORECASE)
_US_CODE = re.compile(r"\b(?:us|u\.s\.|united states)\s+code\b|\busc\b", re.IGNORECASE)
_DOCUMENT_WORDS = lexicon.words_of("document_kind_words")


def padded(text: str) -> str:
    """Return the question's words single-spaced and padded with spaces."""
    return " " + " ".join(words(text.replace("&", " and "))) + " "


def scope_reply(text: str) -> str | None:
    """Return the plain reply to a request the product can't serve, or None."""
    phrase = padded(text)
    for rule in _SCOPE:
        if rule.pattern.search(phrase):
            return rule.reply
    return None


def _titles(books: Library, keep: str) -> list[str]:
    return sorted(doc.title for doc in books.docs if doc.tool and keep in doc.path)


def missing_document(text: str, books: Library) -> str | None:
    """Say so when the question names a document the library doesn't hold, or asks the US
    Code about a topic none of its sections covers."""
    named = _PUBLICATION.search(text)
    if named:
        number = named[1].upper()
        held = _titles(books, "irs/")
        if not any(title.upper().startswith(f"PUBLICATION {number}:") for title in held):
            return (
                f"I don't have IRS Publication {number} among my documents, so I can't say "
                f"what it says. The IRS publications I have are {join_words(held)}; "
                "irs.gov has every publication."
            )
    if _US_CODE.search(text):
        topic = [w for w in words(text) if w not in STOPWORDS and w not in _DOCUMENT_WORDS]
        wanted = stems(" ".join(topic)) | ({"deduc"} if "deduction" in words(text) else set())
        sections = [k for k, doc in enumerate(books.docs) if doc.tool and "usc/" in doc.path]
        if wanted and not any(wanted <= books.doc_stems[k] for k in sections):
            about = " ".join(w for w in words(text) if w in topic or w == "deduction")
            return (
                f"I don't have the US Code section on the {about} among my documents. The "
                f"sections I have are {join_words(_titles(books, 'usc/'))}; "
                "uscode.house.gov has the whole Code."
            )
    return _named_document(text, books)


_NAMED = [
    (re.compile(str(rule["pattern"]), re.IGNORECASE if rule.get("ignore_case", True) else 0), rule)
    for rule in lexicon.entries("named_document")
]


def _named_document(text: str, books: Library) -> str | None:
    """Say so when the question names a document by title ("Regulation E", "IRS Form 1040",
    "the Fair Credit Reporting Act") that no bundled document is, and offer those that are."""
    for pattern, rule in _NAMED:
        found = pattern.search(text)
        if not found:
            continue
        name = " ".join(found["name"].split())
        if "held" in rule:
            path = str(rule["held"]).format(name=name.lower())
            if any(path in doc.path for doc in books.docs if doc.tool):
                return None
        elif any(stems(name) <= doc_stems for doc_stems in books.doc_stems):
            return None
        label = str(rule["label"]).format(NAME=name.upper(), Name=name.title() + " ")
        offered = _titles(books, str(rule["offer"]))
        return (
            f"I don't have {' '.join(label.split())} among my documents, so I can't say what "
            f"it says. The documents I have of that kind are {join_words(offered)}."
        )
    return None
