"""The conversation around a question: the questions asked before it (the request's history),
the several questions one message may hold, and a follow-up that leaves out what the
previous question said ("What about Citi?"), which inherits it and says what it assumed."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from . import lexicon
from .ask import Question, understand
from .words import STOPWORDS, join_words, words

_OPENERS = lexicon.phrases("follow_up", "openers")
_OTHER = lexicon.phrases("follow_up", "other")
_JOINERS = lexicon.phrases("parts", "joiners")
_EXCEPT = lexicon.phrases("follow_up", "except")
_PRONOUNS = lexicon.phrases("follow_up", "pronouns")
_SPLIT = re.compile(r"(?<=[?!])\s+|;\s+")
_MEASURES = {
    "debts": "what you owe",
    "balances": "the balance",
    "cash": "your cash",
    "utilization": "credit utilization",
    "holdings": "your holdings",
    "net_worth": "net worth",
}
_NOUNS = {
    "credit": "cards",
    "checking": "checking accounts",
    "savings": "savings accounts",
    "property": "your home",
}


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def earlier_questions(messages: list[dict[str, Any]]) -> list[str]:
    """Return the person's earlier questions in this chat, oldest first (not the current one)."""
    asked = [
        _text(m.get("content"))
        for m in messages
        if m.get("role") == "user"
        and not (
            isinstance(m.get("content"), list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"])
        )
    ]
    return [q for q in asked[:-1] if q.strip()]


_HEADINGS = frozenset(str(lexicon.table("parts")["headings"]).split())
_ASKERS = lexicon.phrases("parts", "askers")
_HEADING = re.compile(r"^(?P<head>[^:?!]{1,30}):\s+(?P<rest>\S.*)$", re.DOTALL)
_COMMA = re.compile(r",\s+")
# A clause that sets a condition: "what if I paid off my amex, what would be left" is one.
_IF = re.compile(r" (if|suppose|supposing|once|after|when|unless|assuming|say) ")


def _opens_asking(text: str) -> bool:
    return any(_padded(text).startswith(f" {a} ") for a in _ASKERS)


def _clauses(piece: str) -> list[str]:
    """A piece without its heading ("3 things: ..."), cut at each comma that starts another
    question when the clause before it opened as one ("what's in my wells fargo checking, how
    much do i owe citi"); "if I paid it, what would be left" stays one question."""
    found = _HEADING.match(piece)
    if found and set(words(found["head"])) <= _HEADINGS:
        piece = found["rest"]
    clauses: list[str] = []
    for chunk in _COMMA.split(piece):
        before = clauses[-1] if clauses else ""
        if _opens_asking(chunk) and _opens_asking(before) and not _IF.search(_padded(before)):
            clauses.append(chunk)
        elif clauses:
            clauses[-1] = f"{clauses[-1]}, {chunk}"
        else:
            clauses.append(chunk)
    return clauses


def split_parts(text: str) -> list[str]:
    """Split a message into its questions: after a question mark, at a comma that starts
    another question, or at "and what", "plus what"."""
    parts: list[str] = []
    for piece in (c for p in _SPLIT.split(text.strip()) for c in _clauses(p)):
        lowered = " " + " ".join(words(piece)) + " "
        cut = min((lowered.find(f" {j} ") for j in _JOINERS if f" {j} " in lowered[1:]), default=-1)
        if cut > 0:
            head_words = len(lowered[:cut].split())
            tokens = piece.split()
            # "$7,500" is two words and one token: cut after the tokens holding the head's words
            counted = [len(words(" ".join(tokens[: n + 1]))) for n in range(len(tokens))]
            head = next((n + 1 for n, c in enumerate(counted) if c >= head_words), len(tokens))
            parts += [" ".join(tokens[:head]), " ".join(tokens[head:])]
        else:
            parts.append(piece)
    cleaned = [
        re.sub(r"^(?:and|also|plus)\s+", "", p.strip().rstrip(","), flags=re.IGNORECASE)
        for p in parts
    ]
    return [p for p in cleaned if len(words(p)) >= 1] or [text]


def _padded(text: str) -> str:
    return " " + " ".join(words(text)) + " "


_ASIDES = frozenset(str(lexicon.table("parts")["asides"]).split())
_ELABORATIONS = lexicon.phrases("parts", "elaborations")
_ASKING = lexicon.phrases("parts", "asking")
_LEADS = _ASIDES | {"but", "or", "k", "wait", "also", "then", "now", "lol"}


def asks(part: str) -> bool:
    """Tell whether a part of a message asks something, a question or a request, rather than
    only telling ("been meaning to check it for like a year", "be honest lol")."""
    if part.rstrip().endswith("?"):
        return True
    said = words(part)
    while said and said[0] in _LEADS:
        said = said[1:]
    opening = " ".join(said) + " "
    return any(opening.startswith(f"{a} ") for a in _ASKING)


def with_pointed(text: str, earlier: tuple[str, ...]) -> str:
    """What to rank the documents on: the question, and when it points back at the one
    before it ("what does fdic insurance cover? is there a limit on it", "which one moved
    more"), that one's words too, so that "it" is ranked as what it stands for, not on the
    words around it ("limit" of any page, "moved")."""
    if not earlier or not lexicon.has_phrase(_padded(text), _PRONOUNS):
        return text
    return f"{split_parts(earlier[-1])[-1]} {text}"


_BE = r"(is|isn t|isnt|is not|are|aren t|arent|was|wasn t|wasnt)"
_STATES = re.compile(rf"^ (?!{_BE} )(\S+ ){{1,4}}{_BE} ")


def states(part: str) -> bool:
    """A part that says how things are ("the house isn't really liquid") and asks nothing:
    no question mark, no question word first; it says more about the question before it."""
    lead = _padded(part)
    return (
        not part.rstrip().endswith("?") and not _opens_asking(part) and bool(_STATES.search(lead))
    )


_REMARKS = lexicon.phrases("parts", "remarks")
_MEASURES_ASKED = frozenset(str(lexicon.table("parts")["measures"]).split())


def questions_of(text: str) -> list[str]:
    """Return the message's questions: a part that only says "ok", or that reports what
    someone said ("my loan officer keeps mentioning it"), is dropped, and one that
    elaborates the one before joins it: not a question and opening "Wondering when ...", or
    a question with no topic of its own ("how much?", "is there a cap?"); one that points
    back ("what's in it right now?") stays a question of its own, about what the earlier part
    named."""
    parts = split_parts(text)
    kept: list[str] = []
    for part in parts:
        lead = _padded(part)
        telling = not part.rstrip().endswith("?")
        if kept and telling and lexicon.has_phrase(lead, _REMARKS):
            continue  # "... our loan officer keeps mentioning it": why it's asked, no question
        elaborates = telling and any(lead.startswith(f" {e} ") for e in _ELABORATIONS)
        bare = set(lead.split()) <= STOPWORDS and not lexicon.has_phrase(lead, _PRONOUNS)
        measures = set(lead.split()) - STOPWORDS
        pointing = lexicon.has_phrase(lead, _PRONOUNS)  # "is there a limit on it": its own
        if kept and not bare and not pointing and measures and measures <= _MEASURES_ASKED:
            bare = not understand(part).intents  # "is there a cap?", not "and the limit?"
        if kept and (elaborates or bare):
            kept[-1] = f"{kept[-1]} {part}"
        elif len(parts) == 1 or not set(lead.split()) <= _ASIDES:
            kept.append(part)
    return kept or parts


def standing(text: str) -> Question:
    """Read a question on its own ("my Chase checking?" asks for its balance)."""
    question = understand(text)
    if question.names_account and not question.intents:
        question = replace(question, intents=("balances",))
    return question


# How many of the chat's latest questions a follow-up is read against: a chain of follow-ups
# ("and Citi?", "and the other card?") is resolved from the first of these, so a long chat
# costs a new question what a short one does.
FOLLOW_UP_DEPTH = 8


def previous_question(earlier: list[str] | tuple[str, ...]) -> Question | None:
    """Return the chat's last question as understood, follow-ups resolved along the way
    (from the latest FOLLOW_UP_DEPTH questions)."""
    before: Question | None = None
    for asked in earlier[-FOLLOW_UP_DEPTH:]:
        last = split_parts(asked)[-1]
        found = follow_up(last, before)
        before = found[0] if found else standing(last)
    return before


_SUMMING = lexicon.phrases("follow_up", "summing")


def combined(text: str, earlier: list[str] | tuple[str, ...]) -> tuple[Question, str] | None:
    """ "add them together" after two questions: the accounts both named, taken together."""
    padded = _padded(text)
    if len(earlier) < 2 or not lexicon.has_phrase(padded, _SUMMING) or len(words(text)) > 6:
        return None
    first, last = previous_question(earlier[:-1]), previous_question(earlier)
    if first is None or last is None or not (first.about_data and last.about_data):
        return None
    merged = replace(
        last,
        text=text,
        intents=tuple(dict.fromkeys(first.intents + last.intents)),
        kinds=tuple(dict.fromkeys(first.kinds + last.kinds)),
        names=tuple(dict.fromkeys(first.names + last.names)),
        institutions=tuple(dict.fromkeys(first.institutions + last.institutions)),
        tickers=tuple(dict.fromkeys(first.tickers + last.tickers)),
        extreme=None,
    )
    return merged, "Taking that as the last two questions' accounts together:"


_ALONE = re.compile(r"\s*\b(?:on (?:its|their|it s) own|by (?:itself|themselves)|alone)\b")


def follow_up(text: str, before: Question | None) -> tuple[Question, str] | None:
    """Read a follow-up as the previous question about new entities, with the sentence that
    says what was assumed; None when the question stands on its own."""
    if before is None:
        return None
    text = _ALONE.sub("", text)  # "just the sapphire on its own": the sapphire, not what it owns
    current = understand(text)
    padded = _padded(text)
    pointed = understand("my " + text, own=True) if lexicon.has_phrase(padded, _PRONOUNS) else None
    named = before.names or before.institutions or before.tickers or before.kinds
    # "is my chase savings insured? how much is in it": an account named, if not asked about
    # (a ticker quoted before is one the user may hold: "what's VTI at? how many do I own of it")
    if (
        pointed
        and pointed.intents
        and (before.about_data or before.kinds or before.tickers)
        and named
    ):
        new = current.kinds or current.institutions or current.tickers or current.amounts
        if not new and not pointed.kinds and not pointed.institutions:
            # "what's its credit limit?", "what's that worth?": the new measure, of what the
            # last question named
            shown = join_words(
                list(before.tickers)
                or [n.title() for n in before.institutions or before.names]
                or ["your " + _NOUNS.get(k, k) for k in before.kinds]
            )
            intents = pointed.intents
            if before.tickers and set(intents) <= {"balances", "holdings"}:
                intents = ("holdings",)  # the worth of the shares the last question named
            kept = replace(
                pointed,
                intents=intents,
                kinds=before.kinds,
                names=before.names,
                institutions=before.institutions,
                tickers=before.tickers,
            )
            return kept, f"Taking that as about {shown}, as before:"
    if lexicon.has_phrase(_padded(text), _EXCEPT) and not current.intents and before.about_data:
        # "and without the house?": the same question, leaving that out
        left = understand("my " + text, own=True)
        if not (left.excluded_kinds or left.excluded):
            return None
        measure = join_words([_MEASURES.get(i, i) for i in before.intents if i in _MEASURES])
        gone = join_words([_NOUNS.get(k, k) for k in left.excluded_kinds] + list(left.excluded))
        kept = replace(
            before, text=text, excluded_kinds=left.excluded_kinds, excluded=left.excluded
        )
        return kept, f"Taking that as the same question, {measure}, leaving out {gone}:"
    opens = any(padded.startswith(f" {o} ") for o in _OPENERS)
    if not (opens or len(words(text)) <= 4):
        return None
    if current.tickers and current.intents == ("quote",) and "holdings" in before.intents:
        # "How many shares of VTI do I have?" then "and Apple?": the holding, not a quote
        held = replace(before, text=text, tickers=current.tickers)
        tickers = join_words(list(current.tickers))
        return held, f"Taking that as the same question, your holdings, for {tickers}:"
    if pointed and pointed.intents and before.about_data:
        current = pointed
    if current.intents:
        return None
    if not before.about_data:
        return None
    other = lexicon.has_phrase(padded, _OTHER)
    entities = understand("my " + text, own=True)
    measures = set(entities.intents) & set(_MEASURES)
    if measures and not (entities.kinds or entities.institutions):
        # "how about just cash?": a measure of its own, over the user's accounts
        asked = join_words([_MEASURES[i] for i in entities.intents if i in _MEASURES])
        return replace(entities, text=text, names=()), f"Taking that as a question about {asked}:"
    if not (entities.kinds or entities.names or entities.institutions or other):
        return None
    kinds = entities.kinds or before.kinds or (("credit",) if other else ())
    inherited = replace(
        before,
        text=text,
        kinds=kinds,
        names=() if other else entities.names,
        institutions=() if other else entities.institutions,
        excluded=before.names if other else (),
        extreme=None,
        amounts=(),
    )
    measure = join_words([_MEASURES.get(i, i) for i in before.intents if i in _MEASURES])
    if other:
        about = f"your other {join_words([_NOUNS.get(k, k) for k in kinds]) or 'accounts'}"
    else:
        named = entities.institutions or entities.names
        about = join_words([n.title() if n.islower() else n for n in named]) or (
            "your " + join_words([_NOUNS.get(k, k) for k in kinds])
        )
    return inherited, f"Taking that as the same question, {measure}, for {about}:"
