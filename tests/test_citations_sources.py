"""Every row of the seed's tool / source / target table, and SQL rows grouped by label."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.citation_json import account_ids, json_values
from webapp.citations import (
    ID_COLUMNS,
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationAccountRef,
    CitationTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
    account_refs,
    account_source,
    is_account_id,
    market_data_source,
    slugify,
    target_for_source,
    targets_for_sql,
)

AMEX = "AmexCard0000000000000000000000000000"
CITI = "CitiCard0000000000000000000000000000"
SAPPHIRE = "ChaseSapphire000000000000000000000000"


@pytest.mark.parametrize(
    ("label", "slug"),
    [
        ("Credit card", "credit-card"),
        ("  Sapphire Preferred®  ", "sapphire-preferred"),
        ("Chase -- Checking (…1234)", "chase-checking-1234"),
        ("CHECKING", "checking"),
        ("💳", ""),
    ],
)
def test_slugify(label: str, slug: str) -> None:
    assert slugify(label) == slug


def test_account_source_never_ends_with_an_empty_slug() -> None:
    assert account_source("Credit card") == "silvia://your-account/credit-card"
    assert account_source("💳") == "silvia://your-account/account"


TABLE: list[tuple[str, str, CitationTarget | None]] = [
    ("execute_sql", "silvia://your-portfolio", PortfolioTarget()),
    ("execute_python", "silvia://market-data/finnhub/AAPL", MarketDataTarget("AAPL")),
    ("execute_python", "silvia://market-data/finnhub/BRK.B", MarketDataTarget("BRK.B")),
    ("execute_python", "silvia://market-data/finnhub/<x>", None),
    ("execute_python", "silvia://market-data/finnhub", AnalysisTarget()),
    ("execute_python", "silvia://analysis", AnalysisTarget()),
    ("execute_python", "https://www.example.com/article", WebTarget("https://www.example.com/article")),
    ("execute_python", "javascript:alert(1)", None),
    ("read_tax_authority", "https://www.irs.gov/p590a", TaxReferenceTarget("https://www.irs.gov/p590a")),
    ("read_tax_authority", "silvia://tax-authority/irs/p17.md", TaxReferenceTarget(None)),
    ("read_tax_authority", "silvia://credit-card-corpus/x.md", None),
    ("read_credit_card_document", "https://www.americanexpress.com/benefits",
     CardDocumentTarget("https://www.americanexpress.com/benefits")),
    ("read_credit_card_document", "silvia://credit-card-corpus/guide.md", CardDocumentTarget(None)),
    ("read_mortgage_authority", "https://www.consumerfinance.gov/x",
     MortgageReferenceTarget("https://www.consumerfinance.gov/x")),
    ("read_mortgage_authority", "silvia://mortgage-code/reg-z.md", MortgageReferenceTarget(None)),
    ("read_mortgage_authority", "silvia://mortgage-code/", None),
    ("search_web", "https://www.investor.gov/index-funds", WebTarget("https://www.investor.gov/index-funds")),
    ("search_web", "silvia://search/search_web", None),
    ("search_web", "data:text/html,hi", None),
    ("unknown_tool", "https://example.com", None),
]


@pytest.mark.parametrize(("tool", "source", "target"), TABLE, ids=[f"{t}:{s}" for t, s, _ in TABLE])
def test_target_for_source(tool: str, source: str, target: CitationTarget | None) -> None:
    assert target_for_source(tool, source) == target


@pytest.mark.parametrize(
    ("ticker", "source"),
    [("aapl", "silvia://market-data/finnhub/AAPL"), (None, "silvia://market-data/finnhub"),
     ("", "silvia://market-data/finnhub"), ("A/../B", "silvia://market-data/finnhub")],
)
def test_market_data_source(ticker: str | None, source: str) -> None:
    assert market_data_source(ticker) == source


def row(name: str, source: str | None, account: str | None, **extra: object) -> dict[str, object]:
    values: dict[str, object] = {"account_name": name, **extra}
    if source is not None:
        values["source"] = source
    if account is not None:
        values["source_account_id"] = account
    return values


def test_two_cards_labelled_alike_pool_into_one_accounts_source() -> None:
    groups = targets_for_sql([
        row("Credit card", "plaid", AMEX, current_balance=-1200),
        row("Credit card", "plaid", CITI, current_balance=-300),
        row("Sapphire Preferred", "plaid", SAPPHIRE, current_balance=-80),
    ])
    assert [(g.source, g.title, len(g.rows)) for g in groups] == [
        ("silvia://your-account/credit-card", "Credit card", 2),
        ("silvia://your-account/sapphire-preferred", "Sapphire Preferred", 1),
    ]
    assert groups[0].target == AccountsTarget(
        (CitationAccountRef(AMEX, "plaid"), CitationAccountRef(CITI, "plaid"))
    )
    assert groups[1].target == AccountTarget(SAPPHIRE, "plaid")


def test_one_account_over_many_rows_is_one_account() -> None:
    groups = targets_for_sql([row("Checking", "plaid", AMEX, month=m) for m in range(3)])
    assert [g.target for g in groups] == [AccountTarget(AMEX, "plaid")]


def test_a_label_with_any_row_lacking_an_id_is_untyped() -> None:
    groups = targets_for_sql([row("Checking", "plaid", AMEX), row("Checking", None, None)])
    assert groups[0].target is None
    assert target_for_source("execute_sql", groups[0].source, groups[0].rows) is None


def test_crypto_rows_name_no_account() -> None:
    groups = targets_for_sql([row("Wallet", "crypto", "0xabcdefabcdefabcdef1234")])
    assert groups[0].target is None


def test_rows_without_a_label_are_the_portfolio() -> None:
    groups = targets_for_sql([{"ticker": "AAPL", "market_value": 10.0}, {"ticker": "VTI"}])
    assert [(g.source, g.target) for g in groups] == [("silvia://your-portfolio", PortfolioTarget())]


def test_label_falls_back_to_institution() -> None:
    groups = targets_for_sql([{"institution_name": "Chase", "source_account_id": AMEX}])
    assert groups[0].source == "silvia://your-account/chase"
    assert groups[0].target == AccountTarget(AMEX, None)


def test_sql_target_for_source_uses_the_rows_behind_it() -> None:
    rows = [row("Credit card", "plaid", AMEX), row("Credit card", "plaid", CITI)]
    target = target_for_source("execute_sql", "silvia://your-account/credit-card", rows)
    assert isinstance(target, AccountsTarget)
    assert target_for_source("execute_sql", "silvia://your-account/credit-card") is None


# SQL rows the model's query may return: any column may hold a JSON value of any type
# (json/jsonb columns come back as lists and dicts), or a well-formed id, label or source.
_LABELS = ("account_name", "name", "nickname", "official_name", "institution_name")
_cell = account_ids | st.sampled_from(["plaid", "Manual ", "crypto", "Checking"]) | json_values
hostile_rows = st.lists(
    st.fixed_dictionaries({}, optional=dict.fromkeys(("source", *ID_COLUMNS, *_LABELS), _cell)),
    max_size=6,
)


@given(hostile_rows)
def test_sql_rows_of_any_json_never_raise_and_cite_only_their_own_ids(
    rows: list[dict[str, object]]
) -> None:
    groups = targets_for_sql(rows)
    assert sum(len(g.rows) for g in groups) == len(rows)
    for group in groups:
        assert target_for_source("execute_sql", group.source, group.rows) == group.target
        if group.target is None or isinstance(group.target, PortfolioTarget):
            continue
        cells = [row.get(column) for row in group.rows for column in ID_COLUMNS]
        for ref in account_refs(group.target):
            assert is_account_id(ref.account_id) and ref.account_id in cells
