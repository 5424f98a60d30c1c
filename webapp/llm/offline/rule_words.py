"""Words that make a question one about rules and documents, even when it says "my": a word of
a rule ("charges I didn't make" is unauthorized use), what another party must do, or what a
card's rules make the user pay for charges."""

from __future__ import annotations

import re

from . import lexicon
from .words import as_documents_say, stem

# Words (as stems) that make a question about rules and documents, even when it says "my".
_DOCUMENT_STEMS = frozenset(stem(w) for w in lexicon.phrases("document_words"))
_OBLIGATION = re.compile(str(lexicon.table("implied_own")["obligation"]))
_CARD_RULES = frozenset(stem(w) for w in lexicon.words_of("card_rules"))


def rule_phrase(phrase: str) -> bool:
    """Tell a padded phrase asking a rule: a word of one ("charges I didn't make" is
    unauthorized use), or what another party must do."""
    said = as_documents_say(phrase).split()
    return any(stem(w) in _DOCUMENT_STEMS for w in said) or bool(_OBLIGATION.search(phrase))


def card_rule(phrase: str) -> bool:
    """Tell a question about what a card's rules make the user pay for charges ("am I on the
    hook for purchases a thief made?"), which no transaction answers."""
    return any(stem(w) in _CARD_RULES for w in as_documents_say(phrase).split())
