"""The app's own library reader: a bundled document, its cited passage marked.

docs/specs.md#routes: `GET /library/<corpus>/<path>`. A tax, card or mortgage citation opens
here, so a document with no public URL is never a dead end, and one with a URL keeps it one
click away. The path is read through the library readers (`read_document`), so every guard
they keep against paths that leave their corpus keeps this page too: anything they refuse is
a 404. `?cite=<words>` (repeatable) marks the blocks of the passage holding those words (a
passage: blank-line-bounded, as the readers cut documents for citing); the first mark is
`#cited`, which links aim at, so the browser scrolls to it with no script.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache

from flask import Blueprint, abort, render_template, request
from markdown_it import MarkdownIt
from markupsafe import Markup

from ..citations.urls import humanize_citation_url
from ..packets.links import browser_url, display_title, domain_of
from ..tools.readers import READER_TOOLS, DocumentRead, FolderListing, ReaderError, read_document
from .auth import login_required
from .markdown import placeholder, render_markdown, strip_placeholders

bp = Blueprint("library", __name__)

ANCHOR = "cited"
MAX_CITES = 3
MAX_CITE_CHARS = 2000
CORPUS_LABELS: Mapping[str, str] = {
    "tax-authority": "Tax reference",
    "credit-card-corpus": "Card document",
    "mortgage-code": "Mortgage reference",
}
_TOOLS: dict[str, str] = {corpus: tool for tool, corpus in READER_TOOLS.items()}
_CR = re.compile(r"\r\n?")
_TITLE_LINE = re.compile(r"\A[ ]{0,3}#[ \t]+[^\n]*(?:\n|\Z)")
# The blocks as `_markdown.render_markdown` reads them (the same options).
_BLOCKS = (
    MarkdownIt("commonmark", {"html": False, "typographer": False})
    .enable(["table", "strikethrough"])
    .disable(["image", "reference"])
)
_OPEN_FIRST = Markup(f'<mark id="{ANCHOR}">')
_OPEN, _CLOSE = Markup("<mark>"), Markup("</mark>")


def _walk(tool: str, folder: str = "") -> Iterator[DocumentRead]:
    listing = read_document(tool, folder)
    if not isinstance(listing, FolderListing):
        return
    for entry in listing.entries:
        path = f"{folder}/{entry.name}" if folder else entry.name
        try:
            if entry.is_folder:
                yield from _walk(tool, path)
                continue
            found = read_document(tool, path)
        except ReaderError:
            continue
        if isinstance(found, DocumentRead):
            yield found


def original_url(document: DocumentRead) -> str | None:
    """Return the readable public page of `document` (a download humanized), or None."""
    if document.source_url is None:
        return None
    return browser_url(humanize_citation_url(document.source_url, document.section))


@cache
def _shelf() -> Mapping[tuple[str, str], str | None]:
    # (corpus, the URL a document is cited under) -> its path; None where two share a URL.
    shelf: dict[tuple[str, str], str | None] = {}
    for tool, corpus in READER_TOOLS.items():
        for document in _walk(tool):
            for url in {document.source_url, original_url(document)} - {None}:
                key = (corpus, str(url))
                shelf[key] = (
                    document.path if shelf.get(key, document.path) == document.path else None
                )
    return shelf


def library_path(corpus: str, url: str) -> str | None:
    """Return the path of the document `corpus` cites under `url` (`LibraryPathFinder`)."""
    return _shelf().get((corpus, url))


# The first line of a list item: "- ", "* ", "+ ", "1. " or "1) ".
_ITEM = re.compile(r"\s*(?:[-*+]|\d{1,9}[.)])\s")


def _passage_lines(text: str, cite: str) -> tuple[int, int] | None:
    """Return the lines of the blank-line-bounded part(s) of `text` holding `cite`.

    Whitespace is read loosely: a run of it matches any other.
    """
    needle = " ".join(cite.split())
    if not needle:
        return None
    kept: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        if char.isspace():
            if kept and kept[-1] != " ":
                kept.append(" ")
                where.append(index)
            continue
        kept.append(char)
        where.append(index)
    start = "".join(kept).find(needle)
    if start < 0:
        return None
    lines = text.split("\n")
    top = text.count("\n", 0, where[start])
    bottom = text.count("\n", 0, where[start + len(needle) - 1])
    # A passage is cited as the readers cut it, by blank lines: the whole of each such part
    # it touches is marked (a link carries only its first words: the rest of a table too).
    # Within a list, only the items the passage touches: one benefit cited is one marked.
    while top > 0 and lines[top - 1].strip() and not _ITEM.match(lines[top]):
        top -= 1
    while (
        bottom < len(lines) - 1 and lines[bottom + 1].strip() and not _ITEM.match(lines[bottom + 1])
    ):
        bottom += 1
    return top, bottom


def _insertions(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, bool]]:
    """Return where marks open (True) and close around each block the spans touch."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    found: list[tuple[int, bool]] = []
    cursor: dict[int, int] = {}  # table cells share a line: each is looked for after the last
    for token in _BLOCKS.parse(text):
        if token.type != "inline" or not token.map or not token.content.strip():
            continue
        top, bottom = token.map
        if not any(first < bottom and last >= top for first, last in spans):
            continue
        parts = token.content.split("\n")
        head, tail, end_line = parts[0], parts[-1], top + len(parts) - 1
        if end_line >= bottom:
            continue
        column = lines[top].find(head, cursor.get(top, 0))
        end = column if end_line == top else lines[end_line].find(tail)
        if column < 0 or end < 0:
            continue  # not verbatim in the source (a tab read as spaces): left unmarked
        cursor[end_line] = end + len(tail)
        found += [(starts[top] + column, True), (starts[end_line] + end + len(tail), False)]
    return found


