"""What the offline engine asks the tools, as a model would, in one round.

Accounts: `execute_sql` on `account_details`, always selecting `source` and
`source_account_id` (as the system prompt asks), so each cited label opens its accounts, and
`synced_at`, so each source says when its figures last synced.
When the question may name an institution or an account, the query keeps only the rows
whose names match it best: the user's own names decide, not a list in the engine. Holdings:
per account, or summed per ticker for the portfolio. Quotes: Finnhub in `execute_python`.
Documents: the readers for the corpus documents the library ranked relevant, and the web
pages through the sandbox's article search, one result per page, so that only relevant
pages reach the sources.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...tool_registry import EXECUTE_PYTHON, EXECUTE_SQL, SEARCH_WEB
from ...tools.python.market import MarketData
from .ask import Kind, Question, asks_split
from .library import DocHit, Library, library
from .markets import without_data
from .words import words

ACCOUNT_COLUMNS = (
    "source, source_account_id, account_name, institution_name, account_type, "
    "account_subtype, current_balance, currency, synced_at"
)
HOLDING_COLUMNS = (
    "source, source_account_id, account_name, institution_name, ticker, security_name, "
    "security_type, quantity, market_value, currency, synced_at"
)
# A ticker summed over accounts is as fresh as its least recently synced holding.
PORTFOLIO_QUERY = (
    "SELECT ticker, security_name, security_type, SUM(quantity) AS quantity,"
    " SUM(market_value) AS market_value, currency, MIN(synced_at) AS synced_at"
    " FROM holding_details"
    " GROUP BY ticker, security_name, security_type, currency"
    " ORDER BY market_value DESC, ticker"
)
# What investment accounts hold besides their securities: a broker's uninvested cash.
UNINVESTED_QUERY = (
    "SELECT source, source_account_id, account_name, institution_name, account_type,"
    " account_subtype, available_balance AS uninvested_cash, currency, synced_at"
    " FROM account_details WHERE account_type = 'investment' AND available_balance > 0"
    " ORDER BY account_name"
)
KIND_FILTERS: dict[Kind, str] = {
    "checking": "account_subtype = 'checking'",
    "savings": "account_subtype = 'savings'",
    "credit": "account_type = 'credit'",
    "depository": "account_type = 'depository'",
    "investment": "account_type = 'investment'",
    "retirement": "account_subtype IN ('401k', '403b', 'ira', 'roth', 'retirement')",
    "mortgage": "account_subtype = 'mortgage'",
    "loan": "account_type = 'loan'",
    "property": "account_type = 'property'",
    "crypto": "account_type = 'crypto'",
}
_INTENT_FILTERS = {
    "debts": "account_type IN ('credit', 'loan')",
    "utilization": "account_type = 'credit'",
    "cash": "account_type = 'depository'",
}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: the tool's name and its input."""

    name: str
    input: dict[str, Any]


def _named(names: tuple[str, ...], official: tuple[str, ...] = ()) -> str:
    """Score a row: 2 when the question names its institution, 1 more when it names it (by
    its name, or by a word of `official` in the issuer's name for it: "the Double Cash")."""

    def any_word(column: str, said: tuple[str, ...] = names) -> str:
        # The words are [a-z0-9] only (see `words`), so they need no quoting.
        return " OR ".join(
            f"' ' || lower(coalesce({column}, '')) || ' ' LIKE '% {word} %'" for word in said
        )

    account = any_word("account_name")
    if official:
        account = f"{account} OR {any_word('official_name', official)}"
    return (
        f"CASE WHEN {any_word('institution_name')} THEN 2 ELSE 0 END\n"
        f"         + CASE WHEN {account} THEN 1 ELSE 0 END"
    )


def _own_words(question: Question) -> tuple[str, ...]:
    """The words that may name an account itself, not its institution ("double" of "the Citi
    Double Cash"): an issuer's name for a card repeats the issuer's."""
    said = {w for i in question.institutions for w in i.split()}
    return tuple(n for n in question.names if n not in said)


def cash_named(question: Question) -> str:
    """The accounts whose own name holds "cash" and another word the question names them by
    ("the balance on the Citi Double Cash"): a name, not the user's cash."""
    words = _own_words(question)
    if "cash" not in question.text.lower() or not words:
        return ""
    named = " || ' ' || ".join(
        f"lower(coalesce({c}, ''))" for c in ("account_name", "official_name")
    )
    also = " OR ".join(f"' ' || {named} || ' ' LIKE '% {w} %'" for w in words)
    return f"' ' || {named} || ' ' LIKE '% cash %' AND ({also})"


