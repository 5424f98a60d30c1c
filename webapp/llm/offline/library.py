"""What the offline engine knows is in its library: every passage of the three corpora and of
the bundled web pages, ranked for a question by SQLite FTS5's bm25() (titles and headings
weigh more than text), so the ranking, not a keyword list, picks the corpus to read.

A document is kept only when its best passage covers most of what the question asks about
(the share of the question's rare words it contains) and ranks near the best document: a
threshold, so that the sources a person sees are the ones that were relevant. A passage that
holds only one of the question's several topic words must hold most of what it asks: a word
rare in the documents but general in speech ("reduce") does not make a page about Social
Security an answer to "how do I reduce my taxes".
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from ...lazy import once
from ...tools.readers import READER_TOOLS, DocumentRead, FolderListing, read_document
from ...tools.web_index import load_pages
from .lexicon import pairs
from .words import STOPWORDS, as_documents_say, stem, stems, synonyms_of, words

# Column weights for bm25(): the document's title, the passage's heading, the passage.
WEIGHTS = (5.0, 2.0, 1.0)
MIN_COVERAGE = 0.55  # of the question's topic (by rarity), found in one passage and its title
MIN_RELATIVE = 0.6
# A passage holding one of a question's several topic words is kept only when that word is
# most of what is asked ("reduce" alone is not "how do I reduce my taxes").
ONE_WORD_COVERAGE = 0.8  # of the best document's score
MAX_DOCUMENTS = 3
MAX_TERMS = 24
SMALL_NUMBER = 120
# The kinds of account a question may be about ("ira", "mortgage", "checking").
_SUBJECTS = frozenset(cue for cue, _ in pairs("kind_phrases") if " " not in cue)
_PARAGRAPHS = re.compile(r"\n\s*\n")
_HEADING = re.compile(r"^#+\s+(.+?)\s*$")
_AMOUNT_WORD = re.compile(r"\d+(?:k|m|grand)")


@dataclass(frozen=True, slots=True)
class LibraryDoc:
    """One document the engine can read: a corpus file (its reader tool) or a web page."""

    tool: str | None  # the reader tool, or None for a web page
    path: str  # the path inside the corpus, or the page's URL
    title: str


@dataclass(frozen=True, slots=True)
class DocHit:
    """A document ranked for a question, with its passages best first."""

    doc: LibraryDoc
    score: float
    coverage: float
    passages: tuple[str, ...]
    # How many of the question's topic words the best-covering passage holds.
    words_held: int = 0


def _term_groups(question: str) -> list[tuple[str, ...]]:
    """Return the question's topic words, each with its synonyms, once each (a word already
    among an earlier word's synonyms counts with it: "overpaid ... the surplus")."""
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for word in words(as_documents_say(question)):
        if word in STOPWORDS or word in seen:
            continue
        group = (word, *synonyms_of(word))
        seen.update(group)
        groups.append(group)
    return groups[:MAX_TERMS]


def _a_figure(word: str) -> bool:
    """Tell an age, a count or an amount ("52", "300k", "7k") from a word of a topic."""
    return (word.isdigit() and int(word) <= SMALL_NUMBER) or bool(_AMOUNT_WORD.fullmatch(word))


def _a_note(paragraph: str) -> bool:
    """An italic paragraph about the document itself ("*A summary prepared for ...*")."""
    stripped = paragraph.strip()
    return stripped.startswith("*") and stripped.endswith("*") and not stripped.startswith("**")


def _passages(text: str) -> Iterator[tuple[str, str]]:
    """Yield (heading, paragraph) for each paragraph, as the readers split documents."""
    heading = ""
    for paragraph in _PARAGRAPHS.split(text.strip()):
        paragraph = paragraph.strip()
        match = _HEADING.match(paragraph)
        if match and "\n" not in paragraph:
            heading = match[1]
            continue
        if paragraph:
            yield heading, paragraph


def _corpus(tool: str, folder: str, context: str) -> Iterator[tuple[LibraryDoc, str, str]]:
    """Yield each document below `folder` with the titles of the folders it sits in."""
    listing = read_document(tool, folder)
    assert isinstance(listing, FolderListing)
    for entry in listing.entries:
        path = f"{folder}/{entry.name}".strip("/")
        if entry.is_folder:
            yield from _corpus(tool, path, f"{context} {entry.title or entry.name}")
            continue
        document = read_document(tool, path)
        if isinstance(document, DocumentRead):
            meta = " ".join(
                str(document.meta.get(k, ""))
                for k in ("publisher", "issuer", "card", "section", "tax_year")
            )
            yield LibraryDoc(tool, path, document.title), f"{context} {meta}", document.text


