"""What a question leaves out ("cash outside of my savings", "net worth if you don't count
the house"): the words that cut what is asked from what is left out, and a leading clause
that leaves something out, put after the question it qualifies."""

from __future__ import annotations

import re

from . import lexicon
from .words import words

_EXCLUDING = lexicon.phrases("excluding")
# "leave" and "strip" leave something out only with their particle: "leave the house out of
# it", "strip the house out", not "leave my brokerage alone to grow".
_LEAVE_OUT = frozenset({"leave", "leaving", "strip", "stripping"})
_OUT = re.compile(r" (out|aside|off)( |$)")


def excluding(phrase: str) -> tuple[str, str]:
    """Split a padded phrase at the words that leave something out ("outside of", "without",
    "except"): what is asked about, and what is left out (empty when nothing is)."""
    cuts = [
        (at, w)
        for w in _EXCLUDING
        if (at := phrase.find(f" {w} ")) >= 0
        and (w not in _LEAVE_OUT or _OUT.search(phrase, at + len(w) + 1))
    ]
    if not cuts:
        return phrase, ""
    at, word = min(cuts)
    # "... if you don't count the house": the condition is the leaving out, not a rule's "if"
    head = _CONDITION.sub(" ", phrase[: at + 1])
    return head, " " + phrase[at + len(word) + 2 :]


_CONDITION = re.compile(r" (if|when|once) (you|we|i|u) (\S+ )?$")


_CLAUSE = re.compile(
    r"^(?P<clause>[^,;:\u2013\u2014]+?)\s*(?:[,;:\u2013\u2014]|\s-+)\s+(?P<rest>\S.*)$"
)


def exclusion_last(text: str) -> str:
    """Put a leading clause that leaves something out after the question it qualifies:
    "Not counting the house, which account holds the most?" -> "which account holds the most
    not counting the house" (what is left out runs to the end of the question)."""
    found = _CLAUSE.match(text.strip())
    clause = " " + " ".join(words(found["clause"])) + " " if found else ""
    if not found or not any(clause.startswith(f" {w} ") for w in _EXCLUDING):
        return text
    return f"{found['rest'].rstrip(' ?.!')} {found['clause']}"
