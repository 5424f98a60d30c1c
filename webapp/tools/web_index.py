"""The local web index behind `search_web`: bundled pages in SQLite FTS5, ranked by bm25.

The query is the model's text, so it never reaches FTS5 as syntax: it is cut into words,
and each word becomes a quoted string (docs/specs.md#tools-and-data: a local full-text index).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..lazy import once

WEB_PAGES_DIR = Path(__file__).resolve().parent.parent / "data" / "web"
MAX_LIMIT = 20
MAX_QUERY_CHARS = 2000
MAX_TERMS = 32

_WORD = re.compile(r"\w+")
# Words so common that they would only add noise to an OR query; kept when nothing else is left.
_STOPWORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
        "how", "i", "in", "is", "it", "my", "of", "on", "or", "should", "the", "to", "what",
        "when", "where", "which", "who", "why", "with", "you", "your",
    }
)  # fmt: skip


class WebSearchError(ValueError):
    """A query or limit the search refuses, or a search service that failed; safe to show."""


@dataclass(frozen=True, slots=True)
class WebPage:
    """One page in the local index."""

    url: str
    title: str
    text: str
    published_date: str | None = None


@dataclass(frozen=True, slots=True)
class WebResult:
    """One search hit: where it is, what it is called, and the text to cite."""

    url: str
    title: str
    snippet: str
    text: str
    published_date: str | None


def check_limit(limit: object) -> int:
    """Return `limit` when it is a whole number from 1 to MAX_LIMIT, else raise WebSearchError."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise WebSearchError(f"limit must be a whole number from 1 to {MAX_LIMIT}.")
    return limit


def check_query(query: object) -> str:
    """Return the query stripped and bounded, or raise WebSearchError when there is none."""
    if not isinstance(query, str):
        raise WebSearchError("The search query must be text.")
    text = query.strip()[:MAX_QUERY_CHARS]
    if not text:
        raise WebSearchError("The search query is empty.")
    return text


def fts_query(query: str) -> str | None:
    """Turn free text into a safe FTS5 expression (quoted words joined by OR), or None."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query[:MAX_QUERY_CHARS])))
    useful = [w for w in words if w not in _STOPWORDS] or words
    # Every word is made of \w characters only, so quoting it leaves no FTS5 syntax behind.
    terms = [f'"{w[:64]}"' for w in useful[:MAX_TERMS]]
    return " OR ".join(terms) if terms else None


def load_pages(directory: Path = WEB_PAGES_DIR) -> list[WebPage]:
    """Read every `*.json` page ({url, title, text, published_date}) in `directory`."""
    pages: list[WebPage] = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        date = data.get("published_date")
        pages.append(
            WebPage(
                url=str(data["url"]),
                title=str(data["title"]),
                text=str(data["text"]),
                published_date=str(date) if date else None,
            )
        )
    return pages


class LocalWebIndex:
    """A full-text index over pages, built once; safe to search from many threads."""

    def __init__(self, pages: Iterable[WebPage], *, path: str | Path = ":memory:") -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        with self._lock, self._db:
            self._db.execute("DROP TABLE IF EXISTS pages")
            self._db.execute(
                "CREATE VIRTUAL TABLE pages USING fts5("
                "title, text, url UNINDEXED, published_date UNINDEXED, "
                "tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            self._db.executemany(
                "INSERT INTO pages (title, text, url, published_date) VALUES (?, ?, ?, ?)",
                [(p.title, p.text, p.url, p.published_date) for p in pages],
            )

    @classmethod
    def from_directory(
        cls, directory: Path = WEB_PAGES_DIR, *, path: str | Path = ":memory:"
    ) -> LocalWebIndex:
        """Build an index from the bundled pages (or those in `directory`)."""
        return cls(load_pages(directory), path=path)

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT count(*) FROM pages").fetchone()
        return int(count)

    def search(self, query: str, *, limit: int = 5) -> list[WebResult]:
        """Return up to `limit` pages for `query`, best first (titles weigh more than text)."""
        limit = check_limit(limit)
        expression = fts_query(check_query(query))
        if expression is None:
            return []  # only punctuation: nothing to look for
        sql = (
            "SELECT url, title, snippet(pages, 1, '', '', '…', 32), text, published_date "
            "FROM pages WHERE pages MATCH ? ORDER BY bm25(pages, 4.0, 1.0) LIMIT ?"
        )
        try:
            with self._lock:
                rows = self._db.execute(sql, (expression, limit)).fetchall()
        except sqlite3.Error:
            raise WebSearchError("The search could not be run for that query.") from None
        return [
            WebResult(url, title, snippet, text, date) for url, title, snippet, text, date in rows
        ]


@once
def default_index() -> LocalWebIndex:
    """Return the index over the bundled pages, built on first use and then shared."""
    return LocalWebIndex.from_directory()
