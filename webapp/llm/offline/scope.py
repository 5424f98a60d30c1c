"""Honest scope: what the product can't do (move money, trade, pay, predict), data it
doesn't hold (a credit score, a card's interest rate), and documents it doesn't have, each
answered plainly with what it can do instead, and with no sources."""

from __future__ import annotations

import re

from . import lexicon
from .ask import tickers_in
from .library import Library
from .refusal import VOCABULARY, another_persons, joined, refusal
from .words import STOPWORDS, join_words, stems, words

_SCOPE = lexicon.rules("scope")
_PUBLICATION = re.compile(r"\b(?:publication|pub\.?)\s*(\d+[a-z]?(?:-[a-z])?)\b", re.IGNORECASE)
_SECTION = re.compile(r"\bsection\s+\d|§\s*\d", re.IGNORECASE)
_US_CODE = re.compile(r"\b(?:us|u\.s\.|united states)\s+code\b|\busc\b", re.IGNORECASE)
_DOCUMENT_WORDS = lexicon.words_of("document_kind_words")


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
    move ("higher", "crash", "cut", "be"); not a what-if ("if rates rise ...") or a question
    of what a change would mean for the user ("will a rate cut affect my mortgage?")."""
    phrase = joined(phrase)
    has = lexicon.has_phrase
    if has(phrase, tuple(_FORECAST["unless"])) or not has(phrase, tuple(_FORECAST["future"])):
        return None
    if not (ticker or has(phrase, tuple(_FORECAST["subjects"]))):
        return None
    return _forecast_reply(phrase, ticker) if has(phrase, tuple(_FORECAST["moves"])) else None


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
    for kind, held in _NOT_HELD.items():
        if lexicon.has_phrase(phrase, tuple(held["objects"])):
            return str(held.get("reply") or _REPLIES[kind])
    return None


_SMALL = frozenset({"of", "and", "the", "for", "to", "a", "an", "in", "on", "at"})


def title_case(name: str) -> str:
    """Return a name as a title is written: "bank of america" -> "Bank of America"."""
    return " ".join(
        w if w in _SMALL and i else w[:1].upper() + w[1:] for i, w in enumerate(name.split())
    )


def out_of_scope(text: str, books: Library) -> str | None:
    """Return the plain answer to what the product won't or can't do, or None: a harmful
    request first, then a document it doesn't hold (even when the question also asks for
    data it doesn't hold: "the penalty APR in my card's agreement"), then the rest."""
    return declined(text) or missing_document(text, books) or scope_reply(text)


def _titles(books: Library, keep: str) -> list[str]:
    return sorted(doc.title for doc in books.docs if doc.tool and keep in doc.path)


def missing_document(text: str, books: Library) -> str | None:
    """Say so when the question names a document the library doesn't hold, or asks the US
    Code about a topic none of its sections covers."""
    named = _PUBLICATION.search(text)
    if named:
        number = named[1].upper()
        held = _titles(books, "irs/")
        if not any(title.upper().startswith(f"PUBLICATION {number}:") for title in held):
            return (
                f"I don't have IRS Publication {number} among my documents, so I can't say "
                f"what it says. The IRS publications I have are {join_words(held)}; "
                "irs.gov has every publication."
            )
    if _US_CODE.search(text) and not _SECTION.search(text):
        topic = [w for w in words(text) if w not in STOPWORDS and w not in _DOCUMENT_WORDS]
        wanted = stems(" ".join(topic)) | ({"deduc"} if "deduction" in words(text) else set())
        sections = [k for k, doc in enumerate(books.docs) if doc.tool and "usc/" in doc.path]
        if wanted and not any(wanted <= books.doc_stems[k] for k in sections):
            about = " ".join(w for w in words(text) if w in topic or w == "deduction")
            return (
                f"I don't have the US Code section on the {about} among my documents. The "
                f"sections I have are {join_words(_titles(books, 'usc/'))}; "
                "uscode.house.gov has the whole Code."
            )
    return _named_document(text, books)


