"""Advice grounded in a bundled document and the user's own figures, read by meaning.

A question is read for what it is about (a topic of `guidance.toml`: deposit insurance, IRA
and 401(k) limits, I bonds, a mortgage, PMI, selling a home, credit scores, charitable
gifts, Social Security), which bundled page answers it (the topic's page), and which of the
user's figures bear on it (their bank deposits, the account the money would come from, their
paychecks, the home's value, their cards). Only a question about the user's own that speaks
of one of those figures is answered here: "what's the 2025 Roth IRA limit?" is a document
question, "could I max a Roth from my savings?" is this. The answer quotes the page's rule,
sets the user's figures against it (each cited to its rows, transactions included), shows
the arithmetic, and says what it can't know. Each topic's arithmetic is `guidance_rules.py`'s.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from datetime import date

from ...tool_registry import EXECUTE_PYTHON, EXECUTE_SQL, SEARCH_WEB
from . import lexicon
from .ask import Question, understand
from .bills import bills_queries
from .charges import charges_query, payee_words
from .cite import Block, Result
from .figures import Row, rows_of
from .guidance_figure import DATA, FIGURES, money_said, stemmed, stems
from .guidance_page import Page
from .library import DocHit, library
from .plan import ACCOUNT_COLUMNS, KIND_FILTERS, ToolCall, article_code, holding_query
from .scope import padded
from .spending_ask import ROW_COLUMNS
from .words import as_documents_say, words

# The user's paychecks and mortgage payments: their latest rows, each cited to its account.
FLOWS = {
    "pay": f"SELECT {ROW_COLUMNS} FROM transaction_details WHERE category = 'INCOME'"
    " ORDER BY date DESC LIMIT 8",
    "mortgage": f"SELECT {ROW_COLUMNS} FROM transaction_details"
    " WHERE subcategory = 'LOAN_PAYMENTS_MORTGAGE_PAYMENT' ORDER BY date DESC LIMIT 3",
    "housing": f"SELECT {ROW_COLUMNS} FROM transaction_details WHERE subcategory IN"
    " ('LOAN_PAYMENTS_MORTGAGE_PAYMENT', 'RENT_AND_UTILITIES_RENT') ORDER BY date DESC LIMIT 6",
}


_POINTING = lexicon.phrases("follow_up", "pronouns")
# A rule of thumb asked ("what's a good ...", "a healthy ...", "what should it be under?").
_THUMB = re.compile(
    r"\b(?:good|healthy|health|ideal|recommended|reasonable|normal|typical|safe|acceptable|optimal"
    r"|rule of thumb|aim for|target|should (?:i|you|it|one) (?:keep|be|aim|have))\b"
)
_BORN = re.compile(r"\bborn (in )?(19|20)\d\d\b")
# A rule's bound asked of no account ("any limit?", "is there a cap?"): the rule's own.
_BOUNDS = stems(["limit", "limits", "cap", "caps", "maximum", "max", "ceiling", "deadline"])


def _pages(page: str | list[str]) -> tuple[str, ...]:
    return (page,) if isinstance(page, str) else tuple(map(str, page))


@dataclass(frozen=True, slots=True)
class Topic:
    """What a question may be about, the page whose rule answers it, and what bears on it."""

    name: str
    about: tuple[tuple[tuple[str, ...], ...], ...]  # ways of naming it: groups of stems
    page: str  # the page it answers from: of `pages`, the one ranked best for the question
    rule: str
    noun: str
    nouns: tuple[tuple[str, str], ...]
    limit: str
    quotes: tuple[str, ...]
    figures: tuple[str, ...]
    unknown: str = ""  # what the answer can't know, said after the quotes
    general: bool = False  # yields to any other topic the question names
    displaces: tuple[str, ...] = ()  # topics it answers instead of, when both are named
    pick: bool = False  # quote only the sentences whose words the question says, if any
    card: str = ""  # the card whose benefits the page states (its name's word)
    pages: tuple[str, ...] = ()  # the pages that state its rule, the usual one first
    unless: tuple[str, ...] = ()  # stemmed phrases that say the question is another's
    uses: tuple[str, ...] = ()  # figures its rule needs even when the question only names them
    alone: bool = False  # answers a question of one's own that names none of the figures
    thumb: bool = False  # a rule of thumb asked of no one ("a good utilization") is the user's

    def noun_for(self, question: Question) -> str:
        """How the answer names what the money goes into, in the question's own words."""
        said = set(words(question.text))
        return next((noun for word, noun in self.nouns if word in said), self.noun)

    def named_in(self, said: str) -> bool:
        """Tell whether a stemmed phrase names this topic (every group of one way), and says
        none of the phrases that make it another topic's ("could I put ...": a plan, not a
        contribution made)."""
        if lexicon.has_phrase(said, self.unless):
            return False
        return any(all(lexicon.has_phrase(said, g) for g in way) for way in self.about)


