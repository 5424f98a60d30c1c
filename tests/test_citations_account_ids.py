"""Account ids: the id test, the column order, candidates and the account path (seed 000)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.citation_json import json_values
from webapp.citations.account_ids import (
    ID_COLUMNS,
    AccountReader,
    account_id_candidates,
    account_ref_from_row,
    encode_uri_component,
    is_account_id,
    match_account,
)
from webapp.citations.targets import CitationAccountRef

PLAID = "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp"
SNAP = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
MANUAL = "0b8f3a52-6c1e-4e43-9d7e-2a7f1c9b5e10"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a" * 15, False),
        ("a" * 16, True),
        ("a" * 128, True),
        ("a" * 129, False),
        ("1" * 16, False),
        ("1" * 15 + "-", True),
        ("1234567890-12345", True),
        ("_" * 16, True),
        ("-" * 16, True),
        ("abcdefghijklmnoé", False),
        ("abcdefghijklmnop\n", False),
        ("abcdefgh ijklmnop", False),
        ("abcdefgh.ijklmnop", False),
        ("abcdefgh/ijklmnop", False),
        ("١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦", False),
        ("ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐ", False),
        (1234567890123456, False),
        (True, False),
        (None, False),
        (b"abcdefghijklmnop", False),
        (["abcdefghijklmnop"], False),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_is_account_id_edges(value: object, expected: bool) -> None:
    assert is_account_id(value) is expected


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"source": "plaid", "source_account_id": PLAID}, CitationAccountRef(PLAID, "plaid")),
        ({"source": "manual", "source_account_id": MANUAL}, CitationAccountRef(MANUAL, "manual")),
        ({"source": "snaptrade", "source_account_id": SNAP}, CitationAccountRef(SNAP, "snaptrade")),
        ({"source": "Plaid ", "source_account_id": PLAID}, CitationAccountRef(PLAID, "plaid")),
        ({"source_account_id": PLAID}, CitationAccountRef(PLAID, None)),
        ({"source": None, "source_account_id": PLAID}, CitationAccountRef(PLAID, None)),
        ({"source": "crypto", "source_account_id": PLAID}, None),
        ({"source": "crypto", "account_id": PLAID}, None),
        ({"source": 3, "source_account_id": PLAID}, None),
        ({"snaptrade_account_id": SNAP}, CitationAccountRef(SNAP, "snaptrade")),
        ({"manual_account_uuid": MANUAL}, CitationAccountRef(MANUAL, "manual")),
        ({"account_uuid": MANUAL}, CitationAccountRef(MANUAL, "manual")),
        ({"account_id": PLAID}, CitationAccountRef(PLAID, None)),
        (
            {"source_account_id": "42", "snaptrade_account_id": SNAP},
            CitationAccountRef(SNAP, "snaptrade"),
        ),
        (
            {"source_account_id": None, "manual_account_uuid": 7, "account_uuid": MANUAL},
            CitationAccountRef(MANUAL, "manual"),
        ),
        (
            {"source_account_id": PLAID, "snaptrade_account_id": SNAP, "account_id": MANUAL},
            CitationAccountRef(PLAID, None),
        ),
        (
            {"manual_account_uuid": MANUAL, "account_id": PLAID},
            CitationAccountRef(MANUAL, "manual"),
        ),
        ({"account_id": "1234567890123456"}, None),
        ({"account_name": "Credit card", "current_balance": 1234.5}, None),
        (
            {
                "clerk_id": "user_2abcdefghijklmnopqrstu",
                "item_id": PLAID,
                "access_token": "access-sandbox-0123456789abcdef",
            },
            None,
        ),
    ],
    ids=[
        "plaid",
        "manual",
        "snaptrade",
        "source-case-and-space",
        "source-not-selected",
        "source-null",
        "crypto",
        "crypto-native",
        "source-not-a-string",
        "snaptrade-column",
        "manual-uuid",
        "account-uuid",
        "account-id",
        "invalid-first-falls-through",
        "non-ids-fall-through",
        "unified-wins",
        "manual-before-account-id",
        "digits-only",
        "no-id-columns",
        "secret-columns-never-read",
    ],
)
def test_account_ref_from_row(row: dict[str, object], expected: CitationAccountRef | None) -> None:
    assert account_ref_from_row(row) == expected


def test_candidates_and_matching() -> None:
    account = {
        "source_account_id": SNAP,
        "snaptrade_account_id": SNAP,
        "account_id": PLAID,
        "account_name": "Individual",
        "clerk_id": "user_secret_123456789",
    }
    assert account_id_candidates(account) == (SNAP, PLAID)
    other = {"source_account_id": MANUAL}
    assert match_account([other, account], PLAID) is account
    assert match_account([other, account], MANUAL) is other
    assert match_account([other, account], "user_secret_123456789") is None
    assert match_account([other, account], "../etc/passwd") is None


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("abc-_.!~*'()XYZ09", "abc-_.!~*'()XYZ09"),
        ("a b", "a%20b"),
        ("a/b?c#d&e=f+g", "a%2Fb%3Fc%23d%26e%3Df%2Bg"),
        ("%", "%25"),
        (":@$,;", "%3A%40%24%2C%3B"),
        ("café", "caf%C3%A9"),
        ("€", "%E2%82%AC"),
        ("😀", "%F0%9F%98%80"),
        ("[]", "%5B%5D"),
    ],
    ids=[
        "unreserved",
        "space",
        "reserved",
        "percent",
        "sub-delims",
        "latin",
        "euro",
        "astral",
        "brackets",
    ],
)
def test_encode_uri_component_matches_javascript(value: str, encoded: str) -> None:
    assert encode_uri_component(value) == encoded


@given(st.text())
def test_encode_uri_component_round_trips(value: str) -> None:
    try:
        encoded = encode_uri_component(value)
    except UnicodeEncodeError:
        # A lone surrogate: JavaScript's encodeURIComponent throws URIError too.
        assert any(0xD800 <= ord(c) <= 0xDFFF for c in value)
        return
    assert unquote(encoded) == value
    assert all(c.isascii() and c not in "/?#&=+ " for c in encoded)


PROVIDERS = ("plaid", "manual", "snaptrade")


# The seed's "Account ids" rule as it reads, one row at a time: the oracle for both the
# function and the caching reader.
def seed_account(row: Mapping[str, object]) -> tuple[str, str | None] | None:
    provider = None
    source = row.get("source")
    if source is not None:
        if not isinstance(source, str) or source.strip().lower() not in PROVIDERS:
            return None
        provider = source.strip().lower()
    for column, named in [
        ("source_account_id", provider),
        ("snaptrade_account_id", "snaptrade"),
        ("manual_account_uuid", "manual"),
        ("account_uuid", "manual"),
        ("account_id", None),
    ]:
        value = row.get(column)
        if (
            isinstance(value, str)
            and re.fullmatch(r"[A-Za-z0-9_-]{16,128}", value, re.ASCII)
            and not value.isdigit()
        ):
            return value, named
    return None


_cell = (
    st.sampled_from(
        [
            PLAID,
            SNAP,
            MANUAL,
            "1234567890123456",
            "short",
            "plaid",
            " Manual",
            "SNAPTRADE",
            "crypto",
            None,
            3,
            True,
            ["plaid"],
        ]
    )
    | json_values
)
account_rows = st.lists(
    st.fixed_dictionaries({}, optional=dict.fromkeys(("source", *ID_COLUMNS), _cell)),
    max_size=20,
)


@given(account_rows)
def test_one_reader_over_many_rows_reads_each_as_the_seed_does(
    rows: list[dict[str, object]],
) -> None:
    reader = AccountReader()
    for row in rows + rows:  # The second time round, every check comes from the cache.
        expected = seed_account(row)
        assert reader.read(row) == expected
        ref = account_ref_from_row(row)
        assert (None if ref is None else (ref.account_id, ref.provider)) == expected


@pytest.mark.parametrize(
    "value",
    ["a" * 16, "1" * 16, "abcdefgh ijklmnop", PLAID, None, 1234567890123456, ["a" * 16]],
    ids=repr,
)
def test_the_reader_checks_ids_as_is_account_id_does(value: object) -> None:
    reader = AccountReader()
    assert reader.is_id(value) is is_account_id(value)
    assert reader.is_id(value) is is_account_id(value)


@pytest.mark.parametrize(
    "row",
    [
        {"source": "crypto", "source_account_id": PLAID},
        {"source": " Manual", "source_account_id": MANUAL},
        {"source_account_id": PLAID},
        {"source": None, "source_account_id": PLAID},
        {"source": 3, "source_account_id": PLAID},
        {"source": "plaid", "source_account_id": "1234567890123456", "account_id": PLAID},
        {"source": "snaptrade", "source_account_id": "short", "snaptrade_account_id": SNAP},
    ],
    ids=["crypto", "manual", "no-source", "null-source", "number", "digits", "short"],
)
def test_the_reader_reads_a_row_from_its_caches_as_the_seed_does(row: dict[str, object]) -> None:
    reader = AccountReader()
    # The first read fills the caches; the later ones take the inline path through them.
    assert [reader.read(row) for _ in range(3)] == [seed_account(row)] * 3
