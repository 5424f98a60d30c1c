"""The target types and their exact wire JSON, and the tolerant reader (seed 000)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.citations import (
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
    parse_citation_target,
    target_to_json,
)

PLAID_ID = "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp"
MANUAL_ID = "0b8f3a52-6c1e-4e43-9d7e-2a7f1c9b5e10"

WIRE: list[tuple[CitationTarget, dict[str, Any]]] = [
    (WebTarget("https://www.irs.gov/x"), {"kind": "web", "url": "https://www.irs.gov/x"}),
    (TaxReferenceTarget("https://a.gov/"), {"kind": "tax_reference", "url": "https://a.gov/"}),
    (TaxReferenceTarget(None), {"kind": "tax_reference", "url": None}),
    (CardDocumentTarget(None), {"kind": "card_document", "url": None}),
    (MortgageReferenceTarget("https://b/"), {"kind": "mortgage_reference", "url": "https://b/"}),
    (MarketDataTarget("AAPL"), {"kind": "market_data", "ticker": "AAPL"}),
    (AnalysisTarget(), {"kind": "analysis"}),
    (PortfolioTarget(), {"kind": "portfolio"}),
    (
        AccountTarget(PLAID_ID, "plaid"),
        {"kind": "account", "accountId": PLAID_ID, "provider": "plaid"},
    ),
    (
        AccountTarget(PLAID_ID, None),
        {"kind": "account", "accountId": PLAID_ID, "provider": None},
    ),
    (
        AccountsTarget((CitationAccountRef(PLAID_ID, "plaid"), CitationAccountRef(MANUAL_ID))),
        {
            "kind": "accounts",
            "accounts": [
                {"accountId": PLAID_ID, "provider": "plaid"},
                {"accountId": MANUAL_ID, "provider": None},
            ],
        },
    ),
]


@pytest.mark.parametrize(("target", "wire"), WIRE, ids=[w["kind"] for _, w in WIRE])
def test_target_json_is_the_seeds_shape(target: CitationTarget, wire: dict[str, Any]) -> None:
    assert json.dumps(target_to_json(target)) == json.dumps(wire)
    assert parse_citation_target(json.loads(json.dumps(wire))) == target


def test_every_kind_of_the_seed_is_covered() -> None:
    kinds = {w["kind"] for _, w in WIRE}
    assert kinds == {
        "web", "tax_reference", "card_document", "mortgage_reference", "market_data",
        "analysis", "account", "accounts", "portfolio",
    }


@pytest.mark.parametrize(
    "value",
    [
        None, 1, True, "web", [], {}, {"kind": None}, {"kind": "video", "url": "https://x"},
        {"kind": "web"}, {"kind": "web", "url": ""}, {"kind": "web", "url": 3},
        {"kind": "tax_reference", "url": 5}, {"kind": "market_data"},
        {"kind": "market_data", "ticker": ["AAPL"]},
        {"kind": "account"}, {"kind": "account", "accountId": "short"},
        {"kind": "account", "accountId": "1234567890123456789"},
        {"kind": "account", "accountId": 12345678901234567890},
        {"kind": "accounts"}, {"kind": "accounts", "accounts": []},
        {"kind": "accounts", "accounts": "x"},
        {"kind": "accounts", "accounts": [{"accountId": PLAID_ID}, {"accountId": "bad"}]},
        {"KIND": "web", "url": "https://x"},
    ],
    ids=repr,
)
def test_malformed_or_unknown_values_read_as_none(value: object) -> None:
    assert parse_citation_target(value) is None


def test_unknown_provider_becomes_none_and_keeps_the_account() -> None:
    value = {"kind": "account", "accountId": PLAID_ID, "provider": "mx"}
    assert parse_citation_target(value) == AccountTarget(PLAID_ID, None)
    many = {"kind": "accounts", "accounts": [{"accountId": MANUAL_ID, "provider": 7}]}
    assert parse_citation_target(many) == AccountsTarget((CitationAccountRef(MANUAL_ID),))


def test_document_kind_without_url_key_means_url_null() -> None:
    assert parse_citation_target({"kind": "card_document"}) == CardDocumentTarget(None)


def test_extra_fields_are_ignored() -> None:
    assert parse_citation_target({"kind": "analysis", "label": "Live data"}) == AnalysisTarget()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
kinds = st.sampled_from(
    ["web", "tax_reference", "card_document", "mortgage_reference", "market_data", "analysis",
     "account", "accounts", "portfolio", "other"]
)


@given(json_values)
def test_parse_never_raises_on_any_json_value(value: object) -> None:
    parse_citation_target(value)


@given(kinds, st.dictionaries(st.sampled_from(["url", "ticker", "accountId", "provider",
                                               "accounts"]), json_values, max_size=4))
def test_parse_never_raises_on_target_like_values(kind: str, fields: dict[str, object]) -> None:
    result = parse_citation_target({"kind": kind, **fields})
    if result is not None:
        assert target_to_json(result)["kind"] == kind


ids = st.from_regex(r"[A-Za-z0-9_-]{16,40}", fullmatch=True).filter(lambda s: not s.isdigit())
providers = st.sampled_from(["plaid", "manual", "snaptrade", None])
refs = st.builds(CitationAccountRef, ids, providers)
targets: st.SearchStrategy[CitationTarget] = st.one_of(
    st.builds(WebTarget, st.text(min_size=1).filter(str.strip)),
    st.builds(TaxReferenceTarget, st.none() | st.text(min_size=1).filter(str.strip)),
    st.builds(CardDocumentTarget, st.none() | st.text(min_size=1).filter(str.strip)),
    st.builds(MortgageReferenceTarget, st.none() | st.text(min_size=1).filter(str.strip)),
    st.builds(MarketDataTarget, st.text(min_size=1).filter(str.strip)),
    st.just(AnalysisTarget()),
    st.just(PortfolioTarget()),
    st.builds(AccountTarget, ids, providers),
    st.builds(AccountsTarget, st.lists(refs, min_size=1, max_size=4).map(tuple)),
)


@given(targets)
def test_parse_round_trips_what_target_to_json_writes(target: CitationTarget) -> None:
    assert parse_citation_target(json.loads(json.dumps(target_to_json(target)))) == target


def test_importing_the_core_pulls_in_no_framework_database_or_network() -> None:
    code = (
        "import sys, webapp.citations\n"
        "bad = {'flask', 'jinja2', 'sqlite3', 'sqlalchemy', 'requests', 'httpx', 'psycopg'}\n"
        "print(sorted(bad & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
