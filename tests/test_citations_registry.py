"""One meaning per source per turn: pooling, poisoning, and the checkpoint (seed 000)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.citation_json import json_values, target_like
from tests.support.examples import examples
from webapp.citations.registry import CHECKPOINT_FIELD, CitationRegistry
from webapp.citations.targets import (
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CitationAccountRef,
    CitationTarget,
    MarketDataTarget,
    TaxReferenceTarget,
    WebTarget,
    target_to_json,
)

A = "AccountAAAAAAAAAAAAAAAA"
B = "AccountBBBBBBBBBBBBBBBB"
C = "AccountCCCCCCCCCCCCCCCC"
SRC = "silvia://your-account/credit-card"
URL = "https://www.irs.gov/p17"


def recorded(*targets: CitationTarget | None) -> CitationTarget | None:
    registry = CitationRegistry()
    for target in targets:
        registry.record(SRC, target)
    return registry.target(SRC)


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ((AccountTarget(A, "plaid"),), AccountTarget(A, "plaid")),
        ((AccountTarget(A, "plaid"), AccountTarget(A, "plaid")), AccountTarget(A, "plaid")),
        (
            (AccountTarget(A, "plaid"), AccountTarget(B, "plaid")),
            AccountsTarget((CitationAccountRef(A, "plaid"), CitationAccountRef(B, "plaid"))),
        ),
        (
            (
                AccountsTarget((CitationAccountRef(A), CitationAccountRef(B))),
                AccountTarget(B),
                AccountTarget(C, "manual"),
            ),
            AccountsTarget(
                (CitationAccountRef(A), CitationAccountRef(B), CitationAccountRef(C, "manual"))
            ),
        ),
        ((AccountTarget(A), AccountTarget(A, "plaid")), AccountTarget(A, "plaid")),
        ((WebTarget(URL), WebTarget(URL)), WebTarget(URL)),
        ((None, None), None),
    ],
    ids=[
        "single",
        "same-again",
        "pool-two",
        "pool-dedup-order",
        "provider-learned",
        "same-web",
        "untyped-twice",
    ],
)
def test_pooling_and_agreement(
    targets: tuple[CitationTarget | None, ...], expected: CitationTarget | None
) -> None:
    assert recorded(*targets) == expected


@pytest.mark.parametrize(
    "targets",
    [
        (AccountTarget(A), None),
        (None, AccountTarget(A)),
        (WebTarget(URL), TaxReferenceTarget(URL)),
        (MarketDataTarget("AAPL"), MarketDataTarget("MSFT")),
        (AccountTarget(A), AnalysisTarget()),
        (AccountTarget(A), None, AccountTarget(A)),
        (WebTarget(URL), TaxReferenceTarget(URL), WebTarget(URL), WebTarget(URL)),
        (AccountTarget(A), None, AccountTarget(A), AccountTarget(B)),
    ],
    ids=[
        "ids-then-none",
        "none-then-ids",
        "web-vs-tax",
        "two-tickers",
        "account-vs-analysis",
        "stays-poisoned",
        "stays-poisoned-when-later-agree",
        "poisoned-no-pooling",
    ],
)
def test_disagreement_poisons_for_the_rest_of_the_turn(
    targets: tuple[CitationTarget | None, ...],
) -> None:
    assert recorded(*targets) is None


def test_sources_are_independent() -> None:
    registry = CitationRegistry()
    registry.record("a", WebTarget(URL))
    registry.record("b", MarketDataTarget("AAPL"))
    registry.record("a", TaxReferenceTarget(URL))
    assert registry.target("a") is None
    assert registry.target("b") == MarketDataTarget("AAPL")
    assert registry.target("never-written") is None
    assert "a" in registry and "never-written" not in registry


def test_checkpoint_round_trip_keeps_pooled_and_poisoned_sources() -> None:
    registry = CitationRegistry()
    registry.record(SRC, AccountTarget(A, "plaid"))
    registry.record(SRC, AccountTarget(B))
    registry.record("poisoned", WebTarget(URL))
    registry.record("poisoned", None)
    checkpoint = json.loads(
        json.dumps({"messages": [], "citationTargets": registry.to_checkpoint()})
    )
    resumed = CitationRegistry.from_checkpoint(checkpoint)
    assert resumed.target(SRC) == registry.target(SRC)
    assert resumed.target("poisoned") is None
    # Poisoned before the checkpoint stays poisoned after it.
    resumed.record("poisoned", WebTarget(URL))
    assert resumed.target("poisoned") is None
    # Pooling goes on across the resume.
    resumed.record(SRC, AccountTarget(C))
    assert resumed.target(SRC) == AccountsTarget(
        (CitationAccountRef(A, "plaid"), CitationAccountRef(B), CitationAccountRef(C))
    )


def test_checkpoint_json_is_the_seed_target_json() -> None:
    registry = CitationRegistry()
    registry.record(SRC, AccountTarget(A, "plaid"))
    assert registry.to_checkpoint() == {SRC: target_to_json(AccountTarget(A, "plaid"))}


@pytest.mark.parametrize(
    "checkpoint",
    [
        {"messages": []},
        {"citationTargets": None},
        {"citationTargets": []},
        {"citationTargets": "x"},
        None,
        [],
        "checkpoint",
        7,
    ],
    ids=["old", "null", "list", "string", "none", "not-a-dict", "str", "int"],
)
def test_old_or_malformed_checkpoint_resumes_empty(checkpoint: object) -> None:
    resumed = CitationRegistry.from_checkpoint(checkpoint)
    assert len(resumed) == 0
    resumed.record(SRC, AccountTarget(A))
    assert resumed.target(SRC) == AccountTarget(A)


def test_malformed_entry_resumes_untyped_and_written() -> None:
    resumed = CitationRegistry.from_checkpoint(
        {"citationTargets": {SRC: {"kind": "martian"}, "ok": {"kind": "analysis"}, "7": 7}}
    )
    assert resumed.target("ok") == AnalysisTarget()
    assert SRC in resumed and resumed.target(SRC) is None
    resumed.record(SRC, AccountTarget(A))
    assert resumed.target(SRC) is None


@pytest.mark.parametrize("provider", [[], {}, ["plaid"], 3], ids=repr)
def test_an_odd_provider_in_a_checkpoint_resumes_as_the_bare_account(provider: object) -> None:
    entry = {"kind": "account", "accountId": A, "provider": provider}
    resumed = CitationRegistry.from_checkpoint({CHECKPOINT_FIELD: {SRC: entry}})
    assert resumed.target(SRC) == AccountTarget(A)
    assert resumed.record(SRC, AccountTarget(B, "plaid")) == AccountsTarget(
        (CitationAccountRef(A), CitationAccountRef(B, "plaid"))
    )


# A checkpoint as the database may hand it back: the field any JSON, or a mapping whose keys
# may not even be strings and whose values are target-like or anything at all.
checkpoint_fields = st.dictionaries(
    st.text() | st.integers() | st.none(), target_like | json_values, min_size=1, max_size=6
)
checkpoints = (
    st.fixed_dictionaries({CHECKPOINT_FIELD: checkpoint_fields}, optional={"messages": json_values})
    | st.dictionaries(st.sampled_from([CHECKPOINT_FIELD, "messages"]), json_values)
    | json_values
)
later_writes = st.sampled_from(
    [AccountTarget(A), AccountTarget(B, "plaid"), WebTarget(URL), AnalysisTarget(), None]
)


@settings(max_examples=examples(200))
@given(checkpoints, later_writes)
def test_any_checkpoint_resumes_and_the_turn_can_go_on(
    checkpoint: object, later: CitationTarget | None
) -> None:
    resumed = CitationRegistry.from_checkpoint(checkpoint)
    field = checkpoint.get(CHECKPOINT_FIELD) if isinstance(checkpoint, dict) else None
    written = {k for k in field if isinstance(k, str)} if isinstance(field, dict) else set()
    assert set(resumed.to_checkpoint()) == written
    # What it resumed with is valid JSON that resumes to the same meanings.
    saved = json.loads(json.dumps({CHECKPOINT_FIELD: resumed.to_checkpoint()}))
    assert CitationRegistry.from_checkpoint(saved).to_checkpoint() == resumed.to_checkpoint()
    for source in written:
        before = resumed.target(source)
        after = resumed.record(source, later)
        assert resumed.target(source) == after
        if before is None or later is None:
            assert after is None  # Untyped (or unreadable) once, untyped for the turn.
