"""The streamed answer: markers after the cited text, one number per document."""

from __future__ import annotations

from webapp.citations.registry import CitationRegistry
from webapp.citations.targets import AccountTarget
from webapp.turn.answer import AnswerBuilder, CitedSource

A, B = "silvia://your-account/a", "https://b.example/"


def builder() -> AnswerBuilder:
    registry = CitationRegistry()
    registry.record(A, AccountTarget("AccountAAAAAAAAAAAAAAAA"))
    return AnswerBuilder(registry, {A: CitedSource("A", None), B: CitedSource("B", B)})


def cite(source: str) -> dict[str, str]:
    return {"type": "search_result_location", "source": source, "cited_text": "c"}


def stream(answer: AnswerBuilder, *blocks: tuple[str, list[dict[str, str]]]) -> str:
    out = ""
    for text, citations in blocks:
        out += answer.start_block()
        for piece in text.split(" "):
            out += answer.add_text(piece + " ")
        out += answer.finish_block(citations).markers
    return out


def test_markers_follow_the_text_and_trailing_space_waits() -> None:
    answer = builder()
    out = stream(answer, ("One.", [cite(A)]), ("Two.", [cite(B), cite(A), cite(B)]))
    assert out == "One. [[1]]() Two. [[2]](https://b.example/) [[1]]() "
    assert answer.text == "One. Two. "
    assert [c["number"] for c in answer.inline_citations()] == [1, 2, 1, 2]
    assert answer.inline_citations()[1]["text"] == "Two."


def test_unknown_sources_and_other_citation_types_get_no_number() -> None:
    answer = builder()
    out = stream(answer, ("Text.", [cite("silvia://elsewhere"), {"type": "char_location"}, "x"]))  # type: ignore[list-item]
    assert out == "Text. " and answer.summary() == []


def test_a_new_round_starts_a_paragraph() -> None:
    answer = builder()
    first = stream(answer, ("Looking.", []))
    answer.new_round()
    second = stream(answer, ("Found.", [cite(A)]))
    assert first + second == "Looking. \n\nFound. [[1]]() "


def test_state_round_trips_through_a_checkpoint() -> None:
    answer = builder()
    stream(answer, ("One.", [cite(A)]))
    resumed = builder()
    resumed.restore(answer.state())
    out = stream(resumed, ("Two.", [cite(B), cite(A)]))
    assert out == "Two. [[2]](https://b.example/) [[1]]() "
    assert [c["number"] for c in resumed.summary()] == [1, 2]


def test_restore_ignores_malformed_state() -> None:
    answer = builder()
    state: object
    for state in (None, [], {"text": 3}, {"text": "x", "numbers": []}):
        answer.restore(state)
    assert answer.text == "" and answer.numbers == {}


def test_a_paragraph_break_survives_a_checkpoint() -> None:
    answer = builder()
    stream(answer, ("Looking.", []))
    answer.new_round()
    resumed = builder()
    resumed.restore(answer.state())
    assert stream(resumed, ("Found.", [])) == "\n\nFound. "