def marked_html(text: str, cites: Sequence[str]) -> tuple[Markup, bool]:
    """Render `text` with each block holding one of `cites` in a <mark>; tell if any was."""
    text = strip_placeholders(_CR.sub("\n", text))
    spans = [span for cite in cites if (span := _passage_lines(text, cite))]
    points = _insertions(text, spans) if spans else []
    if not points:
        return render_markdown(text), False
    marks: list[Markup] = []
    for _, opens in sorted(points):
        marks.append((_OPEN if marks else _OPEN_FIRST) if opens else _CLOSE)
    ordered = sorted(enumerate(sorted(points)), key=lambda item: item[1][0], reverse=True)
    for index, (offset, _) in ordered:
        text = text[:offset] + placeholder(index) + text[offset:]
    html = render_markdown(text, marks)
    if html.count("<mark") != html.count("</mark>") or _OPEN_FIRST not in html:
        return render_markdown(strip_placeholders(text)), False  # never a mark left open
    return html, True


def _cites() -> list[str]:
    cites = [cite[:MAX_CITE_CHARS] for cite in request.args.getlist("cite") if cite.strip()]
    return cites[:MAX_CITES]


@bp.get("/library/<corpus>/<path:path>")
@login_required
def read(corpus: str, path: str) -> str:
    """Show one bundled document, its cited passage marked; 404 for anything else."""
    tool = _TOOLS.get(corpus)
    try:
        document = read_document(tool, path) if tool else None
    except ReaderError:
        document = None
    if not isinstance(document, DocumentRead):
        abort(404, "There is no such document in the library.")
    title = display_title(document.title) or document.path
    # The page's own heading is the title: the document's first-line heading would repeat it.
    body, marked = marked_html(_TITLE_LINE.sub("", document.text, count=1), _cites())
    original = original_url(document)
    publisher = document.meta.get("publisher")
    return render_template(
        "library.html",
        title=title,
        body=body,
        cited=bool(_cites()),
        marked=marked,
        kind=CORPUS_LABELS.get(corpus, "Document"),
        original=original,
        original_host=domain_of(original),
        publisher=display_title(publisher) if isinstance(publisher, str) else None,
    )
