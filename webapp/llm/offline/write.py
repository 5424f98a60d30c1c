"""The offline engine's answer: figures, quotes and documents, each sentence citing its rows
or passages; short plain replies, with no sources, to small talk and to what it cannot do."""

from __future__ import annotations

from ...tool_registry import EXECUTE_PYTHON, SEARCH_WEB
from ...tools.python.market import MarketData
from .ask import GENERIC, Question, documentish
from .cite import Block, Result
from .described import described
from .figures import Row, balances, cash, debts, net_worth, rows_of, utilization
from .library import DocHit, Library
from .markets import holdings, no_data, quote, without_data
from .plan import cash_named
from .prose import document_answer
from .quotable import Source
from .sides import is_kind
from .words import join_words, sentence, words

CAN_DO = (
    "your own accounts (balances, debts, net worth, cash, credit utilization and "
    "holdings), stock quotes, and personal-finance topics such as taxes, credit cards, "
    "mortgages and saving"
)
OUT_OF_SCOPE = f"I can't help with that. I can answer questions about {CAN_DO}."
NOT_FOUND = (
    f"I couldn't find an answer to that in my sources. I can answer questions about {CAN_DO}."
)
# A question about money over time that `spending_ask.read_spending` could not read.
NO_SPENDING = (
    "I couldn't tell what to add up from your transactions. Ask with what and when, for "
    'example "What did I spend on groceries last month?", "What did I earn in November?" '
    'or "What are my recurring charges?"'
)
NO_TICKER = (
    'Which stock do you mean? Ask with its ticker symbol, for example "What is AAPL trading at?"'
)
_HOLDS_CASH = ("depository", "investment")  # what a question about cash may read
_FIGURES = {
    "net_worth": net_worth,
    "utilization": utilization,
    "debts": debts,
    "cash": cash,
    "balances": balances,
}


def small_talk(text: str) -> str:
    """Reply to a greeting, thanks or "what can you do" in a sentence or two."""
    said = set(words(text))
    if said & {"thanks", "thank", "thx", "ty", "cheers"}:
        return "You're welcome! Ask me anything else about your money."
    if said & {"bye", "goodbye", "later"}:
        return "Goodbye! Come back any time you have a question about your money."
    if {"how", "are", "you"} <= said or said & {"hows", "sup"}:
        return "I'm doing well, thanks for asking! What would you like to know about your money?"
    if said & {"who", "what", "help", "name"}:
        return (
            f"I'm a personal-finance assistant. I can answer questions about {CAN_DO}, "
            "and I cite where each answer comes from."
        )
    return f"Hi! I can answer questions about {CAN_DO}. What would you like to know?"


def direct_reply(question: Question, hits: list[DocHit], market: MarketData | None = None) -> str:
    """The reply to a question that needs no tool: small talk, or what is out of reach."""
    if "small_talk" in question.intents:
        return small_talk(question.text)
    if "spending" in question.intents:
        return NO_SPENDING
    if "quote" in question.intents and not question.tickers:
        return NO_TICKER
    if "quote" in question.intents:
        return no_data(without_data(question.tickers, market))[0]
    if documentish(question.text) or question.kinds or question.own:
        return NOT_FOUND  # a question for the documents, which don't answer it
    return OUT_OF_SCOPE


def _documents(
    question: Question,
    results: list[Result],
    hits: list[DocHit],
    library: Library,
    earlier: str = "",
) -> list[Block]:
    sources = []
    for result in results:
        doc = library.find(result.tool if result.tool.startswith("read_") else None, result.title)
        place = next(
            (i for i, hit in enumerate(hits) if doc is not None and hit.doc == doc), len(hits)
        )
        hit = hits[place] if place < len(hits) else None
        sources.append(Source(result, place, hit.passages if hit else ()))
    sources.sort(key=lambda source: source.rank)
    # Beside the user's own figures, the documents answer the rest: "rebalance", not "portfolio".
    asked = (
        question.text
        if not question.advice
        else " ".join(w for w in words(question.text) if w not in GENERIC)
    )
    found = document_answer(asked, sources, library.rarity)
    if not found and earlier:  # "and if I miss it?": what it asks more of, the question before
        found = document_answer(f"{asked} {earlier}", sources, library.rarity)
    return found


