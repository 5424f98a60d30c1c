"""Honest scope: what the product can't do (move money, trade, pay, predict), data it
doesn't hold (a credit score, a card's interest rate), and documents it doesn't have, each
answered plainly with what it can do instead, and with no sources."""

from __future__ import annotations

import functools
import re

from . import lexicon
from .ask import tickers_in
from .library import Library
from .missing_documents import (
    LEADING,
    NAMED,
    PUBLICATION,
    missing_document,
    named_documents,
    named_held,
    named_label,
    publication_held,
    title_case,
)
from .own_documents import own_document
from .refusal import VOCABULARY, another_persons, joined, refusal
from .words import STOPWORDS, plural, shared_heads, stem, words

# What other modules read here of the documents not held (`missing_documents.py`).
__all__ = [
    "LEADING",
    "NAMED",
    "PUBLICATION",
    "missing_document",
    "named_documents",
    "named_held",
    "named_label",
    "publication_held",
    "title_case",
    "declined",
    "held_of_own",
    "out_of_scope",
    "padded",
    "scope_reply",
    "SCOPE_WORDS",
]

_SCOPE = lexicon.rules("scope")


# Words the question model knows as no person: "chase's accounts" are the user's own.
_NAMES = (
    frozenset(
        w
        for text in (
            *lexicon.phrases("institutions"),
            *lexicon.table("aliases"),
            *lexicon.table("companies"),
            *(phrase for phrase, _ in lexicon.pairs("kind_phrases")),
        )
        for w in text.split()
    )
    | lexicon.words_of("generic")
    | STOPWORDS
)


def declined(text: str) -> str | None:
    """The plain decline of a harmful request or of another person's accounts, or None."""
    return refusal(padded(text)) or another_persons(text, _NAMES)


def padded(text: str) -> str:
    """Return the question's words single-spaced and padded with spaces."""
    return " " + " ".join(words(text.replace("&", " and "))) + " "


_REPLIES = {rule.kind: rule.reply for rule in _SCOPE}
_ACTIONS = lexicon.table("actions")
_POLITE = tuple(_ACTIONS.pop("polite")["openers"])
_NOT_HELD = lexicon.table("not_held")
_HOW_TO = re.compile(str(_NOT_HELD.pop("how_to")))
_OWN = frozenset({"my", "our", "i", "im", "ive", "me"})
_CHOICE = tuple(_ACTIONS.pop("choice")["words"])
_VALUE_WORDS = re.compile(str(_NOT_HELD.pop("asks")))
_FORECAST = lexicon.table("forecast")
_PREMISE = re.compile(str(_FORECAST["premise"]))
_CLAUSE = re.compile(r"([.!?;,:()\u2014\u2013]+|\s-+\s)")
_ASKING = frozenset(lexicon.phrases("actions", "polite", "asking"))


def _vocabulary() -> frozenset[str]:
    """Every word the scope rules read, so that the typo reader never "corrects" one."""
    texts = [rule.pattern.pattern for rule in _SCOPE] + [str(_HOW_TO), str(_VALUE_WORDS)]
    texts += [
        str(v)
        for action in _ACTIONS.values()
        for k in ("verbs", "needs", "when")
        for v in action.get(k, ())
    ]
    texts += [str(o) for held in _NOT_HELD.values() for o in held["objects"]]
    texts += [str(w) for key in ("future", "subjects", "moves") for w in _FORECAST[key]]
    texts.append(_PREMISE.pattern)
    return frozenset(w for text in texts for w in re.findall(r"[a-z]{3,}", text)) | VOCABULARY


SCOPE_WORDS = _vocabulary()


def scope_reply(text: str) -> str | None:
    """Return the plain reply to a request the product can't serve, or None."""
    phrase = padded(text)
    said = declined(text)
    if said:
        return said
    ticker = bool(tickers_in(text))
    whether = text.rstrip().endswith("?") and not lexicon.has_phrase(phrase, _ASKING)
    for rule in _SCOPE:
        if whether and _ACTIONS.get(rule.kind, {}).get("weighed"):
            continue  # "sell my apple shares?": whether to, not a request (see below)
        if rule.pattern.search(phrase) and _acts_on(rule.kind, phrase, ticker):
            return _forecast_reply(phrase, ticker) if rule.kind == "forecast" else rule.reply
    pieces = _CLAUSE.split(text) + [""]
    acted = next(
        (
            r
            for c, end in zip(pieces[::2], pieces[1::2], strict=True)
            if c.strip() and (r := _requested_action(padded(c), ticker, phrase, "?" in end))
        ),
        None,
    )
    return acted or _forecast(phrase, ticker) or _not_held(padded(_asked(text)))


