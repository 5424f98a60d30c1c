"""Documents the library doesn't hold, said plainly: an IRS publication, a US Code section on
a topic none of its sections covers, a regulation or act named by title, a paper named by its
kind ("the Amex Gold benefits guide"); each offering only the bundled documents on the same
topic, or none when none is."""

from __future__ import annotations

import re

from . import lexicon
from .library import Library, LibraryDoc
from .words import STOPWORDS, join_words, stems, words

PUBLICATION = re.compile(r"\b(?:publication|pub\.?)\s*(\d+[a-z]?(?:-[a-z])?)\b", re.IGNORECASE)
_SECTION = re.compile(r"\bsection\s+\d|§\s*\d", re.IGNORECASE)
_US_CODE = re.compile(r"\b(?:us|u\.s\.|united states)\s+code\b|\busc\b", re.IGNORECASE)
_DOCUMENT_WORDS = lexicon.words_of("document_kind_words")

_SMALL = frozenset({"of", "and", "the", "for", "to", "a", "an", "in", "on", "at"})


def title_case(name: str) -> str:
    """Return a name as a title is written: "bank of america" -> "Bank of America"."""
    return " ".join(
        w if w in _SMALL and i else w[:1].upper() + w[1:] for i, w in enumerate(name.split())
    )


def _titles(books: Library, keep: str) -> list[str]:
    return sorted(doc.title for doc in books.docs if doc.tool and keep in doc.path)


def publication_held(number: str, books: Library) -> bool:
    """Tell whether the library holds the IRS publication of this number ("590-A")."""
    return any(
        t.upper().startswith(f"PUBLICATION {number.upper()}:") for t in _titles(books, "irs/")
    )


def missing_document(text: str, books: Library) -> str | None:
    """Say so when the question names a document the library doesn't hold, or asks the US
    Code about a topic none of its sections covers."""
    for named in PUBLICATION.finditer(text):  # "pub 590-A and pub 590-B": the one not held
        number = named[1].upper()
        asked = text[: named.start()] + text[named.end() :]
        held = _on_topic(_titles(books, "irs/"), asked, books)
        if not publication_held(number, books):
            have = (
                f"The IRS publications I have are {join_words(held)}"
                if held
                else "No IRS publication I have is about that topic"
            )
            return (
                f"I don't have IRS Publication {number} among my documents, so I can't say "
                f"what it says. {have}; irs.gov has every publication."
            )
    if _US_CODE.search(text) and not _SECTION.search(text):
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


NAMED = [
    (re.compile(str(rule["pattern"]), re.IGNORECASE if rule.get("ignore_case", True) else 0), rule)
    for rule in lexicon.entries("named_document")
]


def named_documents(text: str, books: Library) -> list[LibraryDoc]:
    """Return the bundled documents a question names ("section 121", "pub 590-a", "12 CFR
    1026.12"): what it asks is what they say."""
    found = []
    publication = PUBLICATION.search(text)
    if publication:
        title = f"PUBLICATION {publication[1].upper()}:"
        found += [d for d in books.docs if d.tool and d.title.upper().startswith(title)]
    for pattern, rule in NAMED:
        named = pattern.search(text)
        if named:
            path = str(rule["held"]).format(name=" ".join(named["name"].split()).lower())
            found += [d for d in books.docs if d.tool and path in d.path.lower()]
    return list(dict.fromkeys(found))


def _named_document(text: str, books: Library) -> str | None:
    """Say so when the question names a document by title ("Regulation E", "IRS Form 1040",
    "the Fair Credit Reporting Act") that no bundled document is, and offer those that are."""
    for pattern, rule in NAMED:
        found = pattern.search(text)
        if not found:
            continue
        name = " ".join(found["name"].split())
        if named_held(rule, name, books):
            return None
        label = named_label(rule, name)
        topic = text[: found.start()] + text[found.end() :]
        return _not_bundled(label, books, str(rule["offer"]), topic=topic)
    return _titled_document(text, books)