def account_query(question: Question) -> str:
    """Return the SELECT over `account_details` that the question's figures need."""
    columns = ACCOUNT_COLUMNS + (", credit_limit" if "utilization" in question.intents else "")
    if question.names_asked:
        columns += ", official_name"  # "the actual name of my card": its bank's name for it
    if question.described:  # "tell me about my citi card": every figure on record
        columns += ", credit_limit, available_balance"
    # "cash in my Robinhood account": a brokerage's uninvested cash counts as cash it names
    brokerage_cash = "cash" in question.intents and question.institutions and not question.kinds
    if brokerage_cash:
        columns += ", available_balance"
    kinds = list(question.kinds)
    if "debts" in question.intents and "property" in kinds:
        kinds[kinds.index("property")] = "mortgage"  # what is owed on a home is its mortgage
    if "net_worth" in question.intents:
        where = ""  # every account counts
    elif kinds:
        where = " OR ".join(KIND_FILTERS[k] for k in dict.fromkeys(kinds))
    elif brokerage_cash:
        where = "account_type IN ('depository', 'investment')"
    else:  # each figure asked: "how much cash and debt do I have" reads both kinds
        filters = [_INTENT_FILTERS[i] for i in question.intents if i in _INTENT_FILTERS]
        where = " OR ".join(dict.fromkeys(filters))
    if "cash" in question.intents and where and cash_named(question):
        where = f"({where}) OR ({cash_named(question)})"  # the writer answers its balance
    if question.excluded:  # "the other card": not the one asked about before
        words = question.excluded
        left_out = " OR ".join(
            f"' ' || lower({c}) || ' ' LIKE '% {w} %'"
            for c in ("institution_name", "account_name")
            for w in words
        )
        where = f"({where or '1 = 1'}) AND NOT ({left_out})"
    if question.excluded_kinds and "net_worth" not in question.intents:
        # "cash outside of my savings"; net worth "without the house" names what it left out
        left_out = " OR ".join(KIND_FILTERS[k] for k in question.excluded_kinds)
        where = f"({where or '1 = 1'}) AND NOT ({left_out})"
    source = "account_details" + (f" WHERE {where}" if where else "")
    order = "ORDER BY account_name, institution_name"
    if not question.names or "net_worth" in question.intents:
        return f"SELECT {columns} FROM {source} {order}"
    # Keep the rows whose names match the question best (all of them when none matches).
    return (
        f"SELECT {columns}\n  FROM (SELECT *, max(named) OVER () AS best\n"
        f"          FROM (SELECT *, {_named(question.names, _own_words(question))} AS named\n"
        f"                  FROM {source}) AS scored) AS ranked\n"
        f" WHERE {'named > 0' if question.together else 'named = best'}"
        f"{' AND best > 0' if question.institutions else ''}\n {order}"
    )


# Words that name holdings other than coins.
_SECURITIES = frozenset(
    {"stock", "stocks", "share", "shares", "etf", "etfs", "fund", "funds", "equities"}
    | {"securities", "brokerage", "investments", "portfolio", "bonds"}
)


def holding_query(question: Question) -> str:
    """Return the SELECT over `holding_details`: per account, or the portfolio per ticker."""
    if "allocation" in question.intents or (
        "portfolio" in question.text.lower() and not question.tickers
    ):
        return PORTFOLIO_QUERY
    where = ""
    if question.tickers:
        where = " WHERE ticker IN (" + ", ".join(f"'{t}'" for t in question.tickers) + ")"
    view = "holding_details"
    if "investment" in question.kinds and not where:
        # A brokerage account holds securities, not the crypto of a wallet.
        where = " WHERE security_type IN ('equity', 'etf', 'mutual_fund')"
    elif (
        question.kinds == ("crypto",) and not where and not _SECURITIES & set(words(question.text))
    ):
        # "my crypto wallet": its coins alone ("my crypto and my stocks": both)
        where = " WHERE security_type = 'crypto'"
    order = "ORDER BY account_name, ticker"
    if question.tickers or not question.institutions:
        return f"SELECT {HOLDING_COLUMNS} FROM {view}{where} {order}"
    # "what's in my Robinhood account": the holdings of the accounts it names
    return (
        f"SELECT {HOLDING_COLUMNS}\n  FROM (SELECT *, {_named(question.names)} AS named"
        f" FROM {view}) AS scored\n WHERE named > 0 {order}"
    )


def quote_code(tickers: tuple[str, ...]) -> str:
    """Return sandbox code that reads each ticker's quote and company profile."""
    return (
        "import finnhub\n"
        f"for ticker in {list(tickers)!r}:\n"
        "    finnhub.quote(ticker)\n"
        "    finnhub.profile(ticker)\n"
    )


def article_code(titles: list[str]) -> str:
    """Return sandbox code that fetches each web page by its title, one result each."""
    return (
        "import exa\n"
        f"for title in {json.dumps(titles, ensure_ascii=False)}:\n"
        "    exa.search_and_contents(title, num_results=1)\n"
    )


def plan(
    question: Question,
    hits: list[DocHit],
    books: Library | None = None,
    market: MarketData | None = None,
) -> list[ToolCall]:
    """Return the tool calls for a question (none: the model answers at once); quotes are
    asked of `market` for the tickers it covers."""
    calls: list[ToolCall] = []
    intents = set(question.intents)
    if intents & {"net_worth", "debts", "utilization", "cash", "balances"}:
        calls.append(ToolCall(EXECUTE_SQL, {"query": account_query(question)}))
    if intents & {"holdings", "allocation"}:
        calls.append(ToolCall(EXECUTE_SQL, {"query": holding_query(question)}))
        if "allocation" in intents and asks_split(question.text):
            calls.append(ToolCall(EXECUTE_SQL, {"query": UNINVESTED_QUERY}))
    missing = without_data(question.tickers, market)
    quotable = tuple(t for t in question.tickers if t not in missing)
    if "quote" in intents and quotable:
        calls.append(ToolCall(EXECUTE_PYTHON, {"code": quote_code(quotable)}))
    if (calls and not question.advice) or "small_talk" in intents:
        return calls
    calls += [ToolCall(hit.doc.tool, {"path": hit.doc.path}) for hit in hits if hit.doc.tool]
    pages = [hit for hit in hits if hit.doc.tool is None]
    if pages:
        query = (books or library()).web_query(question.text, pages)
        if query is not None:
            calls.append(ToolCall(SEARCH_WEB, {"query": query}))
        else:  # no words find these pages alone: fetch each by its title, one result each
            code = article_code([page.doc.title for page in pages])
            calls.append(ToolCall(EXECUTE_PYTHON, {"code": code}))
    return calls
