"""Answer segments: markers resolved through the maps, held back, and left alone in code."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.packets.documents import SearchDoc
from webapp.packets.markers import CitationSegment, TextSegment, answer_segments
from webapp.packets.models import MessageDelta, Stop
from webapp.packets.state import PacketStream
from webapp.packets.wire import citation_packet, documents_packet, make_packet

A = SearchDoc("a", semantic_identifier="A", link="https://a.example/page")
F = SearchDoc("f", semantic_identifier="Statement", file_id="file-1")
SOURCES = [documents_packet([A, F]), citation_packet(1, "a"), citation_packet(2, "f")]


def segments(*deltas: str, complete: bool = True, sources: list[Any] = SOURCES) -> list[Any]:
    stream = PacketStream(1, sources)
    stream.extend(make_packet(MessageDelta(d), turn_index=1) for d in deltas)
    if complete:
        stream.append(make_packet(Stop(None), turn_index=1))
    return answer_segments(stream.state)


def shape(items: list[Any]) -> list[Any]:
    """Return text segments as strings and citations as (number, document_id)."""
    return [s.text if isinstance(s, TextSegment) else (s.number, s.document_id) for s in items]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No sources.", ["No sources."]),
        ("Rate [[1]](https://a.example/page).", ["Rate ", (1, "a"), "."]),
        ("File [[2]]() says so", ["File ", (2, "f"), " says so"]),
        ("[[1]](https://a.example/page)[[2]]()", [(1, "a"), (2, "f")]),
        ("Both [[1]](x) [[2]]()", ["Both ", (1, "a"), " ", (2, "f")]),
        ("Paren [[1]](https://a.example/x_(y)) ok", ["Paren ", (1, "a"), " ok"]),
        ("Unknown [[9]](https://z.example) gone", ["Unknown  gone"]),
        ("Space [[1]](https://a.example/ x) no", ["Space [[1]](https://a.example/ x) no"]),
        ("Bare [[1]] stays", ["Bare [[1]] stays"]),
        ("Single [1](x) stays", ["Single [1](x) stays"]),
        ("Huge [[12345678901]](x) stays", ["Huge [[12345678901]](x) stays"]),
        ("Twice [[1]](a)[[1]](a) once", ["Twice ", (1, "a"), " once"]),
        ("Ends [[1]](https://a.example", ["Ends [[1]](https://a.example"]),
        ("Ends [[", ["Ends [["]),
    ],
    ids=[
        "plain",
        "link-marker",
        "file-marker",
        "adjacent",
        "two",
        "balanced-parens",
        "unknown-number",
        "space-in-link",
        "no-parens",
        "single-bracket",
        "too-many-digits",
        "repeat-collapses",
        "unterminated-complete",
        "open-brackets-complete",
    ],
)
def test_markers(text: str, expected: list[Any]) -> None:
    assert shape(segments(text)) == expected


def test_citation_carries_the_resolved_document() -> None:
    found = [s for s in segments("a [[1]](x) b [[2]]()") if isinstance(s, CitationSegment)]
    assert [s.doc for s in found] == [A, F]


def test_link_text_is_not_trusted() -> None:
    # The marker's link disagrees with the document: the document wins.
    (_, citation) = segments("See [[1]](https://evil.example/)")
    assert isinstance(citation, CitationSegment)
    assert citation.doc == A
    assert citation.doc is not None and citation.doc.link == "https://a.example/page"


def test_document_keeps_its_first_number() -> None:
    # Onyx bug 14334: a second number for the same document. Text and footer must agree.
    sources = [*SOURCES, citation_packet(3, "a")]
    assert shape(segments("x [[3]](u) y", sources=sources)) == ["x ", (1, "a"), " y"]


def test_known_number_whose_document_has_not_arrived() -> None:
    sources = [citation_packet(1, "late")]
    (_, citation) = segments("x [[1]]()", sources=sources)
    assert citation == CitationSegment(1, "late", None)


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        (["Rate ["], ["Rate "]),
        (["Rate [["], ["Rate "]),
        (["Rate [[1"], ["Rate "]),
        (["Rate [[1]"], ["Rate "]),
        (["Rate [[1]]"], ["Rate "]),
        (["Rate [[1]](https://a.ex"], ["Rate "]),
        (["Rate [[1]](https://a.example/x_(y"], ["Rate "]),
        (["Rate [[1]](https://a.example/page)"], ["Rate ", (1, "a")]),
        (["Rate [", "[1]", "](x) ok"], ["Rate ", (1, "a"), " ok"]),
        (["[[9]]() later"], [" later"]),
        (["a [b] c ["], ["a [b] c "]),
        (["a [x"], ["a [x"]),
        (["a [[1]] b"], ["a [[1]] b"]),
    ],
    ids=[
        "bracket",
        "two-brackets",
        "number",
        "one-close",
        "two-close",
        "open-link",
        "open-nested-paren",
        "whole",
        "split-across-deltas",
        "unknown-number",
        "only-the-tail-is-held",
        "not-a-marker-prefix",
        "broken-marker-released",
    ],
)
def test_streaming_holds_back_a_partial_marker(deltas: list[str], expected: list[Any]) -> None:
    assert shape(segments(*deltas, complete=False)) == expected


def test_unknown_number_appears_once_its_citation_arrives() -> None:
    stream = PacketStream(1, [documents_packet([A])])
    stream.append(make_packet(MessageDelta("Rate [[1]](https://a.example/page) ok")))
    assert shape(answer_segments(stream.state)) == ["Rate  ok"]
    stream.append(citation_packet(1, "a"))
    assert shape(answer_segments(stream.state)) == ["Rate ", (1, "a"), " ok"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use `[[1]](x)` here", ["Use `[[1]](x)` here"]),
        ("Use ``a ` [[1]]()`` here", ["Use ``a ` [[1]]()`` here"]),
        ("```\n[[1]](x)\n```\nthen [[1]](x)", ["```\n[[1]](x)\n```\nthen ", (1, "a")]),
        ("~~~md\n[[2]]()\n~~~", ["~~~md\n[[2]]()\n~~~"]),
        (
            "Text\n\n    [[1]](x) indented\n\nafter [[2]]()",
            [
                "Text\n\n    [[1]](x) indented\n\nafter ",
                (2, "f"),
            ],
        ),
        ("- item\n  ```\n  [[1]](x)\n  ```\n", ["- item\n  ```\n  [[1]](x)\n  ```\n"]),
        ("> ```\n> [[1]](x)\n> ```", ["> ```\n> [[1]](x)\n> ```"]),
        ("Escaped \\`[[1]](x)` here", ["Escaped \\`", (1, "a"), "` here"]),
        ("Unclosed ` [[1]](x)", ["Unclosed ` ", (1, "a")]),
        ("Para `open\n\nnext [[1]](x)`", ["Para `open\n\nnext ", (1, "a"), "`"]),
        ("```\nopen fence [[1]](x)", ["```\nopen fence [[1]](x)"]),
        ("lazy\n    [[1]](x)", ["lazy\n    ", (1, "a")]),
        (
            "crlf\r\n\r\n```\r\n[[1]](x)\r\n```\r\n[[2]]()",
            [
                "crlf\r\n\r\n```\r\n[[1]](x)\r\n```\r\n",
                (2, "f"),
            ],
        ),
    ],
    ids=[
        "inline-code",
        "double-backticks",
        "fence-then-text",
        "tilde-fence",
        "indented-block",
        "fence-in-list",
        "fence-in-quote",
        "escaped-backtick",
        "unclosed-backtick-complete",
        "span-stops-at-blank-line",
        "unclosed-fence",
        "lazy-continuation-is-not-code",
        "crlf",
    ],
)
def test_markers_inside_code_stay_literal(text: str, expected: list[Any]) -> None:
    assert shape(segments(text)) == expected


def test_streaming_open_code_span_stays_literal_until_closed() -> None:
    assert shape(segments("Run `x [[1]](u)", complete=False)) == ["Run `x [[1]](u)"]
    assert shape(segments("Run `x [[1]](u)` [[1]](u)", complete=False)) == [
        "Run `x [[1]](u)` ",
        (1, "a"),
    ]
    # An open code span ends with its paragraph.
    assert shape(segments("Run `x\n\n[[1]](u)", complete=False)) == ["Run `x\n\n", (1, "a")]


def test_streaming_does_not_hold_back_inside_code() -> None:
    assert shape(segments("```\ncode [[", complete=False)) == ["```\ncode [["]


def test_empty_answer_has_no_segments() -> None:
    assert segments() == []
    assert segments(complete=False) == []


@given(
    text=st.text(alphabet=st.sampled_from("[]()`~ \n\r\t\\x1>-#*") | st.characters(), max_size=60),
    complete=st.booleans(),
)
def test_text_without_known_citations_passes_through(text: str, complete: bool) -> None:
    joined = "".join(s.text for s in segments(text, complete=complete, sources=[]))
    if "[[" not in text:
        # Nothing is dropped; while streaming, at most a tail that may start a marker is held.
        assert joined == text if complete else text.startswith(joined)
        if not complete and joined != text:
            assert text[len(joined)] == "["
    else:
        assert len(joined) <= len(text)
