"""Every row of the seed's tool / source / target table, and SQL rows grouped by label."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.citation_json import account_ids, json_values
from tests.support.examples import examples
from webapp.citations import account_ids as account_id_rules
from webapp.citations import sources
from webapp.citations.account_ids import ID_COLUMNS, account_ref_from_row, is_account_id
from webapp.citations.sources import (
    SqlGroup,
    account_source,
    market_data_source,
    row_label,
    slugify,
    target_for_source,
    targets_for_sql,
)
from webapp.citations.targets import (
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
    target_for_accounts,
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


ASCII = [chr(code) for code in range(128)]


@pytest.mark.parametrize("char", ASCII, ids=[f"{ord(c):#04x}" for c in ASCII])
def test_an_ascii_label_is_slugged_and_sourced_as_the_general_rules_do(char: str) -> None:
    # A no-break space after a label sends it down the general path (it is not ASCII) and
    # changes nothing: NFKC makes it a space, and a space ends no word.
    for other in ASCII:
        for label in (char, char + other, f"Ab{char}{other}9", f"{char} 1{other}"):
            general = label + "\u00a0"
            assert slugify(label) == slugify(general), repr(label)
            assert account_source(label) == account_source(general), repr(label)


# Labels of a few characters the ASCII paths decide on (a letter, a digit, a space, a hyphen
# and a symbol; then more), so that runs of each in every order come up; and any ASCII.
_ascii_labels = (
    st.text(st.sampled_from("a9 -$"), max_size=5)
    | st.text(st.sampled_from("aZ9 -._$\t"), max_size=12)
    | st.text(st.characters(max_codepoint=127), max_size=24)
)


@settings(max_examples=examples(300))
@given(_ascii_labels)
@example("Credit card")
@example("a-b")
@example("a$b")
@example("a  b")
@example("a--b")
@example("-a")
@example("a-")
@example(" a")
@example("a\tb")
@example("A-B 9")
def test_any_ascii_label_is_sourced_as_the_general_rules_do(label: str) -> None:
    general = label + "\u00a0"  # Not ASCII, and NFKC makes it a space that ends no word.
    assert slugify(label) == slugify(general)
    assert account_source(label) == account_source(general)


def test_account_source_never_ends_with_an_empty_slug() -> None:
    assert account_source("Credit card") == "silvia://your-account/credit-card"
    card, bank = account_source("💳"), account_source("🏦")
    assert card.startswith("silvia://your-account/account-") and card != bank


TABLE: list[tuple[str, str, CitationTarget | None]] = [
    ("execute_sql", "silvia://your-portfolio", PortfolioTarget()),
    ("execute_python", "silvia://market-data/finnhub/AAPL", MarketDataTarget("AAPL")),
    ("execute_python", "silvia://market-data/finnhub/BRK.B", MarketDataTarget("BRK.B")),
    ("execute_python", "silvia://market-data/finnhub/<x>", None),
    ("execute_python", "silvia://market-data/finnhub", AnalysisTarget()),
    ("execute_python", "silvia://analysis", AnalysisTarget()),
    (
        "execute_python",
        "https://www.example.com/article",
        WebTarget("https://www.example.com/article"),
    ),
    ("execute_python", "javascript:alert(1)", None),
    (
        "read_tax_authority",
        "https://www.irs.gov/p590a",
        TaxReferenceTarget("https://www.irs.gov/p590a"),
    ),
    ("read_tax_authority", "silvia://tax-authority/irs/p17.md", TaxReferenceTarget(None)),
    ("read_tax_authority", "silvia://credit-card-corpus/x.md", None),
    (
        "read_credit_card_document",
        "https://www.americanexpress.com/benefits",
        CardDocumentTarget("https://www.americanexpress.com/benefits"),
    ),
    ("read_credit_card_document", "silvia://credit-card-corpus/guide.md", CardDocumentTarget(None)),
    (
        "read_mortgage_authority",
        "https://www.consumerfinance.gov/x",
        MortgageReferenceTarget("https://www.consumerfinance.gov/x"),
    ),
    ("read_mortgage_authority", "silvia://mortgage-code/reg-z.md", MortgageReferenceTarget(None)),
    ("read_mortgage_authority", "silvia://mortgage-code/", None),
    (
        "search_web",
        "https://www.investor.gov/index-funds",
        WebTarget("https://www.investor.gov/index-funds"),
    ),
    ("search_web", "silvia://search/search_web", None),
    ("search_web", "data:text/html,hi", None),
    ("unknown_tool", "https://example.com", None),
]


@pytest.mark.parametrize(("tool", "source", "target"), TABLE, ids=[f"{t}:{s}" for t, s, _ in TABLE])
def test_target_for_source(tool: str, source: str, target: CitationTarget | None) -> None:
    assert target_for_source(tool, source) == target


@pytest.mark.parametrize(
    ("ticker", "source"),
    [
        ("aapl", "silvia://market-data/finnhub/AAPL"),
        (None, "silvia://market-data/finnhub"),
        ("", "silvia://market-data/finnhub"),
        ("A/../B", "silvia://market-data/finnhub"),
    ],
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
    groups = targets_for_sql(
        [
            row("Credit card", "plaid", AMEX, current_balance=-1200),
            row("Credit card", "plaid", CITI, current_balance=-300),
            row("Sapphire Preferred", "plaid", SAPPHIRE, current_balance=-80),
        ]
    )
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
    assert [(g.source, g.target) for g in groups] == [
        ("silvia://your-portfolio", PortfolioTarget())
    ]


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
    rows: list[dict[str, object]],
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


# The seed's rules applied one row at a time, as plainly as they read: the oracle the
# one-pass `targets_for_sql` must match exactly, row order, titles and pooling included.
def reference_targets(rows: Sequence[Mapping[str, object]]) -> list[SqlGroup]:
    groups: dict[str, tuple[str, list[Mapping[str, object]]]] = {}
    for one in rows:
        label = row_label(one)
        source = "silvia://your-portfolio" if label is None else account_source(label)
        groups.setdefault(source, (label or "Your portfolio", []))[1].append(one)
    cited = []
    for source, (title, group) in groups.items():
        target: CitationTarget | None = PortfolioTarget()
        if source != "silvia://your-portfolio":
            refs = [account_ref_from_row(one) for one in group]
            typed = tuple(ref for ref in refs if ref is not None)
            target = target_for_accounts(typed) if len(typed) == len(refs) else None
        cited.append(SqlGroup(source, title, tuple(group), target))
    return cited


# Rows drawn from small pools, so labels, ids and sources repeat, interleave and collide:
# the repeats are what the one-pass caches skip, and where a wrong skip would show. Most
# rows name an account, so a label often pools several before one row spoils it.
_pooled_cell = st.sampled_from(
    [
        AMEX,
        CITI,
        SAPPHIRE,
        "1234567890123456",
        "short",
        None,
        "Checking",
        " Checking ",
        "CHECKING",
        "credit-card",
        "Credit card",
        "  ",
        "",
        "💳",
        "plaid",
        "Plaid ",
        "manual",
        "snaptrade",
        "crypto",
        7,
        True,
        ["Checking"],
    ]
)
_account_row = st.fixed_dictionaries(
    {
        "account_name": st.sampled_from(
            ["Checking", " Checking ", "CHECKING", "Credit card", "credit-card", "Savings"]
        ),
        "source_account_id": st.sampled_from(
            [AMEX, CITI, SAPPHIRE, AMEX, CITI, "1234567890123456", None]
        ),
    },
    optional={
        "source": st.sampled_from(["plaid", "Plaid ", "manual", None, "crypto"]),
        "account_id": st.sampled_from([CITI, SAPPHIRE, "1234567890123456"]),
    },
)
_any_row = st.fixed_dictionaries(
    {}, optional=dict.fromkeys(("source", *ID_COLUMNS, *_LABELS), _pooled_cell)
)
pooled_rows = st.lists(st.one_of(_account_row, _account_row, _account_row, _any_row), max_size=40)


@settings(max_examples=examples(300))
@given(pooled_rows | hostile_rows)
def test_one_pass_equals_the_rules_row_by_row(rows: list[dict[str, object]]) -> None:
    assert targets_for_sql(rows) == reference_targets(rows)
    assert targets_for_sql(iter(rows)) == reference_targets(rows)  # Read once, not twice.
    for group in reference_targets(rows):
        assert target_for_source("execute_sql", group.source, group.rows) == group.target


def test_interleaved_cards_under_one_label_keep_first_seen_order() -> None:
    rows = [
        row("Credit card", "plaid", CITI, n=i) if i % 2 else row("Credit card", "plaid", AMEX, n=i)
        for i in range(6)
    ]
    (group,) = targets_for_sql(rows)
    assert group.rows == tuple(rows)
    assert group.target == AccountsTarget(
        (CitationAccountRef(AMEX, "plaid"), CitationAccountRef(CITI, "plaid"))
    )


def test_an_id_seen_without_then_with_its_provider_is_one_account() -> None:
    rows = [
        row("Checking", None, AMEX),
        row("Checking", None, AMEX),
        row("Checking", "plaid", AMEX),
    ]
    assert [g.target for g in targets_for_sql(rows)] == [AccountTarget(AMEX, "plaid")]


@pytest.mark.parametrize(
    "last",
    [
        row("Checking", "crypto", AMEX),
        row("Checking", None, None),
        row("Checking", "plaid", "42"),
        row("Checking", 3, AMEX),  # type: ignore[arg-type]
    ],
    ids=["crypto", "no-id", "digits-only", "source-not-a-string"],
)
def test_a_row_after_many_good_ones_still_leaves_the_label_untyped(last: dict[str, object]) -> None:
    rows = [row("Checking", "plaid", AMEX, n=i) for i in range(50)] + [last]
    assert [g.target for g in targets_for_sql(rows)] == [None]


def test_same_id_with_another_source_cell_is_read_again() -> None:
    rows = [row("Checking", "plaid", AMEX), row("Checking", "crypto", AMEX)]
    assert [g.target for g in targets_for_sql(rows)] == [None]
    rows = [row("Checking", "plaid", AMEX), row("Checking", "Manual ", AMEX)]
    assert [g.target for g in targets_for_sql(rows)] == [AccountTarget(AMEX, "plaid")]


def test_cells_that_slug_alike_are_one_source_titled_by_the_first() -> None:
    rows = [
        row(" credit-card ", "plaid", AMEX),
        row("Credit card", "plaid", CITI),
        row("CREDIT CARD", "plaid", AMEX),
    ]
    (group,) = targets_for_sql(rows)
    assert (group.source, group.title, len(group.rows)) == (
        "silvia://your-account/credit-card",
        "credit-card",
        3,
    )


def test_blank_and_non_string_labels_fall_through_to_later_columns() -> None:
    rows: list[dict[str, object]] = [
        {"account_name": "   ", "nickname": "Joint", "source_account_id": AMEX},
        {"account_name": 5, "institution_name": "Chase", "account_id": CITI},
        {"ticker": "VTI"},
        {"account_name": None, "name": "Joint", "source_account_id": AMEX},
        {"account_name": None, "ticker": "AAPL"},
    ]
    assert [(g.source, g.title, len(g.rows), g.target) for g in targets_for_sql(rows)] == [
        ("silvia://your-account/joint", "Joint", 2, AccountTarget(AMEX, None)),
        ("silvia://your-account/chase", "Chase", 1, AccountTarget(CITI, None)),
        ("silvia://your-portfolio", "Your portfolio", 2, PortfolioTarget()),
    ]


def test_rows_may_be_any_mapping() -> None:
    rows = [MappingProxyType(row("Checking", "plaid", AMEX)), MappingProxyType({"ticker": "VTI"})]
    assert targets_for_sql(rows) == reference_targets(list(rows))


def test_each_distinct_label_is_slugged_and_each_distinct_id_matched_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slugged: list[str] = []
    matched: list[str] = []
    pattern = account_id_rules._ID

    class CountingPattern:
        def fullmatch(self, value: str) -> re.Match[str] | None:
            matched.append(value)
            return pattern.fullmatch(value)

    def counting_slugify(label: str) -> str:
        slugged.append(label)
        return slugify(label)

    monkeypatch.setattr(sources, "slugify", counting_slugify)
    monkeypatch.setattr(account_id_rules, "_ID", CountingPattern())
    rows = [
        row(("Credit card", "Checking")[i % 2], "plaid", (AMEX, CITI, SAPPHIRE)[i % 3], n=i)
        for i in range(3000)
    ]
    # An invalid unified id falls through to the native column, on every such row.
    rows += [
        {
            "account_name": "Checking",
            "source_account_id": "1234567890123456",
            "account_id": SAPPHIRE,
        }
        for _ in range(100)
    ]
    groups = targets_for_sql(rows)
    assert sorted(slugged) == ["Checking", "Credit card"]
    assert sorted(matched) == sorted([AMEX, CITI, SAPPHIRE, "1234567890123456"])
    assert groups == reference_targets(rows)
