"""Answer markdown to safe HTML: markdown-it-py renders, nh3 sanitises, citations go in last.

Citation links are built by the app (`markupsafe`), not by the model: each one stands in
the markdown as a private-use placeholder, which may only survive in text content, and is
swapped for its HTML after sanitising. While an answer streams, `settled_lines` tells which
of its blocks can no longer change, so they are rendered and sent once. A source's passage
is markdown too: `markdown_text` reads it down to its words for the sheet's one-line snippets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from ..packets.links import browser_url

_OPEN, _CLOSE = "\ue000", "\ue001"
_PRIVATE = re.compile(f"[{_OPEN}{_CLOSE}]")
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")

# Raw HTML is escaped, and images are off: the browser must never fetch a third-party URL.
# Link reference definitions are off too: one further down an answer would turn text above
# it into a link, so no block could be sent before the answer ends.
_MD = (
    MarkdownIt("commonmark", {"html": False, "typographer": False})
    .enable(["table", "strikethrough"])
    .disable(["image", "reference"])
)

# Block structure only: as `_MD` reads the answer, and as the citation scanner reads the
# text behind it (webapp.packets `code_ranges`: CommonMark, raw HTML blocks included).
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable("table").disable(["reference", "inline"])
_SCANNED_BLOCKS = MarkdownIt("commonmark").disable("inline")
_LINE_BREAK = re.compile(r"\r\n?|\n")

# Snippets keep an image's alt text rather than dropping it; nothing is rendered from this one.
_PLAIN = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)
MAX_PLAIN_SOURCE = 4000  # a snippet shows 200 characters: the rest of a long passage is unread

_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "del",
    "s",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}


def _keep_attribute(tag: str, name: str, value: str) -> str | None:
    if tag == "a" and name == "href":
        return value if browser_url(value) else None
    if tag == "ol" and name == "start":
        return value if value.isascii() and value.isdigit() and len(value) < 10 else None
    return value


_CLEANER = nh3.Cleaner(
    tags=_TAGS,
    clean_content_tags={"script", "style"},
    attributes={"a": {"href", "title"}, "ol": {"start"}},
    attribute_filter=_keep_attribute,
    link_rel="noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    url_schemes={"http", "https"},
)


def placeholder(index: int) -> str:
    """Return the stand-in for the `index`-th citation."""
    return f"{_OPEN}{index}{_CLOSE}"


def strip_placeholders(text: str) -> str:
    """Remove placeholders and any stray character they are made of."""
    return _PRIVATE.sub("", _PLACEHOLDER.sub("", text))


def _scrub(tokens: Sequence[Token]) -> None:
    # A placeholder counts only in plain text: never in a URL, a title or code.
    for token in tokens:
        if token.type != "text":
            token.content = strip_placeholders(token.content)
        if token.attrs:
            token.attrs = {
                k: strip_placeholders(v) if isinstance(v, str) else v
                for k, v in token.attrs.items()
            }
        if token.children:
            _scrub(token.children)


def _unlink(tokens: list[Token]) -> list[Token]:
    # A link the page cannot open (mailto:, a relative path, a fragment) keeps its words as
    # text: the sanitiser would drop its href and leave an <a> that goes nowhere.
    kept: list[Token] = []
    opened: list[bool] = []
    for token in tokens:
        if token.type == "link_open":
            opened.append(browser_url(token.attrGet("href")) is not None)
            if opened[-1]:
                kept.append(token)
        elif token.type == "link_close":
            if opened.pop() if opened else True:
                kept.append(token)
        else:
            kept.append(token)
    return kept


def render_markdown(source: str, citations: Sequence[Markup] = ()) -> Markup:
    """Render `source` (placeholders in it for `citations`) to sanitised HTML."""
    tokens = _MD.parse(source)
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _unlink(token.children)
            _scrub(token.children)
        elif token.type != "inline":
            token.content = strip_placeholders(token.content)
    clean = _CLEANER.clean(_MD.renderer.render(tokens, _MD.options, {}))

    def swap(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return str(citations[index]) if index < len(citations) else ""

    return Markup(strip_placeholders(_PLACEHOLDER.sub(swap, clean)))


def _blocks(parser: MarkdownIt, text: str) -> dict[int, str]:
    """Return the top-level blocks of `text`: the line each starts on, and its token type."""
    return {
        token.map[0]: token.type
        for token in parser.parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map
    }


def _after_list(blocks: dict[int, str], line: int) -> bool:
    above = max((start for start in blocks if start < line), default=None)
    return above is not None and blocks[above] in ("bullet_list_open", "ordered_list_open")


def settled_lines(source: str, text: str) -> int:
    """Return how many lines at the start of `source` hold blocks that can no longer change.

    `text` is what `source` was made from (citation markers where `source` has placeholders),
    line for line. The settled blocks end where a line after a blank one starts a top-level
    block, both as the renderer reads `source` and as the citation scanner reads `text`.
    CommonMark reads line by line, so that line closed every block above it for good, and
    after a blank line no code span reaches across. Only a last line still arriving below a
    list does not count: it may yet continue the list ("2" becoming "2. ").
    """
    lines = source.split("\n")
    shown, scanned = _blocks(_BLOCKS, source), _blocks(_SCANNED_BLOCKS, text)
    for line in sorted(shown.keys() & scanned.keys(), reverse=True):
        if line == 0 or lines[line - 1].strip(" \t"):
            continue
        if line < len(lines) - 1 or not (_after_list(shown, line) or _after_list(scanned, line)):
            return line
    return 0


def line_start(text: str, line: int) -> int:
    """Return where line `line` (from 0) starts in `text`; lines end as markdown-it reads them."""
    if line <= 0:
        return 0
    for count, match in enumerate(_LINE_BREAK.finditer(text), start=1):
        if count == line:
            return match.end()
    return len(text)


def _inline_text(tokens: Sequence[Token]) -> str:
    words = []
    for token in tokens:
        if token.type in ("text", "code_inline", "image"):
            words.append(token.content)  # an image's content is its alt text
        elif token.type in ("softbreak", "hardbreak"):
            words.append(" ")
    return "".join(words)


def markdown_text(source: str) -> str:
    """Return `source` read as markdown as plain text: its words without the syntax.

    Raw HTML stays literal text (so a search engine's `<hi>` survives for the caller), an
    ordered item keeps its number, a bullet becomes "•", and a heading ends with " · ".
    """
    parts: list[str] = []
    for token in _PLAIN.parse(source[:MAX_PLAIN_SOURCE]):
        if token.type == "list_item_open":
            parts.append(f"{token.info}{token.markup} " if token.info else "• ")
        elif token.type == "inline":
            parts.append(_inline_text(token.children or ()))
        elif token.type in ("fence", "code_block"):
            parts.append(token.content)
        elif token.type == "heading_close":
            parts.append(" · ")
        if token.block and token.nesting == -1:
            parts.append(" ")
    return " ".join("".join(parts).split()).removesuffix(" ·")
