"""Session versions: ending a user's sessions invalidates every version handed out before."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webapp.store.users import end_sessions, session_version, user_for_session

if TYPE_CHECKING:
    from tests.conftest import SqlBackend


def test_ending_sessions_moves_the_version_on_and_refuses_the_old_one(
    sql_backend: SqlBackend,
) -> None:
    engine, demo, alex = sql_backend.engine, sql_backend.users["demo"], sql_backend.users["alex"]
    before = session_version(engine, demo.id)
    assert user_for_session(engine, demo.id, before) == demo
    end_sessions(engine, demo.id)
    end_sessions(engine, demo.id)  # the second bump updates the row the first one made
    after = session_version(engine, demo.id)
    assert after == before + 2
    assert user_for_session(engine, demo.id, before) is None
    assert user_for_session(engine, demo.id, after) == demo
    assert user_for_session(engine, alex.id, session_version(engine, alex.id)) == alex


def test_a_session_names_a_real_user_and_an_integer_version(sql_backend: SqlBackend) -> None:
    engine, demo = sql_backend.engine, sql_backend.users["demo"]
    version = session_version(engine, demo.id)
    for user_id, given in [
        (demo.id, str(version)),
        (demo.id, True),
        (demo.id, None),
        (True, version),
        (10**9, 0),
        ("1", version),
    ]:
        assert user_for_session(engine, user_id, given) is None