TOPICS = tuple(
    Topic(
        str(t["name"]),
        tuple(tuple(stems(group.split("|")) for group in way.split(" + ")) for way in t["about"]),
        _pages(t["page"])[0],
        str(t["rule"]),
        str(t.get("noun", "")),
        tuple((str(k), str(v)) for k, v in t.get("nouns", {}).items()),
        str(t.get("limit", "")),
        tuple(map(str, t.get("quotes", ()))),
        tuple(map(str, t["figures"])),
        str(t.get("unknown", "")),
        bool(t.get("general", False)),
        tuple(map(str, t.get("displaces", ()))),
        bool(t.get("pick", False)),
        str(t.get("card", "")),
        _pages(t["page"]),
        stems(list(t.get("unless", ()))),
        tuple(map(str, t.get("uses", ()))),
        bool(t.get("alone", False)),
        bool(t.get("thumb", False)),
    )
    for t in DATA["topic"]
)


def topics_of(text: str) -> list[tuple[Topic, tuple[str, ...]]]:
    """Return the topics a question is about that speak of the user's own figures, each with
    the figures its answer needs (none, when it only names them: the card a purchase went
    on). A question that speaks of none of them is not for this module."""
    question = understand(text)
    own = question.own or _BORN.search(text.lower())  # "born in 1966": the asker's year
    thumb = _THUMB.search(text.lower()) is not None  # "what's a good utilization?"
    if not (own or thumb):
        return []
    said = stemmed(text)
    read = stemmed(as_documents_say(text))  # "a charge I don't remember making": unauthorized
    found = []
    named = [topic for topic in TOPICS if topic.named_in(said) or topic.named_in(read)]
    for topic in named:
        if not own and not topic.thumb:
            continue  # a rule of thumb asked of no one: only of a figure the user has
        readings = {f: FIGURES[f].reading(said, question) for f in topic.figures}
        if not (any(readings.values()) or topic.alone):
            continue  # it speaks of none of the user's figures: the documents answer it
        # The figures its answer states and cites: those the question needs, and those only
        # named that the topic's rule needs all the same ("the refund": whether it is back).
        bearing = tuple(f for f, r in readings.items() if r == "needed" or (r and f in topic.uses))
        # of the pages that state its rule, the one that answers this question
        found.append((replace(topic, page=library().best_of(text, topic.pages)), bearing))
    # A topic named displaces another even when none of the user's figures bears on it:
    # "can I take money out of my Roth for a first home?" asks no contribution limit.
    displaced = {name for topic in named for name in topic.displaces}
    found = [(topic, bearing) for topic, bearing in found if topic.name not in displaced]
    specific = [(topic, bearing) for topic, bearing in found if not topic.general]
    return specific or found


@dataclass(frozen=True, slots=True)
class Case:
    """One topic of a question, with what the tools returned for it."""

    question: Question
    topic: Topic
    bearing: tuple[str, ...]
    accounts: list[Row]
    flows: list[Row]
    page: Page
    holdings: tuple[Row, ...] = ()  # the holdings of the tickers it names
    charges: tuple[Row, ...] = ()  # the card rows of a payee it names

    def unread(self) -> list[Block]:
        """What to say when the page didn't come back to answer from."""
        return [(f"I couldn't read the page on {self.topic.name} to answer from its rule.", [])]

    def quote(self, *keys: str) -> list[Block]:
        """The page's sentences holding `keys`, in the page's order, each cited."""
        said = [s for s in (self.page.sentence(k) for k in keys) if s is not None]
        return [(text + " ", citations) for text, citations in dict(said).items()]


