"""The offline engine on an evaluation set: answers fully correct out of all, and turn times.

Each question of the set (`--set dev`, the default: `tests/eval/questions.toml`; `--set
more`, `--set third` ... `--set eleventh`: the second to eleventh development sets,
`questions_more.toml`, `questions_third.toml`, ..., `questions_eleventh.toml`; `--set holdout`:
`tests/eval/holdout.toml`, the held-out set no test runs; `--set validation`:
`tests/eval/validation.toml`, the validation set, scored before and after an engine change and
never run by a test either) is asked through the JSON API on a
fresh seeded database (`tests/eval/scoring.py`, the same scoring the test uses), after any
`before` questions in the same chat; an answer is fully correct when it says everything and
cites everything the set asks of it, and lists the sources it should. Turn time is from just
before the POST to the stream's `done`.
Run: `.venv/bin/python benchmarks/bench_eval.py [--set more|third|...|eleventh|holdout|validation]`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.eval.scoring import SETS, Verdict, evaluate, load_questions  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="dev", help="the set to score")
    name = parser.parse_args().set
    questions = load_questions(SETS[name])
    with tempfile.TemporaryDirectory() as folder:
        verdicts: list[Verdict] = list(evaluate(Path(folder), questions))
    correct = [v for v in verdicts if v.correct]
    for verdict in verdicts:
        if not verdict.correct:
            print(f"WRONG  {verdict.question.user}: {verdict.question.ask}")
            for problem in verdict.problems:
                print(f"         {problem}")
    totals, right = Counter[str](), Counter[str]()
    for verdict in verdicts:
        totals[verdict.question.intent] += 1
        right[verdict.question.intent] += verdict.correct
    print("by intent: " + ", ".join(f"{i} {right[i]}/{n}" for i, n in sorted(totals.items())))
    times = sorted(v.answer.seconds * 1000 for v in verdicts)
    print(
        f"turn time through the API: median {statistics.median(times):.1f} ms, "
        f"90th percentile {times[int(0.9 * (len(times) - 1))]:.1f} ms, "
        f"slowest {times[-1]:.1f} ms"
    )
    print(f"Eval score ({name} set): {len(correct)}/{len(verdicts)} answers fully correct")


if __name__ == "__main__":
    main()