def _asked(text: str) -> str:
    """The sentences that ask, when others only tell what happened ("someone got hold of my
    card number. what's the most I can be made to pay?": no card number is asked for)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    return " ".join(asking) if asking and len(asking) < len(sentences) else text


def _forecast(phrase: str, ticker: bool) -> str | None:
    """A question about where a market, price or rate will be: said to be unknowable.

    Read by meaning: a future ("will", "going to", "headed", "by christmas") of something
    markets set (a ticker, the stock market, rates, inflation, a currency) and a level or a
    move ("higher", "crash", "cut", "be"), or a choice timed by a move foreseen ("sell before
    it drops"); not a what-if ("if rates rise ...") or a question of what a change would mean
    for the user ("will a rate cut affect my mortgage?")."""
    phrase = joined(phrase)
    has = lexicon.has_phrase
    if has(phrase, tuple(_FORECAST["unless"])):
        return None
    if _PREMISE.search(phrase):
        return _forecast_reply(phrase, ticker)
    if not has(phrase, tuple(_FORECAST["future"])):
        return None
    if not (ticker or has(phrase, tuple(_FORECAST["subjects"]))):
        return None
    return _forecast_reply(phrase, ticker) if _moves(phrase) else None


_MOVES = tuple(_FORECAST["moves"])
_MOVE_STEMS = frozenset(stem(m) for m in _MOVES if len(m) >= 4 and " " not in m)


def _moves(phrase: str) -> bool:
    """Tell whether the phrase says a move or a level, in any ending of a move's verb ("keep
    climbing", "rising", "crashed" as "climb", "rise", "crash")."""
    if lexicon.has_phrase(phrase, _MOVES):
        return True
    return any(stem(w) in _MOVE_STEMS for w in phrase.split() if len(w) >= 5)


def _forecast_reply(phrase: str, ticker: bool) -> str:
    """The forecast's reply: of rates, inflation or a currency, no market price to offer."""
    if not ticker and lexicon.has_phrase(phrase, tuple(_FORECAST["economy"])):
        return str(_FORECAST["economy_reply"])
    return _REPLIES["forecast"]


def _acts_on(kind: str, phrase: str, ticker: bool) -> bool:
    """Tell whether a request of an action's kind is one: not a choice to weigh ("pay off my
    amex first or my citi?"), and on something that kind acts on (shares, not a house)."""
    if kind not in _ACTIONS:
        return True
    if lexicon.has_phrase(phrase, _CHOICE):
        return False
    if lexicon.has_phrase(phrase, tuple(_ACTIONS[kind].get("unless", ()))):
        return False  # "open the Truth in Savings rules": a document, not an account
    needs = tuple(_ACTIONS[kind].get("needs", ()))
    return ticker or not needs or lexicon.has_phrase(phrase, needs)


def _requested_action(
    phrase: str, ticker: bool, whole: str = "", question: bool = False
) -> str | None:
    """A request to act, read by its verb after any polite opener ("pls buy", "can you
    pay off my amex"), with what it acts on: the reply of that kind of action. A bare verb
    of a choice (`weighed`: buy, sell, pay) asked as a question ("buy more vti?", "pay it off
    now?") asks whether to, unless it asks the engine ("can you ...?", "please")."""
    rest = phrase
    asking = lexicon.has_phrase(phrase, _ASKING)
    while opener := next((o for o in _POLITE if rest.startswith(f" {o} ")), None):
        rest = rest[len(opener) + 1 :]
    weighed = question and not asking
    for kind, action in _ACTIONS.items():
        verb = next((v for v in action["verbs"] if rest.startswith(f" {v} ")), None)
        if "when" in action and not lexicon.has_phrase(whole, tuple(action["when"])):
            continue  # "lost": said anywhere in the message ("I left my Amex ... lock it")
        if weighed and action.get("weighed"):
            continue
        if verb and _acts_on(kind, rest[len(verb) + 1 :], ticker):
            return str(action.get("reply") or _REPLIES[str(action.get("like", kind))])
    return None


def _not_held(phrase: str) -> str | None:
    """A question about the user's own figure that the linked data doesn't hold (a credit
    score, an APR, a due date), unless it asks how to change or understand one."""
    if not _OWN & set(phrase.split()) or not _VALUE_WORDS.search(phrase):
        return None
    if _HOW_TO.search(phrase):
        return None
    phrase = shared_heads(phrase)
    for kind, held in _NOT_HELD.items():
        if lexicon.has_phrase(phrase, _OBJECTS[kind]):
            return str(held.get("reply") or _REPLIES[kind])
    return None


# What data is not held, each named in one or many ("the routing numbers").
_OBJECTS = {
    kind: tuple(o for obj in held["objects"] for o in (obj, plural(obj)))
    for kind, held in _NOT_HELD.items()
}


def held_of_own(part: str) -> str | None:
    """The reply of data not held to a figure asked of no one ("what's the penalty APR?")
    when it is read as the user's own, as after a question about their own card; or None."""
    if _OWN & set(words(part)):
        return None
    return _not_held(padded(f"my {_asked(part)}"))


# A message is read by several readers, each asking first whether it is out of scope: the
# answer, a reply or None, is kept (the library is built once and never changes).
@functools.lru_cache(maxsize=1024)
def out_of_scope(text: str, books: Library) -> str | None:
    """Return the plain answer to what the product won't or can't do, or None: a harmful
    request first, then a document it doesn't hold (even when the question also asks for
    data it doesn't hold: "the penalty APR in my card's agreement"), then the rest."""
    said = declined(text)
    if said:
        return said
    said = own_document(text, books) or missing_document(text, books)  # "my lease": their own
    if said:  # "pull up my card's agreement. what's the penalty APR?": its figure isn't held
        sentences = re.split(r"(?<=[.!?])\s+", text.strip())
        held = held_of_own(sentences[-1]) if len(sentences) > 1 else None
        return f"{said} {held}" if held and held not in said else said
    return scope_reply(text)
