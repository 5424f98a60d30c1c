"""What an open question (`overview.py`'s kinds) asks the tools for, and its answer from
their results: the user's accounts or holdings, their regular outgoings when the answer
weighs cash against them (`bills.py`), and the bundled guide page the answer quotes, chosen
by what the question raises (a card's interest, an emergency fund, a budget, one holding
weighing too much in the mix, index funds).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date

from ...tool_registry import EXECUTE_PYTHON, EXECUTE_SQL
from . import lexicon
from .advice import allocate
from .ask import Question
from .bills import bills_queries
from .cash_advice import afford, budget, cash_of, cushion, cushion_left, mentions_cushion
from .cite import Block, Result
from .figures import Row, rows_of
from .inflation import KEY as INFLATION
from .inflation import inflation_lines, names_inflation
from .overview import (
    GUIDES,
    Open,
    debts_named,
    guidance,
    overview,
    payoff,
    plan,
    sell,
    uncovered,
)
from .plan import (
    ACCOUNT_COLUMNS,
    HOLDING_COLUMNS,
    PORTFOLIO_QUERY,
    ToolCall,
    account_query,
    article_code,
)
from .saving_pace import asks_pace, pace_query
from .scope import padded
from .weight import weighed

ALL_ACCOUNTS = (
    f"SELECT {ACCOUNT_COLUMNS}, credit_limit FROM account_details"
    " ORDER BY account_name, institution_name"
)
BROKERAGE = (
    f"SELECT {ACCOUNT_COLUMNS} FROM account_details WHERE account_type = 'investment'"
    " ORDER BY account_name, institution_name"
)
ALL_HOLDINGS = f"SELECT {HOLDING_COLUMNS} FROM holding_details ORDER BY account_name, ticker"
_CONCENTRATION = lexicon.phrases("open_overview", "concentration")
_INDEX_FUND = (" index fund", " index funds", " etf", " etfs")
_OUTGOINGS: tuple[Open, ...] = ("afford", "cushion", "budget")
_PAYOFF_WHEN = lexicon.phrases("open_guides", "payoff", "when")
_PAYOFF_ORDER = lexicon.phrases("open_guides", "payoff", "order")
_PAYOFF_SOON = lexicon.phrases("open_guides", "payoff", "soon")
_MONEY_COMES = re.compile(str(lexicon.table("open_guides")["payoff"]["comes"]))
_PAYOFF_KEPT = lexicon.phrases("open_guides", "payoff", "kept")
_KEPT = lexicon.phrases("open_guides", "cushion_where", "when")


_INVEST = re.compile(r"\binvest\w*")
_SAVE = re.compile(r"\b(save|saving|savings|emergenc\w*|cushion|rainy day|safety net)\b")
_CHOICE = re.compile(r"\b(or|first|before|vs|versus|instead|rather)\b")


def saves_first(text: str) -> bool:
    """Tell whether a question weighs saving against investing ("start investing or build up
    savings first?"): what decides it is the emergency fund that comes before investing."""
    said = text.lower()
    return all(p.search(said) for p in (_INVEST, _SAVE, _CHOICE))


def concentrated(question: Question) -> bool:
    """Tell whether a question about a holding speaks of its weight in the whole mix."""
    return lexicon.has_phrase(padded(question.text), _CONCENTRATION)


def guides(kind: Open, question: Question) -> tuple[str, ...]:
    """The bundled pages (keys of `[open_guides]`) an open question's answer may quote."""
    said = padded(question.text)
    index = any(f"{w} " in said for w in _INDEX_FUND)
    if kind == "sell":
        return ("diversify", "index_fund") if concentrated(question) or index else ()
    if kind == "allocate":
        if index:
            return ("index_fund",)
        return ("cushion",) if saves_first(question.text) else ("allocate",)
    if kind == "afford":
        return ("cushion",) if mentions_cushion(question.text) else ()
    if kind == "plan":  # "clear the card before I start on an index fund?": what one is
        return ("index_fund",) if index else ()
    if kind == "weight":  # "most of what I own is the house": spreading it out
        return ("diversify",)
    if kind == "payoff":
        ordered = lexicon.has_phrase(said, _PAYOFF_ORDER)  # "which one first?"
        rule = "payoff_order" if ordered else "payoff"
        soon = lexicon.has_phrase(said, _PAYOFF_SOON) and not _MONEY_COMES.search(said)
        when = (rule,) if lexicon.has_phrase(said, _PAYOFF_WHEN) or soon else ()
        cushioned = mentions_cushion(question.text) or lexicon.has_phrase(said, _PAYOFF_KEPT)
        return ("cushion", *when) if cushioned else when
    if kind == "cushion":  # "is it ok to keep it all in checking?"; "while inflation eats it"
        kept = ("cushion", "cushion_where") if lexicon.has_phrase(said, _KEPT) else ("cushion",)
        return (*kept, INFLATION) if names_inflation(question) else kept
    return (kind,) if kind in GUIDES else ()


def open_calls(kind: Open, question: Question, today: date) -> list[ToolCall]:
    """The calls an open question makes: its rows, its outgoings, the guide pages."""
    holdings = kind in ("sell", "uncovered", "allocate")
    calls = [ToolCall(EXECUTE_SQL, {"query": ALL_HOLDINGS if holdings else ALL_ACCOUNTS})]
    if kind == "allocate":
        calls.append(ToolCall(EXECUTE_SQL, {"query": ALL_ACCOUNTS}))  # the cash, if no holdings
    if kind == "sell" and debts_named(question):  # "to wipe out my card debt": the debts
        calls.append(ToolCall(EXECUTE_SQL, {"query": ALL_ACCOUNTS}))
    if kind == "sell" and concentrated(question):
        calls.append(ToolCall(EXECUTE_SQL, {"query": BROKERAGE}))  # what the account holds in all
        calls.append(ToolCall(EXECUTE_SQL, {"query": PORTFOLIO_QUERY}))  # the whole mix
    if kind == "payoff" and question.institutions:
        # "my amex", "citi or the sapphire": only the debts it names (by institution or by
        # name, each of them), so that their citations are theirs alone; the cash it is paid
        # from ("out of my wells fargo checking") is the other query's
        owed = tuple(k for k in question.kinds if k in ("credit", "loan", "mortgage"))
        named = replace(question, intents=("debts",), kinds=owed, together=True)
        cash = replace(question, intents=("cash",), kinds=(), names=(), institutions=())
        calls = [ToolCall(EXECUTE_SQL, {"query": account_query(q)}) for q in (named, cash)]
    if kind in _OUTGOINGS or (kind == "payoff" and mentions_cushion(question.text)):
        calls += [ToolCall(EXECUTE_SQL, {"query": q}) for q in bills_queries(today)]
    if kind == "cushion" and asks_pace(question.text):  # "putting enough in each month?"
        calls.append(ToolCall(EXECUTE_SQL, {"query": pace_query(today)}))
    titles = list(dict.fromkeys(GUIDES[g]["title"] for g in guides(kind, question)))
    if titles:
        calls.append(ToolCall(EXECUTE_PYTHON, {"code": article_code(titles)}))
    return calls


def _fund(rows: list[Row], question: Question) -> bool:
    """Tell whether the holding asked about is a fund (its page is the index fund's)."""
    named = [r for r in rows if r.get("ticker") in question.tickers]
    return any(r.get("security_type") in ("etf", "mutual_fund") for r in named)


def _quoted(kind: Open, question: Question, rows: list[Row], results: list[Result]) -> list[Block]:
    keys = tuple(k for k in guides(kind, question) if k != INFLATION)  # its own lines
    if kind == "sell" and keys:
        fund = ("index_fund",) if _fund(rows, question) else ()
        # "am I diversified enough?": the page on diversifying first, then the fund's own
        keys = ("diversify", *fund) if concentrated(question) else fund or ("diversify",)
        if "rebalanc" in question.text.lower():  # "do I need to rebalance?": the page's rule
            keys = (keys[0], "rebalance")
    return [b for n, key in enumerate(keys[:2]) for b in guidance(key, results, then=n > 0)]


def open_write(kind: Open, question: Question, reply: str, results: list[Result]) -> list[Block]:
    """The answer to an open question from its calls' results."""
    rows = rows_of(results)
    guide = _quoted(kind, question, rows, results)
    if kind == "overview":
        return overview(rows)
    if kind == "afford":
        return afford(question, rows, guide)
    if kind == "cushion":
        told = cushion(question, rows, guide or guidance("cushion", results))
        if INFLATION in guides(kind, question):
            told += inflation_lines(cash_of(question, rows), results)
        return told
    if kind == "budget":
        return budget(question, rows, guide)
    if kind == "payoff":
        left = cushion_left(rows) if mentions_cushion(question.text) else []
        return payoff(question, rows) + left + guide
    if kind == "plan":
        return plan(question, rows) + guide
    if kind == "sell":
        return sell(question, rows, whole=concentrated(question)) + guide
    if kind == "allocate":
        return allocate(rows, guide)
    if kind == "weight":
        return weighed(question, rows, guide)
    return uncovered(reply, question, rows)