def join_sections(sections: list[list[Block]]) -> list[Block]:
    """Sentences of a section run on; a list item ends its line; sections are paragraphs,
    each said once."""
    out: list[Block] = []
    kept: list[list[Block]] = []
    for section in sections:  # two questions the same passage answers: it is said once
        if section and section not in kept:
            kept.append(section)
    for s, section in enumerate(kept):
        for b, (text, cites) in enumerate(section):
            last_here, last_of_all = b == len(section) - 1, s == len(kept) - 1
            text = text.rstrip(" ")
            if last_here and last_of_all:
                text = text.rstrip()
            elif last_here:
                text = text.rstrip("\n") + "\n\n"
            elif not text.endswith("\n"):
                text += " "
            out.append((text, cites))
    return out


def _net_worth_without(question: Question, rows: list[Row]) -> list[Block]:
    """Net worth leaving out what the question says ("without the house"), saying what that
    was and what it is worth."""
    left = [r for r in rows if any(is_kind(r, k) for k in question.excluded_kinds)]
    kept = [r for r in rows if all(r is not o for o in left) and "ticker" not in r.values]
    blocks = net_worth(question, kept)
    if left:
        said = join_words([f"{r.label} ({r.amount(abs(r.balance or 0.0))})" for r in left])
        blocks = [*blocks, (f"That leaves out {said}.", [r.cite for r in left])]
    return blocks


def _called(rows: list[Row]) -> list[Block]:
    """What each account is called by its bank ("Customized Cash Rewards Visa")."""
    return [
        (sentence(f"{row.label}'s full name is {row.get('official_name')}.\n"), [row.cite])
        for row in rows
    ]


def write_answer(
    question: Question,
    results: list[Result],
    hits: list[DocHit],
    library: Library,
    market: MarketData | None = None,
    earlier: str = "",
) -> list[Block]:
    """Write the answer's text blocks, each with the citations that back it (`earlier`: the
    question before, whose documents a follow-up asks more of)."""
    errors = [str(r.block["error"]) for r in results if r.index is None]
    cited = [r for r in results if r.index is not None]
    rows = rows_of(cited)
    sections: list[list[Block]] = []
    if question.names_asked:
        sections.append(_called([r for r in rows if r.get("official_name")]))
    for intent in question.intents:
        if intent == "net_worth" and question.excluded_kinds:
            sections.append(_net_worth_without(question, rows))
        elif intent == "balances" and question.described and rows:
            sections.append(described(rows))  # "tell me about my citi card": all on record
        elif (
            intent == "cash"
            and cash_named(question)
            and any(r.kind not in _HOLDS_CASH for r in rows)
        ):
            # "the Citi Double Cash": an account named by its own name's "cash", not cash
            sections.append(balances(question, [r for r in rows if r.kind not in _HOLDS_CASH]))
        elif intent == "cash":  # of what was read for every figure asked, the cash
            sections.append(_FIGURES["cash"](question, [r for r in rows if r.kind in _HOLDS_CASH]))
        elif intent in _FIGURES:
            sections.append(
                _FIGURES[intent](question, [r for r in rows if "ticker" not in r.values])
            )
        elif intent in ("holdings", "allocation") and not any(
            i in ("holdings", "allocation")
            for i in question.intents[: question.intents.index(intent)]
        ):
            held = [r for r in rows if "ticker" in r.values]
            cash = [r for r in rows if "uninvested_cash" in r.values]
            if held or "balances" not in question.intents:  # what an account holds, if any
                sections.append(holdings(question, held, cash))
    quotes = [
        r
        for r in cited
        if r.tool == EXECUTE_PYTHON and r.source.startswith("silvia://market-data/finnhub/")
    ]
    sections += [[quote(result)] for result in quotes]
    missing = without_data(question.tickers, market) if "quote" in question.intents else ()
    if missing:
        sections.append([no_data(missing)])
    documents = [
        r
        for r in cited
        if r.tool.startswith("read_")
        or r.tool == SEARCH_WEB
        or (r.tool == EXECUTE_PYTHON and r.source.startswith(("https://", "http://")))
    ]
    if documents:
        answered = _documents(question, documents, hits, library, earlier)
        sections.append(answered or [(NOT_FOUND, [])])
    blocks = join_sections(sections)
    if errors and not any(cites for _, cites in blocks):
        return [("I couldn't get that information: " + errors[0], [])]
    return blocks or [(NOT_FOUND, [])]
