"""The held-out evaluation set is well formed: read here, never asked here.

Its score comes only from `benchmarks/bench_eval.py --set holdout`; a test that asked its
questions would turn it into a target the engine is tuned to.
"""

from __future__ import annotations

from tests.eval.scoring import HOLDOUT, USERS, load_questions


def _key(ask: str) -> str:
    return " ".join(ask.lower().split())


def test_the_held_out_set_is_new_and_covers_both_users() -> None:
    holdout = load_questions(HOLDOUT)
    assert len(holdout) >= 60
    assert {q.user for q in holdout} == set(USERS)
    asks = [_key(q.ask) for q in holdout]
    assert len(set(asks)) == len(asks), "a question twice"
    shared = set(asks) & {_key(q.ask) for q in load_questions()}
    assert not shared, f"also in the development set: {sorted(shared)}"
    # Every question says what a correct answer holds; follow-ups do follow something.
    assert all(q.says for q in holdout)
    assert any(q.before for q in holdout)
    assert all(all(b.strip() for b in q.before) for q in holdout)
