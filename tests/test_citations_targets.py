"""The target types and their exact wire JSON, and the tolerant reader (seed 000)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.citation_json import (
    account_ids,
    json_values,
    kinds,
    providers,
    target_like,
)
from tests.support.examples import examples
from webapp.citations.parse import parse_citation_target, target_from_json
from webapp.citations.targets import (
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
    TaxReferenceTarget,
    WebTarget,
    account_refs,
    names_provider,
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


@pytest.mark.parametrize(("target", "wire"), WIRE, ids=[w["kind"] for _, w in WIRE])
def test_target_from_json_is_the_inverse(target: CitationTarget, wire: dict[str, Any]) -> None:
    assert target_from_json(wire) == target


@pytest.mark.parametrize("value", [None, {}, {"kind": "web"}, {"kind": "nope"}], ids=repr)
def test_target_from_json_refuses_what_is_not_a_target(value: object) -> None:
    with pytest.raises(ValueError, match="not a citation target"):
        target_from_json(value)


def test_every_kind_of_the_seed_is_covered() -> None:
    kinds = {w["kind"] for _, w in WIRE}
    assert kinds == {
        "web",
        "tax_reference",
        "card_document",
        "mortgage_reference",
        "market_data",
        "analysis",
        "account",
        "accounts",
        "portfolio",
    }


@pytest.mark.parametrize(
    "value",
    [
        None,
        1,
        True,
        "web",
        [],
        {},
        {"kind": None},
        {"kind": "video", "url": "https://x"},
        {"kind": "web"},
        {"kind": "web", "url": ""},
        {"kind": "web", "url": 3},
        {"kind": "tax_reference", "url": 5},
        {"kind": "market_data"},
        {"kind": "market_data", "ticker": ["AAPL"]},
        {"kind": "account"},
        {"kind": "account", "accountId": "short"},
        {"kind": "account", "accountId": "1234567890123456789"},
        {"kind": "account", "accountId": 12345678901234567890},
        {"kind": "accounts"},
        {"kind": "accounts", "accounts": []},
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


@given(json_values)
def test_parse_never_raises_on_any_json_value(value: object) -> None:
    parse_citation_target(value)


@given(
    kinds,
    st.dictionaries(
        st.sampled_from(["url", "ticker", "accountId", "provider", "accounts"]),
        json_values,
        max_size=4,
    ),
)
def test_parse_never_raises_on_target_like_values(kind: str, fields: dict[str, object]) -> None:
    result = parse_citation_target({"kind": kind, **fields})
    if result is not None:
        assert target_to_json(result)["kind"] == kind


KNOWN_PROVIDERS = {"plaid", "manual", "snaptrade"}


@given(account_ids, json_values)
def test_a_valid_account_survives_any_json_provider(account_id: str, provider: object) -> None:
    known = cast(
        "CitationAccountProvider | None",
        provider if isinstance(provider, str) and provider in KNOWN_PROVIDERS else None,
    )
    one = {"kind": "account", "accountId": account_id, "provider": provider}
    assert parse_citation_target(one) == AccountTarget(account_id, known)
    many = {"kind": "accounts", "accounts": [{"accountId": account_id, "provider": provider}]}
    assert parse_citation_target(many) == AccountsTarget((CitationAccountRef(account_id, known),))


@pytest.mark.parametrize("provider", [[], ["plaid"], {}, {"plaid": 1}, 1.5, True], ids=repr)
@pytest.mark.parametrize("kind", ["account", "accounts"])
def test_an_unhashable_or_odd_provider_is_dropped(kind: str, provider: object) -> None:
    ref = {"accountId": PLAID_ID, "provider": provider}
    value = {"kind": kind, **ref} if kind == "account" else {"kind": kind, "accounts": [ref]}
    result = parse_citation_target(value)
    assert result is not None and target_to_json(result)["kind"] == kind
    assert all(r.provider is None for r in account_refs(result))


@settings(max_examples=examples(300))
@given(target_like)
def test_parse_never_raises_and_what_it_reads_round_trips(value: dict[str, object]) -> None:
    result = parse_citation_target(value)
    if result is not None:
        wire = target_to_json(result)
        assert wire["kind"] == value["kind"]
        assert parse_citation_target(json.loads(json.dumps(wire))) == result


refs = st.builds(CitationAccountRef, account_ids, providers)
targets: st.SearchStrategy[CitationTarget] = st.one_of(
    st.builds(WebTarget, st.text(min_size=1).filter(str.strip)),
    st.builds(TaxReferenceTarget, st.none() | st.text(min_size=1).filter(str.strip)),
    st.builds(CardDocumentTarget, st.none() | st.text(min_size=1).filter(str.strip)),
    st.builds(MortgageReferenceTarget, st.none() | st.text(min_size=1).filter(str.strip)),
    st.builds(MarketDataTarget, st.text(min_size=1).filter(str.strip)),
    st.just(AnalysisTarget()),
    st.just(PortfolioTarget()),
    st.builds(AccountTarget, account_ids, providers),
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


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Plaid checking", True),
        ("via SnapTrade", True),
        ("MANUAL", True),
        ("MANUAL entry", False),
        ("Checking", False),
    ],
)
def test_provider_names_are_found_in_any_case(text: str, named: bool) -> None:
    assert names_provider(text) is named
