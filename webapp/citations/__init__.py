"""Citation targets: what each chat citation points at (seed 000, the server side).

Pure: this package imports no web framework, database driver or network client.
"""

from __future__ import annotations

from ._account_ids import (
    ID_COLUMNS,
    account_id_candidates,
    account_path,
    account_ref_from_row,
    encode_uri_component,
    is_account_id,
    match_account,
)
from ._parse import parse_citation_target
from ._registry import CHECKPOINT_FIELD, CitationRegistry
from ._sources import (
    ACCOUNT_SOURCE_PREFIX,
    ANALYSIS_SOURCE,
    MARKET_DATA_SOURCE,
    PORTFOLIO_SOURCE,
    READER_CORPORA,
    SEARCH_SOURCE,
    SqlGroup,
    ToolName,
    account_source,
    is_http_url,
    market_data_source,
    row_label,
    slugify,
    target_for_source,
    targets_for_sql,
)
from ._targets import (
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationAccountProvider,
    CitationAccountRef,
    CitationTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TargetKind,
    TaxReferenceTarget,
    WebTarget,
    account_refs,
    target_for_accounts,
    target_to_json,
)
from ._urls import humanize_citation_url

__all__ = [
    "ACCOUNT_SOURCE_PREFIX",
    "ANALYSIS_SOURCE",
    "CHECKPOINT_FIELD",
    "ID_COLUMNS",
    "MARKET_DATA_SOURCE",
    "PORTFOLIO_SOURCE",
    "READER_CORPORA",
    "SEARCH_SOURCE",
    "AccountTarget",
    "AccountsTarget",
    "AnalysisTarget",
    "CardDocumentTarget",
    "CitationAccountProvider",
    "CitationAccountRef",
    "CitationRegistry",
    "CitationTarget",
    "MarketDataTarget",
    "MortgageReferenceTarget",
    "PortfolioTarget",
    "SqlGroup",
    "TargetKind",
    "TaxReferenceTarget",
    "ToolName",
    "WebTarget",
    "account_id_candidates",
    "account_path",
    "account_ref_from_row",
    "account_refs",
    "account_source",
    "encode_uri_component",
    "humanize_citation_url",
    "is_account_id",
    "is_http_url",
    "market_data_source",
    "match_account",
    "parse_citation_target",
    "row_label",
    "slugify",
    "target_for_accounts",
    "target_for_source",
    "target_to_json",
    "targets_for_sql",
]
