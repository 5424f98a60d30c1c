"""The offline engine's words, read once from `lexicon.toml`: the names, kinds, measures and
operations a question may use, and the replies for what the product can't do."""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DATA: dict[str, Any] = tomllib.loads(
    Path(__file__).with_name("lexicon.toml").read_text(encoding="utf-8")
)


def words_of(key: str) -> frozenset[str]:
    """Return a whitespace-separated word list of the lexicon as a set."""
    return frozenset(str(_DATA[key]).split())


def phrases(*keys: str) -> tuple[str, ...]:
    """Return a list of phrases of the lexicon (`"open", "afford"`: a list in a table)."""
    value: Any = _DATA
    for key in keys:
        value = value[key]
    return tuple(str(item) for item in value)


def pairs(key: str) -> tuple[tuple[str, str], ...]:
    """Return a list of two-item lists of the lexicon as pairs."""
    return tuple((str(a), str(b)) for a, b in _DATA[key])


def table(key: str) -> dict[str, Any]:
    """Return one table of the lexicon."""
    return dict(_DATA[key])


@dataclass(frozen=True, slots=True)
class Rule:
    """A pattern over a question's padded words and the plain reply it gets."""

    kind: str
    pattern: re.Pattern[str]
    reply: str
    needs: str = ""


def rules(key: str) -> tuple[Rule, ...]:
    """Return the lexicon's rules of one kind (`scope`, `uncovered`)."""
    return tuple(
        Rule(
            str(item.get("kind", key)),
            re.compile(str(item["pattern"])),
            str(item["reply"]),
            str(item.get("needs", "")),
        )
        for item in _DATA[key]
    )


def has_phrase(padded: str, candidates: tuple[str, ...] | frozenset[str]) -> bool:
    """Tell whether a padded phrase (" how am i doing ") holds any of the candidates."""
    return bool(candidates) and _any_of(candidates).search(padded) is not None


@functools.lru_cache(maxsize=1024)
def _any_of(candidates: tuple[str, ...] | frozenset[str]) -> re.Pattern[str]:
    # One scan in C for all of them, each spaced as `has_phrase` looks for it (a list of
    # hundreds was hundreds of substring tests, each built anew).
    return re.compile("|".join(re.escape(f" {c} ") for c in candidates))


def entries(key: str) -> tuple[dict[str, Any], ...]:
    """Return an array of tables of the lexicon (`[[named_document]]`)."""
    return tuple(dict(item) for item in _DATA[key])
