"""The demo data: the seed's hard cases as real rows, stable ids, and an idempotent seed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa

from webapp.citations.account_ids import account_id_candidates, account_ref_from_row, match_account
from webapp.store.accounts import NATIVE_ID_COLUMN, find_account, list_accounts, list_holdings
from webapp.store.demo import seed_demo
from webapp.store.engine import create_store_engine
from webapp.store.migrate import upgrade_database
from webapp.store.schema import metadata
from webapp.store.users import authenticate

if TYPE_CHECKING:
    from tests.conftest import SqlBackend

DEMO_ACCOUNTS = [
    ("plaid", "American Express", "Credit card", "credit"),
    ("plaid", "Chase", "Checking", "depository"),
    ("plaid", "Chase", "Sapphire Preferred", "credit"),
    ("plaid", "Chase", "Savings", "depository"),
    ("plaid", "Citi", "Credit card", "credit"),
    ("plaid", "Wells Fargo", "Checking", "depository"),
    ("snaptrade", "Robinhood", "Individual", "investment"),
    ("manual", None, "Home", "property"),
    ("crypto", "Ethereum", "Crypto wallet", "crypto"),
]
ALEX_ACCOUNTS = [
    ("plaid", "Bank of America", "Checking", "depository"),
    ("plaid", "Bank of America", "Credit card", "credit"),
]
# Derived from the fixed seed: docs and tests may quote them.
PINNED_IDS = {
    ("American Express", "Credit card"): "AtVPgKt5aF8ZFKGcCMHn2zgTfu4yxR1yPA0xf",
    ("Citi", "Credit card"): "TiKrtEeZro6LlosaJDAd0A35qvEEagV6MwQGD",
    ("Robinhood", "Individual"): "4bb2bf39-0769-4bcc-a7fa-bbd285e28520",
    (None, "Home"): "54a41f33-3f3f-4e9d-be2a-8d3e3f074f5c",
}


def _snapshot(engine: sa.Engine) -> dict[str, list[tuple[object, ...]]]:
    with engine.connect() as connection:
        return {
            table.name: [
                tuple(row)
                for row in connection.execute(sa.select(table).order_by(*table.primary_key.columns))
            ]
            for table in metadata.sorted_tables
        }


def _shape(accounts: Sequence[Mapping[str, object]]) -> list[tuple[object, ...]]:
    return sorted(
        (
            (a["source"], a["institution_name"], a["account_name"], a["account_type"])
            for a in accounts
        ),
        key=repr,
    )


@pytest.mark.parametrize(
    ("username", "expected"),
    [("demo", DEMO_ACCOUNTS), ("alex", ALEX_ACCOUNTS)],
    ids=["demo", "alex"],
)
def test_each_user_has_the_designed_accounts(
    sql_backend: SqlBackend, username: str, expected: list[tuple[object, ...]]
) -> None:
    accounts = list_accounts(sql_backend.engine, sql_backend.users[username].id)
    assert _shape(accounts) == sorted(expected, key=repr)


def test_credit_cards_show_amounts_owed(sql_backend: SqlBackend) -> None:
    for user in sql_backend.users.values():
        cards = [
            a for a in list_accounts(sql_backend.engine, user.id) if a["account_type"] == "credit"
        ]
        assert cards
        for card in cards:
            assert isinstance(card["current_balance"], float) and card["current_balance"] > 0
            assert isinstance(card["credit_limit"], int | float)
            assert card["credit_limit"] > card["current_balance"]


@pytest.mark.parametrize(("institution", "name"), list(PINNED_IDS), ids=lambda v: str(v))
def test_ids_are_derived_from_the_fixed_seed(
    sql_backend: SqlBackend, institution: str | None, name: str
) -> None:
    accounts = list_accounts(sql_backend.engine, sql_backend.users["demo"].id)
    (account,) = [
        a for a in accounts if (a["institution_name"], a["account_name"]) == (institution, name)
    ]
    assert account["source_account_id"] == PINNED_IDS[(institution, name)]


def test_every_account_is_found_by_each_of_its_ids(sql_backend: SqlBackend) -> None:
    for user in sql_backend.users.values():
        accounts = list_accounts(sql_backend.engine, user.id)
        for account in accounts:
            source = account["source"]
            ref = account_ref_from_row(account)
            if source == "crypto":  # a wallet names no account (seed 000)
                assert account["source_account_id"] is None and ref is None
                assert account_id_candidates(account) == ()
                continue
            native = NATIVE_ID_COLUMN[str(source)]
            assert account[native] == account["source_account_id"]
            assert ref is not None and ref.provider == source
            for candidate in account_id_candidates(account):
                assert match_account(accounts, candidate) is account
                assert find_account(sql_backend.engine, user.id, candidate) == account


def test_no_user_finds_another_users_account(sql_backend: SqlBackend) -> None:
    demo, alex = sql_backend.users["demo"], sql_backend.users["alex"]
    for owner, other in ((demo, alex), (alex, demo)):
        for account in list_accounts(sql_backend.engine, owner.id):
            for candidate in account_id_candidates(account):
                assert find_account(sql_backend.engine, other.id, candidate) is None


def test_the_brokerage_holds_aapl_and_vti_and_the_wallet_ether(sql_backend: SqlBackend) -> None:
    holdings = list_holdings(sql_backend.engine, sql_backend.users["demo"].id)
    found = {(h["account_name"], h["ticker"], h["source"]) for h in holdings}
    assert found == {
        ("Individual", "AAPL", "snaptrade"),
        ("Individual", "VTI", "snaptrade"),
        ("Crypto wallet", "ETH", "crypto"),
    }
    assert list_holdings(sql_backend.engine, sql_backend.users["alex"].id) == []


def test_seeding_again_changes_nothing(sql_backend: SqlBackend) -> None:
    # Sync times count back from the moment of seeding: the same moment, the same rows.
    moment = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
    assert seed_demo(sql_backend.engine, "demo", now=moment) == sql_backend.users
    before = _snapshot(sql_backend.engine)
    assert seed_demo(sql_backend.engine, "demo", now=moment) == sql_backend.users
    assert _snapshot(sql_backend.engine) == before


def test_two_databases_get_the_same_ids(tmp_path: Path, sql_backend: SqlBackend) -> None:
    other = create_store_engine(f"sqlite:///{tmp_path / 'other.sqlite'}")
    try:
        upgrade_database(other)
        users = seed_demo(other, "demo")
        for name, user in users.items():
            mine = list_accounts(sql_backend.engine, sql_backend.users[name].id)
            theirs = list_accounts(other, user.id)
            assert [a["source_account_id"] for a in theirs] == [
                a["source_account_id"] for a in mine
            ]
    finally:
        other.dispose()


def test_a_new_demo_password_replaces_the_old(tmp_path: Path) -> None:
    engine = create_store_engine(f"sqlite:///{tmp_path / 'pw.sqlite'}")
    try:
        upgrade_database(engine)
        seed_demo(engine, "demo")
        seed_demo(engine, "hunter2")
        assert authenticate(engine, "demo", "demo") is None
        assert authenticate(engine, "alex", "hunter2") is not None
    finally:
        engine.dispose()
