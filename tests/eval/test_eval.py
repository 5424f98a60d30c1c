"""The development evaluation set, every question through the JSON API on the offline engine.

The held-out set (`holdout.toml`) and the validation set (`validation.toml`) are not run
here: only `benchmarks/bench_eval.py --set holdout` (`--set validation`) scores them, so that
they never become a requirement the engine is tuned to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.eval.scoring import (
    DEV_INTENTS,
    EIGHTH,
    ELEVENTH,
    FIFTH,
    FOURTH,
    MORE,
    NINTH,
    SETS,
    SEVENTH,
    SIXTH,
    TENTH,
    THIRD,
    USERS,
    Evaluator,
    Question,
    load_questions,
    source_family,
)
from tests.eval.scoring import (
    QUESTIONS as QUESTIONS_PATH,
)

QUESTIONS = load_questions()


def _with_open_ones(path: Path) -> list[Any]:
    """A set's questions, those listed in its `<name>_open.txt` (not answered yet) marked
    strict expected failures."""
    listed = path.with_name(f"{path.stem}_open.txt").read_text("utf-8").splitlines()
    open_ones = {line for line in listed if line and not line.startswith("#")}
    unknown = open_ones - {q.ask for q in load_questions(path)}
    assert not unknown, f"{path.name}: open questions it does not hold: {sorted(unknown)}"
    xfail = pytest.mark.xfail(reason="not answered yet", strict=True)
    return [
        pytest.param(q, marks=[xfail] if q.ask in open_ones else []) for q in load_questions(path)
    ]


# The later development sets (issue 19), each written before the engine was changed for it:
# the second and third from the demo data, the fourth to eleventh by people who had read
# neither the engine nor the held-out set (nor, for the fifth to eleventh, the other sets). What
# each asks that is not answered yet is listed in a file beside it.
LATER_SETS = {
    name: path for name, path in SETS.items() if name not in ("dev", "holdout", "validation")
}
LATER_QUESTIONS = [
    pytest.param(*param.values, marks=param.marks, id=f"{name}: {param.values[0].ask}")
    for name, path in LATER_SETS.items()
    for param in _with_open_ones(path)
]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Evaluator]:
    evaluator = Evaluator(tmp_path_factory.mktemp("eval"))
    yield evaluator
    evaluator.close()


def test_the_set_covers_every_intent_and_both_users() -> None:
    assert len(QUESTIONS) >= 40
    assert {q.intent for q in QUESTIONS} >= DEV_INTENTS
    assert {q.user for q in QUESTIONS} == set(USERS)
    assert len({q.ask.lower() for q in QUESTIONS}) == len(QUESTIONS), "a question twice"
    # Every question says what a correct answer holds, not only that one came.
    assert all(q.says for q in QUESTIONS)
    per_intent = Counter(q.intent for q in QUESTIONS)
    assert min(per_intent.values()) >= 1


@pytest.mark.parametrize("question", QUESTIONS, ids=[f"{q.user}: {q.ask}" for q in QUESTIONS])
def test_the_answer_is_correct(evaluator: Evaluator, question: Question) -> None:
    verdict = evaluator.judge(question)
    assert verdict.correct, f"{verdict.answer.content!r}: {'; '.join(verdict.problems)}"


@pytest.mark.postgres
def test_every_answer_is_correct_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    # The same questions where the queries run as a read-only role under row-level security.
    evaluator = Evaluator(tmp_path, pg_url)
    try:
        wrong = [
            (v.question.ask, v.problems) for v in map(evaluator.judge, QUESTIONS) if not v.correct
        ]
    finally:
        evaluator.close()
    assert wrong == []


def test_a_wrong_answer_fails(evaluator: Evaluator) -> None:
    # The scorer itself: a question asking for a figure the data does not hold must fail,
    # as must one whose citation is of another account.
    wrong = Question(
        "demo",
        "account",
        "What is my Chase checking balance?",
        says=("$2,104.76",),
        cites=({"account": "Wells Fargo / Checking"},),
    )
    problems = evaluator.judge(wrong).problems
    assert any("$2,104.76" in p for p in problems)
    assert any("does not cite" in p for p in problems)


def test_covers_takes_account_citations_of_either_shape(evaluator: Evaluator) -> None:
    # A total cited by label (the two "Credit card" accounts as one source, the Sapphire alone)
    # covers all three cards; a card the answer does not cite is not covered.
    cards = ["American Express / Credit card", "Citi / Credit card", "Chase / Sapphire Preferred"]
    total = Question(
        "demo", "debts", "What do I owe on my credit cards?", cites=({"covers": cards},)
    )
    assert evaluator.judge(total).problems == []
    one = Question("demo", "debts", "What do I owe on my Citi card?", cites=({"covers": cards},))
    assert any("does not cite" in p for p in evaluator.judge(one).problems)


def test_a_follow_up_is_scored_on_its_own_answer(evaluator: Evaluator) -> None:
    # `before` questions are asked first in the same chat; only the last answer is judged.
    follow_up = Question(
        "demo",
        "follow_up",
        "What's the balance on my Amex?",
        says=("$1,842.17",),
        never=("$4,820.33",),
        cites=({"account": "American Express / Credit card"},),
        before=("What is my Chase checking balance?",),
    )
    assert evaluator.judge(follow_up).problems == []


def test_the_second_set_has_every_weak_category() -> None:
    more = load_questions(MORE)
    assert len(more) >= 80
    assert {q.user for q in more} == set(USERS)
    assert {"compute", "advice", "wrong_document", "refusal", "action", "forecast"} <= {
        q.intent for q in more
    }
    assert any(q.before for q in more)
    assert len({q.ask.lower() for q in more}) == len(more), "a question twice"


def test_the_third_set_covers_the_patterns_the_held_out_set_missed() -> None:
    third = load_questions(THIRD)
    assert len(third) >= 80
    assert {q.user for q in third} == set(USERS)
    assert {"compute", "advice", "holdings", "wrong_document", "refusal", "action"} <= {
        q.intent for q in third
    }
    assert sum(bool(q.before) for q in third) >= 10
    assert len({q.ask.lower() for q in third}) == len(third), "a question twice"
    assert not {q.ask.lower() for q in third} & {
        q.ask.lower() for q in QUESTIONS + load_questions(MORE)
    }, "a question of another set"


def test_a_source_of_another_family_is_unrelated(evaluator: Evaluator) -> None:
    # The relevance check: a balance question citing a document fails it.
    assert source_family("silvia://your-account/home", {"kind": "account"}) == "data"
    assert source_family("https://www.fdic.gov/x", {"kind": "web", "url": "x"}) == "document"
    assert source_family("silvia://market-data/finnhub/AAPL", {"kind": "market_data"}) == "market"
    wrong = Question(
        "demo",
        "account",
        "How much money is FDIC insured?",
        says=("$250,000",),
        cites=({"account": "Chase / Savings"},),
    )
    assert any("unrelated" in p for p in evaluator.judge(wrong).problems)


def test_the_fourth_and_fifth_sets_are_new() -> None:
    fourth = load_questions(FOURTH)
    assert len(fourth) >= 120
    assert {q.user for q in fourth} == set(USERS)
    assert {"advice", "overview", "refusal", "wrong_document", "compute", "follow_up"} <= {
        q.intent for q in fourth
    }
    asked = [(q.before, q.ask.lower()) for q in fourth]
    assert len(set(asked)) == len(asked), "a question twice"
    earlier = {(q.before, q.ask.lower()) for q in QUESTIONS + load_questions(MORE)}
    earlier |= {(q.before, q.ask.lower()) for q in load_questions(THIRD)}
    assert not set(asked) & earlier
    fifth = load_questions(FIFTH)
    assert len(fifth) >= 80 and {q.user for q in fifth} == set(USERS)
    later = [(q.before, q.ask.lower()) for q in fifth]
    assert len(set(later)) == len(later), "a question twice"
    assert not set(later) & (earlier | set(asked))


@pytest.mark.parametrize("question", LATER_QUESTIONS)
def test_a_later_set_answer_is_correct(evaluator: Evaluator, question: Question) -> None:
    verdict = evaluator.judge(question)
    assert verdict.correct, f"{verdict.answer.content!r}: {'; '.join(verdict.problems)}"


def test_the_seventh_to_eleventh_sets_are_new() -> None:
    # Each written blind to the engine and to every other set: nothing asked twice, within a
    # set or across them (a question together with what was asked before it).
    seen = {
        (q.before, q.ask.lower())
        for path in (QUESTIONS_PATH, MORE, THIRD, FOURTH, FIFTH, SIXTH)
        for q in load_questions(path)
    }
    for path in (SEVENTH, EIGHTH, NINTH, TENTH, ELEVENTH):
        questions = load_questions(path)
        asked = [(q.before, q.ask.lower()) for q in questions]
        assert len(set(asked)) == len(asked), f"{path.name}: a question twice"
        assert not set(asked) & seen, f"{path.name}: a question of another set"
        seen |= set(asked)
        assert len(questions) >= 60 and {q.user for q in questions} == set(USERS)
        assert {"advice", "compute", "wrong_document", "refusal", "follow_up"} <= {
            q.intent for q in questions
        }