_NAMED = [
    (re.compile(str(rule["pattern"]), re.IGNORECASE if rule.get("ignore_case", True) else 0), rule)
    for rule in lexicon.entries("named_document")
]


def _named_document(text: str, books: Library) -> str | None:
    """Say so when the question names a document by title ("Regulation E", "IRS Form 1040",
    "the Fair Credit Reporting Act") that no bundled document is, and offer those that are."""
    for pattern, rule in _NAMED:
        found = pattern.search(text)
        if not found:
            continue
        name = " ".join(found["name"].split())
        path = str(rule["held"]).format(name=name.lower())
        if any(path in doc.path.lower() for doc in books.docs if doc.tool):
            return None
        label = str(rule["label"]).format(NAME=name.upper(), name=name, Name=title_case(name))
        topic = text[: found.start()] + text[found.end() :]
        return _not_bundled(label, books, str(rule["offer"]), topic=topic)
    return _titled_document(text, books)


def _not_bundled(
    label: str, books: Library, offer: str, rule: dict[str, object] | None = None, topic: str = ""
) -> str:
    """Say the document isn't held, and offer the related ones: of its own kind, where the
    rule says one (`same_kind`), else what it says to do `instead`. With the question's
    `topic` ("like-kind exchange rules"), only documents whose titles share a topic word with
    it are related; when none does, none is offered as if it were."""
    offered = _titles(books, offer)
    asked = stems(topic) - stems(" ".join(_DOCUMENT_WORDS | _LEADING))
    if asked and offered:
        offered = [t for t in offered if asked & stems(t)]
        if not offered:
            return (
                f"I don't have {' '.join(label.split())} among my documents, so I can't say what"
                " it says, and none of the documents I have is about that topic."
            )
    same = str((rule or {}).get("same_kind", ""))
    if same:
        offered = [t for t in offered if same in t.lower()]
    related = _related(offered) if offered else str((rule or {}).get("instead", ""))
    return (
        f"I don't have {' '.join(label.split())} among my documents, so I can't say what "
        f"it says. {related}"
    ).rstrip()


def _related(titles: list[str]) -> str:
    if len(titles) == 1:
        return f"The related document I have is {titles[0]}."
    return f"The related documents I have are {join_words(titles)}."


_TITLED = lexicon.entries("titled_document")
_NAME_STARTS = frozenset({"the", "my", "our", "your"})
_LEADING = STOPWORDS | _DOCUMENT_WORDS | lexicon.words_of("request_words")


def _titled_document(text: str, books: Library) -> str | None:
    """A document named by the words before its kind (after the last "the" or "my"): "the
    Fair Debt Collection Practices Act", "my Amex Gold benefits guide"; held when a bundled
    document says the name and kind, or one of the kind's folder is titled with the name's
    words."""
    said = words(text)
    for rule in _TITLED:
        for kind in (str(rule["kind"]), *map(str, rule.get("also", ()))):
            size = len(kind.split())
            at = next((i for i in range(len(said)) if said[i : i + size] == kind.split()), None)
            if not at:
                continue
            before = said[max(0, at - 6) : at]
            starts = [i for i, w in enumerate(before) if w in _NAME_STARTS]
            if starts:  # "the ...", "my ...": the name follows the last of them
                before = before[starts[-1] + 1 :]
            while before and before[0] in _LEADING:
                before = before[1:]
            name = " ".join(before)
            if not name or not stems(name):
                continue
            offer = str(rule["offer"])
            folder = [k for k, doc in enumerate(books.docs) if doc.tool and offer in doc.path]
            # the document of that kind: its title says the name and the kind ("Chase
            # Sapphire Preferred: guide to card benefits" is no cardmember agreement)
            titled = rule.get("titled", False) and any(
                stems(f"{name} {kind}") <= stems(books.docs[k].title) for k in folder
            )
            if titled or books.mentions(f"{name} {kind}"):
                return None
            label = str(rule["label"]).format(Name=title_case(name), kind=kind)
            return _not_bundled(label, books, offer, rule)
    return None
