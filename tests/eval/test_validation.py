"""The validation set is well formed: read here, never asked here.

Like the held-out set, its score comes only from `benchmarks/bench_eval.py --set
validation`, run before and after an engine change to see whether the change generalises;
a test that asked its questions would turn it into a target the engine is tuned to.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.eval.scoring import (
    HOLDOUT,
    INTENTS,
    SETS,
    USERS,
    VALIDATION,
    Evaluator,
    document_citation,
    load_questions,
)


def _key(ask: str) -> str:
    return " ".join(ask.lower().split())


def test_the_validation_set_is_new_and_covers_both_users() -> None:
    validation = load_questions(VALIDATION)
    assert len(validation) >= 60
    assert {q.user for q in validation} == set(USERS)
    asks = [_key(q.ask) for q in validation]
    assert len(set(asks)) == len(asks), "a question twice"
    # New against every development set (the held-out set is not read here).
    development = [path for name, path in SETS.items() if name not in ("holdout", "validation")]
    known = {_key(q.ask) for path in development for q in load_questions(path)}
    shared = set(asks) & known
    assert not shared, f"also in a development set: {sorted(shared)}"
    # Every question says what a correct answer holds; follow-ups do follow something.
    assert all(q.says for q in validation)
    assert all(q.before for q in validation if q.intent == "follow_up")
    assert all(all(b.strip() for b in q.before) for q in validation)


def test_the_validation_set_mixes_the_kinds_of_question() -> None:
    intents = Counter(q.intent for q in load_questions(VALIDATION))
    assert set(intents) <= INTENTS
    assert intents["advice"] >= 12 and intents["compute"] >= 10
    assert intents["follow_up"] >= 6 and intents["wrong_document"] >= 4
    assert intents["refusal"] + intents["out_of_scope"] >= 4
    # An answer that should cite nothing (a document not bundled) is held to it.
    assert all(
        q.max_sources == 0 or q.sources == 0
        for q in load_questions(VALIDATION)
        if q.intent == "wrong_document"
    )


def test_the_validation_set_is_scored_only_by_the_benchmark() -> None:
    from tests.eval.test_eval import LATER_SETS

    assert SETS["validation"] == VALIDATION
    assert VALIDATION not in LATER_SETS.values() and HOLDOUT not in LATER_SETS.values()


def test_what_the_validation_set_cites_exists(tmp_path: Path) -> None:
    """Each document a question cites is bundled and each account it names is one account of
    its user (asking nothing: only the seeded accounts are read)."""
    questions = load_questions(VALIDATION)
    specs = [(q.user, s) for q in questions for s in q.cites + q.cites_one_of]
    for _user, spec in specs:
        if "document" in spec:
            source, _target = document_citation(spec["document"])
            assert source, spec
    evaluator = Evaluator(tmp_path)
    try:
        for user, spec in specs:
            names = spec.get("covers") or spec.get("accounts") or [spec.get("account")]
            for name in filter(None, names):
                assert evaluator._account_id(user, name), (user, name)
    finally:
        evaluator.close()