@dataclass(frozen=True)
class Guided:
    """A question answered from a topic's page and the user's figures that bear on it."""

    question: Question
    topics: tuple[tuple[Topic, tuple[str, ...]], ...]
    note: str = ""  # what a follow-up assumed it asks
    today: date | None = None  # the day "last month" counts from (the day's date if None)

    def _bearing(self) -> set[str]:
        return {f for _, figures in self.topics for f in figures}

    def covers(self, part: str) -> bool:
        """Tell whether a part of the message belongs to this question: it asks nothing of
        the user's figures, names the topic, points back at it ("how much would that leave
        me?"), names a kind of account a bearing figure reads ("my mortgage") or speaks of such a
        figure itself ("could I handle 10% of each paycheck?"), or asks the rule's bound of no
        account of theirs ("any limit?")."""
        question = understand(part)
        said = stemmed(part)
        if not (question.kinds or question.institutions) and lexicon.has_phrase(said, _BOUNDS):
            return True
        kinds = {k for f in self._bearing() for k in FIGURES[f].kinds}
        if question.intents:  # "whats my amex balance?": a bank named asks its own figure
            question = replace(question, institutions=())
        return (
            not question.about_data
            or any(topic.named_in(said) for topic, _ in self.topics)
            or lexicon.has_phrase(padded(part), _POINTING)
            or bool(kinds & set(question.kinds))
            or any(FIGURES[f].spoken_of(said, question) for f in self._bearing())
        )

    def calls(self) -> list[ToolCall]:
        bearing = self._bearing()
        calls = []
        query = accounts_query(self.question, bearing)
        if query:
            calls.append(ToolCall(EXECUTE_SQL, {"query": query}))
        if "holdings" in bearing and self.question.tickers:
            calls.append(ToolCall(EXECUTE_SQL, {"query": holding_query(self.question)}))
        flows = {FIGURES[f].flows for f in bearing} - {""}
        calls += [ToolCall(EXECUTE_SQL, {"query": q}) for f, q in FLOWS.items() if f in flows]
        payees = payee_words(self.question.text) if "charge" in bearing else ()
        if payees:  # "the hulu charge": that payee's rows on the user's cards
            today = self.today or date.today()
            calls.append(ToolCall(EXECUTE_SQL, {"query": charges_query(payees, today)}))
        if "spent" in flows:  # last month's spending by category (`bills.py`)
            spent = bills_queries(self.today or date.today())[1]
            calls.append(ToolCall(EXECUTE_SQL, {"query": spent}))
        titles = list(dict.fromkeys(topic.page for topic, _ in self.topics))
        books = library()
        # A topic's page may be a corpus document (a regulation, a guide): its reader reads it.
        read = [d for d in books.docs if d.tool and d.title in titles]
        calls += [ToolCall(d.tool, {"path": d.path}) for d in read if d.tool]
        titles = [t for t in titles if t not in {d.title for d in read}]
        if not titles:
            return calls
        pages = [
            DocHit(d, 0.0, 1.0, ()) for d in books.docs if d.tool is None and d.title in titles
        ]
        query = books.web_query(self.question.text, pages) if len(pages) == len(titles) else None
        if query is not None:  # the article search finds these pages and no other
            return [*calls, ToolCall(SEARCH_WEB, {"query": query})]
        return [*calls, ToolCall(EXECUTE_PYTHON, {"code": article_code(titles)})]

    def write(self, results: list[Result]) -> list[Block]:
        from .guidance_rules import RULES  # the writers use this module's Case

        rows = rows_of(results)
        accounts = [r for r in rows if not (r.get("transaction_id") or r.get("ticker"))]
        flows = [r for r in rows if r.get("transaction_id") and not r.get("named_payee")]
        charges = tuple(r for r in rows if r.get("named_payee"))
        holdings = tuple(r for r in rows if r.get("ticker"))
        blocks: list[Block] = [(self.note, [])] if self.note else []
        for number, (topic, bearing) in enumerate(self.topics):
            page = Page(results, topic.page)
            case = Case(self.question, topic, bearing, accounts, flows, page, holdings, charges)
            if number:
                blocks.append(("\n\n", []))
            blocks += RULES[topic.rule](case)
        return tidied(blocks)


