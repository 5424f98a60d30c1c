"""Answer markdown to safe HTML: markdown-it-py renders, nh3 sanitises, citations go in last.

Citation links are built by the app (`markupsafe`), not by the model: each one stands in
the markdown as a private-use placeholder, which may only survive in text content, and is
swapped for its HTML after sanitising. A source's passage is markdown too: `markdown_text`
reads it down to its words for the sheet's one-line snippets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

from ..packets import browser_url

_OPEN, _CLOSE = "\ue000", "\ue001"
_PRIVATE = re.compile(f"[{_OPEN}{_CLOSE}]")
_PLACEHOLDER = re.compile(f"{_OPEN}(\\d+){_CLOSE}")

# Raw HTML is escaped, and images are off: the browser must never fetch a third-party URL.
_MD = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable(
    ["table", "strikethrough"]
).disable("image")

# Snippets keep an image's alt text rather than dropping it; nothing is rendered from this one.
_PLAIN = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable(
    ["table", "strikethrough"]
)
MAX_PLAIN_SOURCE = 4000  # a snippet shows 200 characters: the rest of a long passage is unread

_TAGS = {"p", "br", "strong", "em", "del", "s", "code", "pre", "blockquote", "ul", "ol", "li",
         "h1", "h2", "h3", "h4", "h5", "h6", "hr", "a", "table", "thead", "tbody", "tr", "th",
         "td"}


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
            token.attrs = {k: strip_placeholders(v) if isinstance(v, str) else v
                           for k, v in token.attrs.items()}
        if token.children:
            _scrub(token.children)


def render_markdown(source: str, citations: Sequence[Markup] = ()) -> Markup:
    """Render `source` (placeholders in it for `citations`) to sanitised HTML."""
    tokens = _MD.parse(source)
    for token in tokens:
        if token.type == "inline" and token.children:
            _scrub(token.children)
        elif token.type != "inline":
            token.content = strip_placeholders(token.content)
    clean = _CLEANER.clean(_MD.renderer.render(tokens, _MD.options, {}))

    def swap(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return str(citations[index]) if index < len(citations) else ""

    return Markup(strip_placeholders(_PLACEHOLDER.sub(swap, clean)))


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
