"""Which source string each tool result is cited under, and the target it gets.

Seed 000, "What the server cites, and the target each source gets": one function per
row group of that table, all pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias
from urllib.parse import urlsplit

from ._account_ids import account_ref_from_row
from ._targets import (
    AnalysisTarget,
    CardDocumentTarget,
    CitationAccountRef,
    CitationTarget,
    DocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
    target_for_accounts,
)

ToolName: TypeAlias = Literal[
    "execute_sql",
    "execute_python",
    "read_tax_authority",
    "read_credit_card_document",
    "read_mortgage_authority",
    "search_web",
]

ACCOUNT_SOURCE_PREFIX = "silvia://your-account/"
PORTFOLIO_SOURCE = "silvia://your-portfolio"
MARKET_DATA_SOURCE = "silvia://market-data/finnhub"
ANALYSIS_SOURCE = "silvia://analysis"
SEARCH_SOURCE = "silvia://search/search_web"

# Each library reader: its corpus's silvia:// prefix and the kind of target it cites.
READER_CORPORA: dict[str, tuple[str, type[DocumentTarget]]] = {
    "read_tax_authority": ("silvia://tax-authority/", TaxReferenceTarget),
    "read_credit_card_document": ("silvia://credit-card-corpus/", CardDocumentTarget),
    "read_mortgage_authority": ("silvia://mortgage-code/", MortgageReferenceTarget),
}

# The columns a row may show as its account's name, most specific first.
LABEL_COLUMNS = ("account_name", "name", "nickname", "official_name", "institution_name")

_TICKER = re.compile(r"[A-Z0-9][A-Z0-9.\-:^=]{0,19}", re.ASCII)
_SLUG_BREAK = re.compile(r"[^a-z0-9]+")


def slugify(label: str) -> str:
    """Lower-case `label` and turn each run of other characters into one `-`."""
    return _SLUG_BREAK.sub("-", label.lower()).strip("-")


def account_source(label: str) -> str:
    """Return the source an account's rows are cited under: `silvia://your-account/<slug>`."""
    return ACCOUNT_SOURCE_PREFIX + (slugify(label) or "account")


def market_data_source(ticker: str | None) -> str:
    """Return the source of a Finnhub payload: with its ticker when it has a valid one."""
    if ticker is not None and _TICKER.fullmatch(ticker.strip().upper()):
        return f"{MARKET_DATA_SOURCE}/{ticker.strip().upper()}"
    return MARKET_DATA_SOURCE


def is_http_url(value: str) -> bool:
    """Tell whether `value` is an absolute http(s) URL with a host."""
    try:
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def row_label(row: Mapping[str, object]) -> str | None:
    """Return the name a SQL row shows for its account, or None for a row with no account."""
    for column in LABEL_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


@dataclass(frozen=True, slots=True)
class SqlGroup:
    """The rows of one SQL result that are cited under one source."""

    source: str
    title: str
    rows: tuple[Mapping[str, object], ...]
    target: CitationTarget | None


def _accounts_target(rows: Iterable[Mapping[str, object]]) -> CitationTarget | None:
    refs: list[CitationAccountRef] = []
    for row in rows:
        ref = account_ref_from_row(row)
        if ref is None:
            return None  # One row that lacks an id leaves the label untyped.
        refs.append(ref)
    return target_for_accounts(tuple(refs)) if refs else None


def targets_for_sql(rows: Iterable[Mapping[str, object]]) -> list[SqlGroup]:
    """Group SQL rows by account label, each with its target; unlabelled rows are the portfolio."""
    groups: dict[str, tuple[str, list[Mapping[str, object]]]] = {}
    for row in rows:
        label = row_label(row)
        source = PORTFOLIO_SOURCE if label is None else account_source(label)
        title = "Your portfolio" if label is None else label
        groups.setdefault(source, (title, []))[1].append(row)
    return [
        SqlGroup(
            source,
            title,
            tuple(group),
            PortfolioTarget() if source == PORTFOLIO_SOURCE else _accounts_target(group),
        )
        for source, (title, group) in groups.items()
    ]


def target_for_source(
    tool: str, source: str, payload: Iterable[Mapping[str, object]] | None = None
) -> CitationTarget | None:
    """Return the target of `source` written by `tool`; `payload` is the SQL rows behind it."""
    if tool == "execute_sql":
        if source == PORTFOLIO_SOURCE:
            return PortfolioTarget()
        if source.startswith(ACCOUNT_SOURCE_PREFIX) and payload is not None:
            return _accounts_target(payload)
        return None
    if tool == "execute_python":
        if source in (MARKET_DATA_SOURCE, ANALYSIS_SOURCE):
            return AnalysisTarget()
        if source.startswith(MARKET_DATA_SOURCE + "/"):
            ticker = source.removeprefix(MARKET_DATA_SOURCE + "/")
            return MarketDataTarget(ticker) if _TICKER.fullmatch(ticker) else None
        return WebTarget(source) if is_http_url(source) else None
    if tool in READER_CORPORA:
        prefix, kind = READER_CORPORA[tool]
        if is_http_url(source):
            return kind(source)
        if source.startswith(prefix) and len(source) > len(prefix):
            return kind(None)
        return None
    if tool == "search_web":
        return WebTarget(source) if is_http_url(source) else None
    return None
