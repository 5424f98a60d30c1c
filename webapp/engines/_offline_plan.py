"""What the offline engine asks: route a question to tool calls, deterministically.

Balances and accounts go to `execute_sql` on `account_details` (selecting `source` and
`source_account_id`, as the system prompt asks the model to); holdings to the holdings
views; a ticker to market data in `execute_python`; tax, card-benefit and mortgage
questions to the readers; anything else to `search_web`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

ACCOUNT_COLUMNS = (
    "source, source_account_id, account_name, institution_name, account_type, "
    "account_subtype, current_balance, currency"
)
HOLDING_COLUMNS = (
    "source, source_account_id, account_name, ticker, quantity, market_value, currency"
)

# Company names people use for the tickers the bundled market snapshot carries.
TICKER_NAMES = {
    "apple": "AAPL", "microsoft": "MSFT", "nvidia": "NVDA", "google": "GOOGL",
    "alphabet": "GOOGL", "s&p 500": "SPY", "s&p": "SPY", "total stock market": "VTI",
}
KNOWN_TICKERS = frozenset(TICKER_NAMES.values())
_TICKER = re.compile(r"(?<![A-Za-z])\$?([A-Z]{1,5})(?![A-Za-z])")
_WORDS = re.compile(r"[a-z0-9]+")

_READERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("read_credit_card_document", (
        "benefit", "rental car", "purchase protection", "warranty", "travel insurance",
        "billing error", "dispute", "chargeback", "card rule", "annual fee")),
    ("read_mortgage_authority", (
        "mortgage", "escrow", "ability to repay", "closing disclosure", "loan estimate",
        "refinanc", "qualified mortgage", "heloc")),
    ("read_tax_authority", (
        "tax", "irs", "deduct", "capital gain", "ira", "401(k)", "exclusion", "charitable",
        "home sale", "sell my home", "selling my home")),
)
_ACCOUNT_WORDS = ("owe", "balance", "account", "checking", "saving", "cash", "net worth",
                  "bank", "debt", "credit card", "how much money")
_HOLDING_WORDS = ("holding", "portfolio", "brokerage", "position")
# Words that are about the user's holdings only when the question is about their own.
_OWN_HOLDING_WORDS = ("invest", "stock", "shares")
_OWN = ("my ", "i own", "do i have", "i hold")


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    input: dict[str, Any]


def words(text: str) -> set[str]:
    """Return the lower-cased words of `text`."""
    return set(_WORDS.findall(text.lower()))


def tickers_in(question: str) -> list[str]:
    """Return the known tickers a question names, by symbol or company name, in order."""
    found: list[str] = []
    lowered = question.lower()
    for name, ticker in TICKER_NAMES.items():
        if name in lowered and ticker not in found:
            found.append(ticker)
    for match in _TICKER.finditer(question):
        if match[1] in KNOWN_TICKERS and match[1] not in found:
            found.append(match[1])
    return found


def _account_query(lowered: str) -> str:
    where = ""
    if "credit" in lowered or "owe" in lowered or "debt" in lowered:
        where = " WHERE account_type = 'credit'"
    elif "checking" in lowered:
        where = " WHERE account_subtype = 'checking'"
    elif "saving" in lowered:
        where = " WHERE account_subtype = 'savings'"
    return f"SELECT {ACCOUNT_COLUMNS} FROM account_details{where} ORDER BY account_name"


def plan(question: str) -> list[ToolCall]:
    """Return the first round of tool calls for a question."""
    lowered = question.lower()
    calls: list[ToolCall] = []
    readers = [name for name, keys in _READERS if any(k in lowered for k in keys)]
    if any(w in lowered for w in _ACCOUNT_WORDS) and not readers:
        calls.append(ToolCall("execute_sql", {"query": _account_query(lowered)}))
    own = any(w in lowered for w in _OWN)
    if any(w in lowered for w in _HOLDING_WORDS) or (
            own and any(w in lowered for w in _OWN_HOLDING_WORDS)):
        if "portfolio" in lowered:
            query = ("SELECT ticker, SUM(quantity) AS quantity, SUM(market_value) AS market_value,"
                     " currency FROM holding_details GROUP BY ticker, currency ORDER BY ticker")
        else:
            query = f"SELECT {HOLDING_COLUMNS} FROM holding_details ORDER BY account_name, ticker"
        calls.append(ToolCall("execute_sql", {"query": query}))
    for ticker in tickers_in(question):
        code = (f"import json, finnhub\nquote = finnhub.quote({ticker!r})\n"
                f"print(json.dumps({{'ticker': {ticker!r}, **quote}}))\n")
        calls.append(ToolCall("execute_python", {"code": code}))
    calls += [ToolCall(name, {"path": ""}) for name in readers[:1]]
    if not calls:
        calls.append(ToolCall("search_web", {"query": question.strip()[:300]}))
    return calls


# A few everyday words and the terms the documents use for them.
_SYNONYMS = {
    "home": "residence", "house": "residence", "sell": "sale", "selling": "sale",
    "sold": "sale", "rent": "rental", "repay": "repayment", "donate": "charitable",
    "donation": "charitable", "charity": "charitable", "roth": "408a", "dispute": "billing",
}


_STOPWORDS = frozenset({
    "a", "an", "and", "are", "be", "can", "do", "does", "for", "from", "how", "i", "in", "is",
    "it", "my", "of", "on", "or", "should", "the", "to", "what", "when", "where", "which", "who",
    "why", "will", "with", "you", "your",
})


def stems(text: str) -> set[str]:
    """Return crude stems of the words of `text` (the first five letters), with synonyms."""
    found = set()
    for word in words(text) - _STOPWORDS:
        # Plurals meet their singulars ("IRAs", "IRA"); "-ss" words keep theirs ("class").
        singular = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
        for form in (singular, _SYNONYMS.get(word, "")):
            if len(form) > 2:
                found.add(form[:5])
    return found


def best_entries(question: str, entries: list[tuple[str, str]], most: int = 2) -> list[str]:
    """Return up to `most` listed names sharing most stems with the question, best first.

    The runner-up is kept only when it shares something: two documents read side by side
    often answer better than the one whose title matched best.
    """
    wanted = stems(question)
    scored = sorted(((len(wanted & stems(f"{name} {title}")), -i, name)
                     for i, (name, title) in enumerate(entries)), reverse=True)
    return [name for rank, (score, _, name) in enumerate(scored[:most]) if rank == 0 or score]
