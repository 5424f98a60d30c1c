"""Tolerant reading: a word the engine doesn't know is read as the known word it is a typo
of ("wels fargo acount" is "wells fargo account"), through RapidFuzz's edit-distance ratio.

Only words found nowhere (not in the documents, the lexicon, the scope rules or the
stopwords) are candidates, and only for the words a question about money uses: institutions,
kinds of account, measures, operations, company names and the documents' titles, so a real
word is never "corrected".
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from . import lexicon
from .library import library
from .scope import SCOPE_WORDS
from .spending_ask import CATEGORY_WORDS
from .tally import TALLY_WORDS
from .words import STOPWORDS, singular, words

MIN_RATIO = 84.0  # of 100: "wels" -> "wells" is 88.9, "acount" -> "account" 92.3
MIN_LENGTH = 4
_WORD = re.compile(r"[A-Za-z]+")
_TYPOS: dict[str, str] = lexicon.table("typos")


@lru_cache(maxsize=1)
def _targets() -> tuple[str, ...]:
    """The words a typo may stand for: the lexicon's and the documents' titles'."""
    books = library()
    found: set[str] = set(books.title_words)
    # The documents' longer words: "dispuet" is "dispute" (never a real word: see `_known`).
    found.update(w for w in books.vocabulary if len(w) >= 6 and w.isalpha())
    for key in ("institutions", "price_phrases"):
        found.update(w for phrase in lexicon.phrases(key) for w in words(phrase))
    found.update(w for cue, _ in lexicon.pairs("kind_phrases") for w in words(cue))
    found.update(lexicon.words_of("generic"))
    found.update(CATEGORY_WORDS | TALLY_WORDS)
    found.update(lexicon.table("aliases"))
    found.update(w for name in lexicon.table("companies") for w in words(name))
    for cues in lexicon.table("cues").values():
        found.update(w for cue in cues for w in words(cue))
    for ops in lexicon.table("operations").values():
        found.update(w for op in ops for w in words(op))
    return tuple(sorted(w for w in found if len(w) >= MIN_LENGTH - 1 and w.isalpha()))


@lru_cache(maxsize=1)
def _known() -> frozenset[str]:
    advice = lexicon.table("advice")  # the advice rules' words, and plain words, are no typos
    said = [*advice["markers"], *advice["debt_words"], str(advice["plain"])]
    said += [w for rule in advice["rule"] for group in rule.get("groups", ()) for w in group]
    plain = frozenset(w for phrase in said for w in words(phrase))
    return (
        library().vocabulary
        | STOPWORDS
        | frozenset(_targets())
        | lexicon.words_of("small_talk")
        | plain
        | SCOPE_WORDS
    )


def _may_stand_for(word: str, target: str) -> bool:
    """A short target (an abbreviation: "boa", "ira") is a typo's only when the word is it with
    a letter doubled ("irra"): "boat" is a word of its own, not "boa" mistyped."""
    if len(target) >= MIN_LENGTH:
        return True
    return any(
        word[:i] + word[i + 1 :] == target for i in range(1, len(word)) if word[i] == word[i - 1]
    )


_ENDINGS = ("ing", "ed", "er")


def _inflected(word: str, known: frozenset[str]) -> bool:
    """Tell whether a word is a known word with "-ing", "-ed" or "-er" added: "taking"
    (take), "stopped" (stop), "officer" (office)."""
    for ending in _ENDINGS:
        base = word.removesuffix(ending)
        if base == word or len(base) < 3:
            continue
        doubled = base[:-1] if len(base) > 3 and base[-1] == base[-2] else ""
        if base in known or base + "e" in known or doubled in known:
            return True
    return False


# British spellings and the American ones the lexicon and documents use ("utilisation",
# "summarised", "paycheque"), ending by ending: a word is read as its American spelling when
# that is a known word and the British one is not a word of the documents.
_SPELLINGS = (
    ("isation", "ization"),
    ("isations", "izations"),
    ("ise", "ize"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("ising", "izing"),
    ("que", "ck"),
    ("ques", "cks"),
    ("tre", "ter"),
    ("tres", "ters"),
)


def american(word: str) -> str:
    """Return a British spelling's American form when that is a known word, else `word`."""
    for british, us in _SPELLINGS:
        if len(word) > len(british) + 2 and word.endswith(british):
            spelled = word.removesuffix(british) + us
            if spelled in _known() and word not in library().vocabulary:
                return spelled
    return word


@lru_cache(maxsize=4096)  # a chat's earlier questions are mended again at every turn
def correct_word(word: str) -> str:
    """Return the known word `word` is a typo of, or `word` itself."""
    lowered = word.lower()
    if lowered in _TYPOS:
        return _TYPOS[lowered]
    if (spelled := american(lowered)) != lowered:
        return spelled
    known = _known()
    if len(lowered) < MIN_LENGTH or lowered in known or singular(lowered) in known:
        return word
    if lowered + "s" in known or lowered + "es" in known:
        return word  # "double" is no typo of "doubles": a word whose plural is known is known
    if _inflected(lowered, known):
        return word  # "taking" is no typo of "tracking": "take" is known
    found = process.extractOne(
        lowered,
        [t for t in _targets() if t[0] == lowered[0] and _may_stand_for(lowered, t)],
        scorer=fuzz.ratio,
        score_cutoff=MIN_RATIO,
    )
    if found:
        return str(found[0])
    # Two letters swapped ("wroth" for "worth") cost a short word more ratio than one typo.
    swapped = [
        t
        for t in _targets()
        if len(t) == len(lowered) and sorted(t) == sorted(lowered) and OSA.distance(t, lowered) == 1
    ]
    return swapped[0] if swapped else word


def correct(text: str) -> str:
    """Return `text` with each unknown word read as the known word it is a typo of."""
    return _WORD.sub(lambda m: correct_word(m[0]), text)