def named_held(rule: dict[str, object], name: str, books: Library) -> bool:
    """Tell whether the library holds the document a `named_document` rule found by name."""
    path = str(rule["held"]).format(name=name.lower())
    return any(path in doc.path.lower() for doc in books.docs if doc.tool)


def named_label(rule: dict[str, object], name: str) -> str:
    """How the answer names a document a `named_document` rule found: "12 CFR 1024.17"."""
    return str(rule["label"]).format(NAME=name.upper(), name=name, Name=title_case(name))


def _not_bundled(
    label: str, books: Library, offer: str, rule: dict[str, object] | None = None, topic: str = ""
) -> str:
    """Say the document isn't held, and offer the related ones: of its own kind, where the
    rule says one (`same_kind`), else what it says to do `instead`. With the question's
    `topic` ("like-kind exchange rules"), only documents whose titles share a topic word with
    it are related; when none does, none is offered as if it were."""
    every = _titles(books, offer)
    offered = _on_topic(every, topic, books)
    if every and not offered:
        return (
            f"I don't have {' '.join(label.split())} among my documents, so I can't say what"
            " it says, and none of the documents I have is about that topic."
        )
    same = str((rule or {}).get("same_kind", ""))
    if same:
        offered = [t for t in offered if same in t.lower()]
    related = _related(offered) if offered else str((rule or {}).get("instead", ""))
    return (
        f"I don't have {' '.join(label.split())} among my documents, so I can't say what "
        f"it says. {related}"
    ).rstrip()


def _on_topic(titles: list[str], topic: str, books: Library) -> list[str]:
    """Of the titles offered for a document not held, those about the question's `topic`
    ("like-kind exchange rules"): titled with one of its words. A topic word no bundled
    document uses at all ("debit", "education") says the library has nothing on the topic,
    so none is related, whatever words their titles share with the rest."""
    asked = stems(topic) - stems(" ".join(_DOCUMENT_WORDS | LEADING))
    if not asked:
        return titles
    if not all(books.knows(s) for s in asked):
        return []
    return [t for t in titles if asked & stems(t)]


def _related(titles: list[str]) -> str:
    if len(titles) == 1:
        return f"The related document I have is {titles[0]}."
    return f"The related documents I have are {join_words(titles)}."


_TITLED = lexicon.entries("titled_document")
_NAME_STARTS = frozenset({"the", "my", "our", "your"})
LEADING = STOPWORDS | _DOCUMENT_WORDS | lexicon.words_of("request_words")


def _titled_document(text: str, books: Library) -> str | None:
    """A document named by the words before its kind (after the last "the" or "my"): "the
    Fair Debt Collection Practices Act", "my Amex Gold benefits guide"; held when a bundled
    document says the name and kind, or one of the kind's folder is titled with the name's
    words."""
    said = words(text)
    for rule in _TITLED:
        for kind in (str(rule["kind"]), *map(str, rule.get("also", ()))):
            size = len(kind.split())
            at = next((i for i in range(len(said)) if said[i : i + size] == kind.split()), None)
            if not at:
                continue
            before = said[max(0, at - 6) : at]
            starts = [i for i, w in enumerate(before) if w in _NAME_STARTS]
            if starts:  # "the ...", "my ...": the name follows the last of them
                before = before[starts[-1] + 1 :]
            while before and before[0] in LEADING:
                before = before[1:]
            name = " ".join(before)
            if not name or not stems(name):
                continue
            offer = str(rule["offer"])
            folder = [k for k, doc in enumerate(books.docs) if doc.tool and offer in doc.path]
            # the document of that kind: its title says the name and the kind ("Chase
            # Sapphire Preferred: guide to card benefits" is no cardmember agreement)
            titled = rule.get("titled", False) and any(
                stems(f"{name} {kind}") <= stems(books.docs[k].title) for k in folder
            )
            if titled or books.mentions(f"{name} {kind}"):
                return None
            label = str(rule["label"]).format(Name=title_case(name), kind=kind)
            return _not_bundled(label, books, offer, rule)
    return None
