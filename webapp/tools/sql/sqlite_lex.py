"""Two checks on the model's SQL that SQLite's authorizer cannot make, done on its tokens.

The authorizer names the view a base-table read goes through, but a CTE sets that name
too: `WITH account_details AS (SELECT * FROM plaid_accounts) ...` would pass for the view.
And a CTE's rows reach the authorizer as reads of a table named like the CTE. So no WITH
query (or window) may take the name of a table or view, and reads of the names the query
itself defines are then safe to allow. The statement must also start as a query does, which
keeps out `VACUUM INTO 'file'` and anything else the authorizer never sees.
Tokens follow SQLite's tokenizer (tokenize.c): its whitespace, comments and quotes.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

from webapp.store.schema import QUERY_VIEWS

from .result import QueryRejected

_TOKEN = re.compile(
    r"""
      (?P<space>[ \t\n\v\f\r]+)
    | (?P<comment>--[^\n]*|/\*.*?(?:\*/|\Z))
    | (?P<quoted>'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`(?:[^`]|``)*`?|\[[^\]]*\]?)
    | (?P<word>[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_$\x80-\U0010ffff]*)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_QUERY_STARTS = ("select", "with", "values")
_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold_name(name: str) -> str:
    """Fold `name` as SQLite compares names: case-insensitively, for ASCII letters only."""
    return name.translate(_ASCII_UPPER)


def _unquote(text: str) -> str:
    opener = text[0]
    closer = {"[": "]"}.get(opener, opener)
    inner = text[1:-1] if len(text) > 1 and text.endswith(closer) else text[1:]
    return inner if opener == "[" else inner.replace(opener * 2, opener)


def tokens(sql: str) -> Iterator[tuple[str, str]]:
    """Yield (kind, text) per token, names case-folded, whitespace and comments skipped."""
    for match in _TOKEN.finditer(sql):
        kind, text = match.lastgroup or "other", match.group()
        if kind in ("space", "comment"):
            continue
        if kind == "quoted":
            yield "quoted", fold_name(_unquote(text))
        elif kind == "word":
            yield "word", fold_name(text)
        else:
            yield "other", text


def _skip_parens(items: list[tuple[str, str]], index: int) -> int:
    """Return the index just past the parenthesised group that starts at `index`."""
    depth = 0
    for position in range(index, len(items)):
        if items[position] == ("other", "("):
            depth += 1
        elif items[position] == ("other", ")"):
            depth -= 1
            if depth == 0:
                return position + 1
    return len(items)


def _defines(items: list[tuple[str, str]], index: int) -> bool:
    """Tell whether the name at `index` starts `name [(cols)] AS [NOT] [MATERIALIZED] (`."""
    at = index + 1
    if at < len(items) and items[at] == ("other", "("):
        at = _skip_parens(items, at)
    if at >= len(items) or items[at] != ("word", "as"):
        return False
    at += 1
    for optional in ("not", "materialized"):
        if at < len(items) and items[at] == ("word", optional):
            at += 1
    return at < len(items) and items[at] == ("other", "(")


def check_sqlite_query(sql: str, reserved: Collection[str]) -> frozenset[str]:
    """Return the names `sql` gives its WITH queries; reject a non-query or a `reserved` name."""
    items = list(tokens(sql))
    if not items or items[0][0] != "word" or items[0][1] not in _QUERY_STARTS:
        raise QueryRejected("only SELECT statements can run; nothing can be changed.")
    defined: set[str] = set()
    for index, (kind, text) in enumerate(items):
        if kind == "other" or not _defines(items, index):
            continue
        if text in reserved or text in QUERY_VIEWS or text.startswith("sqlite_"):
            raise QueryRejected(
                f'"{text}" is already the name of a table or view; '
                "give the WITH query another name."
            )
        defined.add(text)
    return frozenset(defined)
