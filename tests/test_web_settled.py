"""Settled blocks: what the stream sends once must never need to change.

A prefix of the answer is settled only when rendering it, then the rest, gives what
rendering the whole gives, whatever text comes after; the page, applying the stream's
events, shows at every flush what a whole render of the answer so far shows; and the
citation numbers already drawn never change (first-cite order, webapp.turn's AnswerBuilder).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.answer_stream import (
    Events,
    Page,
    Ticks,
    fragments,
    packet,
    render,
    stored,
)
from tests.support.examples import examples
from webapp.citations.registry import CitationRegistry
from webapp.packets.markers import CitationSegment, answer_segments
from webapp.packets.state import PacketStream
from webapp.sse import SSEDecoder
from webapp.turn.answer import AnswerBuilder, CitedSource
from webapp.web.answer_body import answer_view
from webapp.web.answers import AnswerViews
from webapp.web.markdown import line_start, render_markdown, settled_lines
from webapp.web.stream import Phase, answer_stream

# Bits of markdown that change how the lines around them read: lists and their numbers,
# fences, indented code, tables, quotes, headings, raw HTML, reference definitions, spans.
PIECES = [
    "word",
    "More text.",
    " ",
    "\n",
    "\n\n",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2. ",
    "2",
    "1)",
    "  ",
    "    ",
    "```",
    "~~~",
    "`",
    "**",
    "_",
    "# ",
    "---",
    "===",
    "| a | b |",
    "|---|---|",
    "> ",
    "[x](https://a.example)",
    "[x]",
    "[x]: /u",
    "<pre>",
    "</pre>",
    "<!--",
    "-->",
    "<div>",
    "\t",
    "\\",
    "&amp;",
    "-",
    "\r\n",
    "\r",
    "~~",
    "<",
    "é",
    "😀",
]
CITES = ["[[1]](https://a.example/1)", " [[2]]()", "[[3]]()", "[[1]]()", " [[9]]()"]
markdownish = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
cited_markdown = st.lists(st.sampled_from(PIECES + CITES * 3), max_size=40).map("".join)


def lines_of(text: str) -> str:
    return re.sub(r"\r\n?", "\n", text)  # as markdown-it reads line breaks, and answer_text


@pytest.mark.parametrize(
    ("text", "settled"),
    [
        ("One.\n\nTwo", "One.\n\n"),
        ("One.\n\nTwo.\n\nThr", "One.\n\nTwo.\n\n"),
        ("One.\nstill one", ""),
        ("- a\n- b\n\n", ""),
        ("- a\n- b\n\nAfter", ""),
        ("- a\n- b\n\nAfter\n", "- a\n- b\n\n"),
        ("1. a\n\n2", ""),
        ("Intro\n\n```\ncode\n\nmore", "Intro\n\n"),
        ("    code\n\n    more\n\nText\n", "    code\n\n    more\n\n"),
        ("| a | b |\n|---|---|\n| 1 | 2 |\n\nText", "| a | b |\n|---|---|\n| 1 | 2 |\n\n"),
        ("<pre>\n\nText\n\nmore", ""),
        ("One.\r\n\r\nTwo", "One.\r\n\r\n"),
    ],
    ids=[
        "paragraph",
        "two-paragraphs",
        "no-blank-line",
        "open-list",
        "list-then-partial",
        "list-then-line",
        "number-could-continue-list",
        "open-fence",
        "indented-code",
        "table",
        "raw-html-block",
        "crlf",
    ],
)
def test_settled_lines_end_before_what_may_still_change(text: str, settled: str) -> None:
    source = lines_of(text)
    lines = settled_lines(source, text)
    assert text[: line_start(text, lines)] == settled


def test_reference_definitions_do_not_link_text_above_them() -> None:
    # Otherwise "[x]" in a block already sent would become a link once this line arrives.
    assert render_markdown("See [x].\n\n[x]: https://a.example") == (
        "<p>See [x].</p>\n<p>[x]: https://a.example</p>\n"
    )


@settings(max_examples=examples(400), deadline=None)
@given(text=markdownish, cut=st.integers(min_value=0, max_value=10_000))
def test_a_settled_prefix_renders_the_same_whatever_follows(text: str, cut: int) -> None:
    source = lines_of(text)
    prefix = source[: cut % (len(source) + 1)]
    end = line_start(prefix, settled_lines(prefix, prefix))
    assert render_markdown(source[:end]) + render_markdown(source[end:]) == (
        render_markdown(source)
    )


def docs() -> list[dict[str, Any]]:
    return [
        {
            "document_id": f"d{n}",
            "semantic_identifier": f"Doc {n}",
            "link": f"https://a.example/{n}",
        }
        for n in (1, 2, 3)
    ]


def engine_order(chunks: list[str]) -> list[str]:
    """Return packets as the engine sends them: a number's citation before its marker."""
    datas = [
        packet({"type": "search_tool_documents_delta", "documents": docs()}),
        packet({"type": "message_start", "final_documents": None}),
    ]
    text, announced = "", set()
    for chunk in chunks:
        text += chunk
        for number in (1, 2, 3):
            if number not in announced and f"[[{number}]]" in text:
                announced.add(number)
                datas.append(
                    packet(
                        {
                            "type": "citation_info",
                            "citation_number": number,
                            "document_id": f"d{number}",
                        }
                    )
                )
        datas.append(packet({"type": "message_delta", "content": chunk}))
    return [*datas, packet({"type": "stop", "stop_reason": None})]


