"""The documents of a follow-up that asks more of what the documents said before: ranked for
the two questions together ("ok and what's the deadline to get it in?" after the Roth IRA's
limit), or those that answered the question before when it points back at them."""

from __future__ import annotations

from . import lexicon
from .ask import GENERIC, understand
from .conversation import split_parts
from .library import DocHit
from .scope import padded
from .task import Context
from .words import STOPWORDS, words

_POINTERS = lexicon.phrases("follow_up", "pronouns")


def ranked_after(text: str, context: Context) -> list[DocHit]:
    """The documents of a follow-up that asks more of what the documents said before ("ok
    and what's the deadline to get it in?" after the Roth IRA's limit): ranked for the two
    questions together, when this one points back or names little of its own."""
    own = set(words(text)) - STOPWORDS - GENERIC
    if not context.earlier or (len(own) > 2 and not lexicon.has_phrase(padded(text), _POINTERS)):
        return []
    earlier = split_parts(context.earlier[-1])[-1]
    if understand(earlier).intents or not context.books.rank(earlier):
        return []  # the question before asked the user's figures, or no document answered it
    return context.books.rank(f"{text} {earlier}")


def documents_after(text: str, context: Context, hits: list[DocHit]) -> list[DocHit]:
    """A follow-up of a documents question that points back at it ("and once I send it, how
    long does the bank get?" after "how long do I have to dispute a charge?"): the documents
    that answered it, ranked for both questions, when its own words find none of them."""
    if not context.first or not context.earlier or len(words(text)) > 16:
        return hits
    if not lexicon.has_phrase(padded(text), _POINTERS):
        return hits
    before = split_parts(context.earlier[-1])[-1]
    earlier = context.books.rank(before)
    docs = {hit.doc for hit in earlier}
    if not earlier or understand(before).intents or (hits and hits[0].doc in docs):
        return hits
    joined = [hit for hit in context.books.rank(f"{before} {text}") if hit.doc in docs]
    return joined or earlier
