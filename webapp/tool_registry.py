"""The tools the model may call: one spec per tool, read by everything that names a tool.

A spec says what the model is told (name, description, input schema), how the tool's result
becomes citable content (`content`, which `webapp/citations/citable.py` turns into search_result
blocks and `webapp/citations/sources.py::target_for_source` gives their targets), and
whether it searches the internet (the packets' `is_internet_search`). The runner
(`webapp/tools/runner.py::LocalTools`), the model's tool list (`webapp/turn/prompt.py`), the
offline planner, the packets and the status line read the names from here, so adding a tool
is a spec here and its executor in `webapp/tools/` (docs/architecture.md, "Adding a tool").

Pure: standard library only, so the citation core may read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias

__all__ = [
    "BY_NAME",
    "EXECUTE_PYTHON",
    "EXECUTE_SQL",
    "READERS",
    "READ_CREDIT_CARD_DOCUMENT",
    "READ_MORTGAGE_AUTHORITY",
    "READ_TAX_AUTHORITY",
    "SEARCH_WEB",
    "TOOLS",
    "Content",
    "CorpusName",
    "ToolName",
    "ToolSpec",
    "model_tools",
    "searches_internet",
]

ToolName: TypeAlias = Literal[
    "execute_sql",
    "execute_python",
    "read_tax_authority",
    "read_credit_card_document",
    "read_mortgage_authority",
    "search_web",
]
EXECUTE_SQL: Final = "execute_sql"
EXECUTE_PYTHON: Final = "execute_python"
READ_TAX_AUTHORITY: Final = "read_tax_authority"
READ_CREDIT_CARD_DOCUMENT: Final = "read_credit_card_document"
READ_MORTGAGE_AUTHORITY: Final = "read_mortgage_authority"
SEARCH_WEB: Final = "search_web"

# How a result becomes citable content: SQL rows grouped by account, file or portfolio; a
# sandbox run's market data, articles and analysis; a library document; web search results.
Content: TypeAlias = Literal["sql_rows", "python_run", "library_document", "web_results"]
# A library reader's bundled corpus, a folder of webapp/data/corpora/.
CorpusName: TypeAlias = Literal["tax-authority", "credit-card-corpus", "mortgage-code"]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what the model is told, how its result is cited, what it reaches."""

    name: ToolName
    description: str
    input_schema: Mapping[str, Any]
    content: Content
    searches_internet: bool = False
    corpus: CorpusName | None = None

    def for_model(self) -> dict[str, Any]:
        """Return the tool as the model's API declares one: name, description, input schema."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": dict(self.input_schema),
        }


def _one_text(field: str, description: str | None = None) -> Mapping[str, Any]:
    prop: dict[str, Any] = {"type": "string"}
    if description is not None:
        prop["description"] = description
    return MappingProxyType({"type": "object", "properties": {field: prop}, "required": [field]})


_PATH = "A document or folder path inside the corpus; '' lists the root."

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        EXECUTE_SQL,
        "Run one read-only SELECT over the user's own financial data. Views: "
        "account_details(source, source_account_id, account_name, institution_name, "
        "account_type, account_subtype, current_balance, currency, synced_at), "
        "holding_details and public_holding_details(source, source_account_id, "
        "account_name, ticker, quantity, market_value, currency, synced_at). synced_at is "
        "when the row's data last synced (UTC; NULL for a manual account). "
        "transaction_details(source, source_account_id, account_name, institution_name, "
        "transaction_id, date, description, merchant_name, category, subcategory, amount, "
        "currency, pending, file_id, file_name, authorized_date, payment_channel): the "
        "user's transactions, on synced accounts and from uploaded statement files. date is "
        "ISO text (YYYY-MM-DD); a positive amount is money out of the account, a negative "
        "one money in; category and subcategory are Plaid's personal-finance categories "
        "(FOOD_AND_DRINK, FOOD_AND_DRINK_GROCERIES, TRANSFER_IN, INCOME, ...). A file's own "
        "rows have source 'file', source_account_id NULL and their file_id.",
        _one_text("query", "One SELECT statement."),
        "sql_rows",
    ),
    ToolSpec(
        EXECUTE_PYTHON,
        "Run Python in a sandbox. `import finnhub` gives quote(ticker), profile(ticker) and "
        "candles(ticker, resolution, from_ts, to_ts) in Finnhub's shapes; `import exa` gives "
        "search_and_contents(query, num_results=5) for articles. Print what you need.",
        _one_text("code"),
        "python_run",
    ),
    ToolSpec(
        READ_TAX_AUTHORITY,
        "Read US tax law and IRS guidance: a file and its metadata, or a folder.",
        _one_text("path", _PATH),
        "library_document",
        corpus="tax-authority",
    ),
    ToolSpec(
        READ_CREDIT_CARD_DOCUMENT,
        "Read card issuers' benefit guides and card rules: a file, or a folder.",
        _one_text("path", _PATH),
        "library_document",
        corpus="credit-card-corpus",
    ),
    ToolSpec(
        READ_MORTGAGE_AUTHORITY,
        "Read mortgage regulations and agency guidance: a file, or a folder's list.",
        _one_text("path", _PATH),
        "library_document",
        corpus="mortgage-code",
    ),
    ToolSpec(
        SEARCH_WEB,
        "Search the web for personal-finance pages; results come with their text.",
        _one_text("query"),
        "web_results",
        searches_internet=True,
    ),
)

BY_NAME: Mapping[str, ToolSpec] = MappingProxyType({spec.name: spec for spec in TOOLS})
# The library readers, in the registry's order.
READERS: tuple[ToolName, ...] = tuple(s.name for s in TOOLS if s.content == "library_document")


def searches_internet(name: str) -> bool:
    """Tell whether the tool called `name` searches the internet (an unknown one does not)."""
    spec = BY_NAME.get(name)
    return spec is not None and spec.searches_internet


def model_tools() -> list[dict[str, Any]]:
    """Return every tool as the model's request lists them."""
    return [spec.for_model() for spec in TOOLS]