def follow(events: Events) -> list[tuple[str, str, str]]:
    """Stream `events`, drawing every packet; after each event return its name, the body
    the page shows, and the body a whole render of the packets read so far draws."""
    streams: list[PacketStream] = []

    def recording(
        stream: PacketStream, phase: Phase, error: str | None, start: int = 0
    ) -> AnswerViews:
        streams[:] = [stream]
        return render(stream, phase, error, start)

    page, decoder, seen = Page(), SSEDecoder(), []
    for chunk in answer_stream(iter(events), recording, fragments, Ticks()):
        for event in decoder.decode(chunk):
            page.apply(event)
            whole = answer_view(streams[0].state, "m", None, streaming=page.streaming).body
            seen.append((event.event, page.body, str(whole)))
    return seen


def cut(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in zip(points, points[1:], strict=False) if b > a]


@settings(max_examples=examples(150), deadline=None)
@given(text=cited_markdown, cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_the_page_shows_a_whole_render_at_every_flush(text: str, cuts: list[int]) -> None:
    seen = follow(stored(engine_order(cut(text, cuts))))
    for name, shown, whole in seen:
        if name in ("answer", "patch"):
            assert shown == whole
    names = [name for name, _, _ in seen]
    # The first words come whole, then only patches, however the citations fall: no block
    # already sent had to be sent again. Then the final answer.
    assert names.count("answer") <= 2 and names[-1] == "done"


def test_the_streamed_blocks_are_the_final_answer() -> None:
    text = (
        "Intro with a fact [[1]](https://a.example/1).\n\n- one [[2]]()\n- two\n\n"
        "```\ncode [[3]]()\n```\n\nLast **words** [[1]]()."
    )
    seen = follow(stored(engine_order([text[i : i + 7] for i in range(0, len(text), 7)])))
    names = [name for name, _, _ in seen]
    assert names[0] == "answer" and set(names[1:-3]) == {"patch"}
    assert names[-3:] == ["answer", "sources", "done"]
    before_final, final = seen[-4][1], seen[-3][1]
    assert before_final == final and final.count("<li>") == 2


# Citation numbers: first-cite order, one per document, and never changed once drawn.

SOURCES = {f"s{n}": CitedSource(f"Title {n}", f"https://a.example/{n}") for n in range(4)}
block = st.tuples(
    st.lists(st.sampled_from(["Some words", " more.", "\n\n", "- item\n"]), min_size=1, max_size=3),
    st.lists(st.sampled_from(sorted(SOURCES)), max_size=3),
)


def answer_packets(blocks: list[tuple[list[str], list[str]]]) -> list[dict[str, Any]]:
    """Return the packets the runner writes for these text blocks and their citations."""

    def wire(obj: dict[str, Any]) -> dict[str, Any]:
        return {"placement": {"turn_index": 0, "tab_index": 0}, "obj": obj}

    builder = AnswerBuilder(CitationRegistry(), dict(SOURCES))
    found = [{"document_id": source, "semantic_identifier": source} for source in SOURCES]
    out = [wire({"type": "search_tool_documents_delta", "documents": found})]
    for texts, cited in blocks:
        streamed = [builder.start_block(), *(builder.add_text(t) for t in texts)]
        closed = builder.finish_block([{"source": s, "cited_text": "x"} for s in cited])
        out += [wire({"type": "message_delta", "content": t}) for t in streamed if t]
        out += [
            wire({"type": "citation_info", "citation_number": n, "document_id": s})
            for n, s in closed.new_numbers
        ]
        if closed.markers:
            out.append(wire({"type": "message_delta", "content": closed.markers}))
    return out


@settings(max_examples=examples(200), deadline=None)
@given(blocks=st.lists(block, min_size=1, max_size=8))
def test_citation_numbers_go_in_first_cite_order_and_never_change(
    blocks: list[tuple[list[str], list[str]]],
) -> None:
    stream, drawn = PacketStream(0), []
    for item in answer_packets(blocks):
        stream.append(item)
        drawn.append(
            [
                (s.number, s.document_id)
                for s in answer_segments(stream.state)
                if isinstance(s, CitationSegment)
            ]
        )
    final = drawn[-1]
    for cites in drawn:  # what was drawn stays, with the same number and document
        assert final[: len(cites)] == cites
    firsts = list(dict.fromkeys(number for number, _ in final))
    assert firsts == list(range(1, len(firsts) + 1))
    assert len({number for number, _ in final}) == len({doc for _, doc in final})


@pytest.mark.parametrize(
    "text",
    [
        "a `b\n- [[1]](https://a.example/1) c`\n\nmore\n\nend",
        "<pre>\n\n    [[1]]()\n</pre>\n\nafter\n\nend",
        "1. a [[1]]()\n\n2\n\n2. b [[2]]()\n\nend",
        "Emoji 😀 [[1]]() and é\r\n\r\nNext 😀 line\r\n\r\n- 😀\n\nend",
    ],
    ids=["code-span-across-lines", "raw-html-block", "number-under-list", "utf16-and-crlf"],
)
def test_the_page_shows_a_whole_render_while_tricky_text_arrives(text: str) -> None:
    for size in (1, 3, 8):
        seen = follow(stored(engine_order([text[i : i + size] for i in range(0, len(text), size)])))
        assert [shown for name, shown, _ in seen if name in ("answer", "patch")] == [
            whole for name, _, whole in seen if name in ("answer", "patch")
        ]
        assert "patch" in [name for name, _, _ in seen]