def tidied(blocks: list[Block]) -> list[Block]:
    """Return the blocks with each paragraph break at the end of the block before it, and no
    block opening with a space, so that sentences run on with one space between them."""
    out: list[Block] = []
    for text, citations in blocks:
        body = text.lstrip()
        lead = text[: len(text) - len(body)]
        if out and "\n" in lead:
            before, cited = out[-1]
            out[-1] = (before.rstrip(" ") + "\n" * min(lead.count("\n"), 2), cited)
        if body:
            out.append((body, citations))
    return out


def _name_words(question: Question) -> list[str]:
    said = [w for i in question.institutions for w in i.split()] + list(question.names)
    return [w for w in dict.fromkeys(said) if re.fullmatch(r"[a-z0-9]+", w)]


def accounts_query(question: Question, bearing: set[str]) -> str | None:
    """Return the SELECT of the accounts the bearing figures read, each figure's accounts
    narrowed to those the question names when it names some of them (so that a figure's
    citation opens those accounts alone), or None when no figure reads accounts."""
    names = _name_words(question)
    match = " OR ".join(
        f"' ' || lower({column}) || ' ' LIKE '% {word} %'"
        for word in names
        for column in ("institution_name", "account_name")
    )
    parts = []
    for figure in sorted(bearing):
        rows, narrow = FIGURES[figure].rows, FIGURES[figure].narrow
        kinds = " OR ".join(KIND_FILTERS[k] for k in question.kinds if k in KIND_FILTERS)
        if not rows or (narrow == "only" and not (match or kinds)):
            continue
        if narrow == "only":  # the accounts it names, else the kinds of account it names
            rows = "(" + " OR ".join(p for p in (match, kinds) if p) + ")"
        elif narrow and match:
            others = f"SELECT 1 FROM account_details WHERE {rows} AND ({match})"
            rows = f"{rows} AND ({match} OR NOT EXISTS ({others}))"
        parts.append(f"({rows})")
    if not parts:
        return None
    return (
        f"SELECT {ACCOUNT_COLUMNS}, credit_limit FROM account_details"
        f" WHERE {' OR '.join(dict.fromkeys(parts))} ORDER BY account_name, institution_name"
    )


@functools.lru_cache(maxsize=1024)  # asked of a message by several readers; `Guided` is frozen
def read_guided(text: str) -> Guided | None:
    """Return the task of a question this module answers, or None."""
    found = topics_of(text)
    if not found:
        return None
    return Guided(understand(text), tuple(found))


def read_guided_after(text: str, earlier: str) -> Guided | None:
    """A short follow-up of a guided question ("and at wells fargo?", "what about $5,000?"),
    or a longer one pointing back ("could i cover that from my checking today" after the Roth
    IRA limit: the two read as one): the earlier question's topics, of the accounts or the
    amount the follow-up names instead, saying what it assumed."""
    pointing = len(words(text)) <= 12 and lexicon.has_phrase(padded(text), _POINTING)
    if (len(words(text)) > 6 and not pointing) or topics_of(text):
        return None
    before = read_guided(earlier) or (read_guided(f"{earlier} {text}") if pointing else None)
    current = understand(text)
    named = current.institutions or current.kinds or money_said(current)
    if before is None or not named:
        return None
    kept = replace(
        current,
        text=f"{text} {earlier}",  # what it leaves out (a rate, "married", "roth") is the earlier's
        own=True,
        years=current.years or before.question.years,
        amounts=tuple(money_said(current)),
    )
    topics = " and ".join(topic.name for topic, _ in before.topics)
    return Guided(kept, before.topics, f"Taking that as the same question, about {topics}:\n")