class Library:
    """A passage index over documents, built once; safe to search from many threads."""

    def __init__(self, documents: list[tuple[LibraryDoc, str, str]]) -> None:
        self.docs = [doc for doc, _, _ in documents]
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(
                "CREATE VIRTUAL TABLE passages USING fts5(title, heading, body, doc UNINDEXED, "
                "tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            self._db.executemany(
                "INSERT INTO passages (title, heading, body, doc) VALUES (?, ?, ?, ?)",
                [
                    (f"{doc.title} {context}", heading, body, key)
                    for key, (doc, context, text) in enumerate(documents)
                    for heading, body in _passages(text)
                ],
            )
            (self._size,) = self._db.execute("SELECT count(*) FROM passages").fetchone()
        # Every word the documents use, and those of their titles (what a typo may mean).
        self.vocabulary = frozenset(
            w for doc, context, text in documents for w in words(f"{doc.title} {context} {text}")
        )
        self.title_words = frozenset(w for doc in self.docs for w in words(doc.title))
        self._texts = [" ".join(words(f"{doc.title} {text}")) for doc, _, text in documents]
        # Each document's notes about itself ("*A summary ... The IRS explains the same rules
        # in Publication 583.*"): what it says it sums up.
        self._notes = [
            " ".join(words(" ".join(p for p in _PARAGRAPHS.split(text) if _a_note(p))))
            for _, _, text in documents
        ]
        self.doc_stems = [
            stems(f"{doc.title} {context} {text}") for doc, context, text in documents
        ]
        # The same rarity for the writer's crude stems, from the same passages.
        self._stem_df: dict[str, int] = {}
        for doc, context, text in documents:
            for heading, body in _passages(text):
                for found in stems(f"{doc.title} {context} {heading} {body}"):
                    self._stem_df[found] = self._stem_df.get(found, 0) + 1

    @classmethod
    def bundled(cls) -> Library:
        """Build the library from the three corpora and the bundled web pages."""
        documents = [item for tool in sorted(READER_TOOLS) for item in _corpus(tool, "", "")]
        documents += [
            (LibraryDoc(None, page.url, page.title), "", page.text) for page in load_pages()
        ]
        return cls(documents)

    def _matching(self, terms: tuple[str, ...]) -> set[int]:
        expression = " OR ".join(f'"{term}"' for term in terms)
        rows = self._db.execute(
            "SELECT rowid FROM passages WHERE passages MATCH ?", (expression,)
        ).fetchall()
        return {rowid for (rowid,) in rows}

    def rank(self, question: str) -> list[DocHit]:
        """Return the documents relevant to `question`, best first (none: nothing relevant)."""
        groups = _term_groups(question)
        weights = ", ".join(str(w) for w in WEIGHTS)
        with self._lock:
            matched = [self._matching(group) for group in groups]
        # A number no document holds is an age, a count or an amount ("if I'm 52", "a 300k
        # condo"), no topic; a larger bare one may name a document ("form 8606"), and stays.
        topical = [
            k
            for k, (group, found) in enumerate(zip(groups, matched, strict=True))
            if found or not _a_figure(group[0])
        ]
        groups, matched = [groups[k] for k in topical], [matched[k] for k in topical]
        if not groups:
            return []
        expression = " OR ".join(f'"{term}"' for group in groups for term in group)
        with self._lock:
            rows = self._db.execute(
                f"SELECT rowid, doc, body, -bm25(passages, {weights}) AS score FROM passages "
                "WHERE passages MATCH ? ORDER BY score DESC LIMIT 80",
                (expression,),
            ).fetchall()
        # Rare words say more about what is asked: weigh each by its inverse document frequency.
        # A word no passage holds ("online", "spree") counts as one passage's word: it says the
        # question asks more than they do, but no more loudly than the rarest word they hold.
        rarity = [self._rarity(max(len(m), 1)) for m in matched]
        total = sum(rarity) or 1.0
        best: dict[int, DocHit] = {}
        for rowid, key, body, score in rows:
            held = [r for r, m in zip(rarity, matched, strict=True) if rowid in m]
            coverage = sum(held) / total
            hit = best.get(key)
            if hit is None:
                best[key] = DocHit(self.docs[key], score, coverage, (body,), len(held))
            else:
                best[key] = DocHit(
                    hit.doc,
                    hit.score,
                    max(hit.coverage, coverage),
                    (*hit.passages, body),
                    max(hit.words_held, len(held)),
                )
        ranked = sorted(best.values(), key=lambda h: (-h.score, h.doc.path))
        if not ranked:
            return []
        top = ranked[0].score
        kept = [
            h
            for h in ranked
            if h.coverage >= MIN_COVERAGE
            and h.score >= MIN_RELATIVE * top
            and (h.words_held >= 2 or len(groups) < 2 or h.coverage >= ONE_WORD_COVERAGE)
        ]
        for group in (g for g in groups if g[0] in _SUBJECTS):
            # "...into my IRA": the kind of account asked about, when the best document
            # speaks of it, leaves out documents that never do (charitable limits).
            forms = {stem(w) for w in group}
            about = [h for h in kept if forms & self.doc_stems[self.docs.index(h.doc)]]
            if kept and about and about[0] is kept[0]:
                kept = about
        return kept[:MAX_DOCUMENTS]

    def best_of(self, question: str, titles: tuple[str, ...]) -> str:
        """Return which of the titled documents answers `question` best (its best passage's
        bm25 score), the first of them when none holds the question's words."""
        keys = {k for k, doc in enumerate(self.docs) if doc.title in titles}
        terms = [term for group in _term_groups(question) for term in group]
        if len(titles) < 2 or not terms:
            return titles[0]
        weights = ", ".join(str(w) for w in WEIGHTS)
        with self._lock:
            rows = self._db.execute(
                f"SELECT doc FROM passages WHERE passages MATCH ? ORDER BY bm25(passages, "
                f"{weights})",
                (" OR ".join(f'"{term}"' for term in terms),),
            ).fetchall()
        best = next((key for (key,) in rows if key in keys), None)
        return titles[0] if best is None else self.docs[best].title

    def _rarity(self, found_in: int) -> float:
        """Return the weight of a word found in `found_in` passages (BM25's IDF)."""
        return math.log((self._size - found_in + 0.5) / (found_in + 0.5) + 1)

    def web_query(self, question: str, pages: list[DocHit]) -> str | None:
        """Return search words that find exactly these pages among the web pages, or None.

        Words of the question come first, then of the pages' titles, then of their best
        passages; a word is kept when every page it finds is wanted, so that the search
        brings back the relevant pages and nothing else.
        """
        wanted = {key for key, doc in enumerate(self.docs) if doc in [p.doc for p in pages]}
        if not wanted:
            return None
        candidates = [w for group in _term_groups(question) for w in group]
        candidates += [w for page in pages for w in words(page.doc.title)]
        candidates += [w for page in pages for w in words(" ".join(page.passages[:2]))]
        candidates = [w for w in candidates if w not in STOPWORDS and len(w) > 2]
        chosen: list[str] = []
        covered: set[int] = set()
        with self._lock:
            for word in dict.fromkeys(candidates):
                rows = self._db.execute(
                    "SELECT DISTINCT doc FROM passages WHERE passages MATCH ?", (f'"{word}"',)
                ).fetchall()
                found = {key for (key,) in rows if self.docs[key].tool is None}
                if found and found <= wanted and not found <= covered:
                    chosen.append(word)
                    covered |= found
                if covered == wanted:
                    return " ".join(chosen)
        return None

    def mentions(self, phrase: str) -> bool:
        """Tell whether some document's words hold `phrase`'s words in a row."""
        wanted = f" {' '.join(words(phrase))} "
        return any(wanted in f" {text} " for text in self._texts)

    def summarising(self, phrase: str) -> list[LibraryDoc]:
        """Return the documents whose notes about themselves name `phrase` (another document:
        "Publication 583"), in the library's order."""
        wanted = f" {' '.join(words(phrase))} "
        return [d for d, note in zip(self.docs, self._notes, strict=True) if wanted in f" {note} "]

    def knows(self, stem: str) -> bool:
        """Tell whether any document uses a word of this stem (see `stems`)."""
        return stem in self._stem_df

    def rarity(self, stem: str) -> float:
        """Return how rare a stem (see `stems`) is among the passages: rarer weighs more."""
        df = self._stem_df.get(stem, 0)
        return math.log((self._size - df + 0.5) / (df + 0.5) + 1)

    def find(self, tool: str | None, title: str) -> LibraryDoc | None:
        """Return the document a tool result of `tool` titled `title` came from, if known."""
        return next(
            (
                d
                for d in self.docs
                if d.title == title
                and (d.tool == tool or (d.tool is None and tool not in READER_TOOLS))
            ),
            None,
        )


# The bundled library, built on first use and then shared by the process (`webapp/lazy.py`).
library = once(Library.bundled)
