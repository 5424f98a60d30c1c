"""The processed-message state: the seed's dispatch, the cursor, resets and PacketStream."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from webapp.packets.documents import SearchDoc, StreamingCitation
from webapp.packets.markers import answer_segments
from webapp.packets.models import (
    MessageDelta,
    MessageEnd,
    MessageStart,
    OpenUrlDocuments,
    Packet,
    Stop,
)
from webapp.packets.state import PacketStream, create_initial_state, process_packets
from webapp.packets.wire import citation_packet, documents_packet, make_packet, packet_to_json


def doc(document_id: str, **fields: Any) -> SearchDoc:
    return SearchDoc(document_id, semantic_identifier=document_id.upper(), **fields)


def delta(text: str) -> Packet:
    return make_packet(MessageDelta(text), turn_index=1)


def stop(reason: str | None = None) -> Packet:
    return make_packet(Stop(reason), turn_index=1)


def run(packets: list[Any], node_id: int = 7) -> Any:
    return process_packets(create_initial_state(node_id), packets)


def test_initial_state() -> None:
    state = create_initial_state(42)
    assert state.node_id == 42
    assert state.next_packet_index == 0
    assert state.citation_map == {}
    assert state.citations == []
    assert state.seen_citation_doc_ids == set()
    assert state.document_map == {}
    assert not state.is_complete
    assert state.stop_reason is None
    assert state.malformed_count == 0
    assert state.text == ""


def test_citations_dedup_in_first_cite_order() -> None:
    state = run(
        [
            citation_packet(2, "b"),
            citation_packet(1, "a"),
            citation_packet(3, "b"),
            citation_packet(1, "a"),
        ]
    )
    assert state.citations == [StreamingCitation(2, "b"), StreamingCitation(1, "a")]
    assert state.citation_map == {1: "a", 2: "b", 3: "b"}
    assert state.seen_citation_doc_ids == {"a", "b"}


def test_documents_fill_the_map_in_insertion_order() -> None:
    state = run(
        [
            documents_packet([doc("b"), doc("a")]),
            make_packet(OpenUrlDocuments((doc("u", link="https://u.example"),))),
            documents_packet([doc("a", blurb="newer")]),
        ]
    )
    assert list(state.document_map) == ["b", "a", "u"]
    assert state.document_map["a"].blurb == "newer"


@pytest.mark.parametrize(
    ("final", "expected"),
    [
        ((doc("a", blurb="final"), doc("c")), {"a": "final", "b": "", "c": ""}),
        ((), {"a": "", "b": ""}),
        (None, {"a": "", "b": ""}),
    ],
    ids=["upserts", "empty", "null"],
)
def test_message_start_final_documents_upserted(
    final: tuple[SearchDoc, ...] | None, expected: dict[str, str]
) -> None:
    state = run([documents_packet([doc("a"), doc("b")]), make_packet(MessageStart(final))])
    assert {key: value.blurb for key, value in state.document_map.items()} == expected


def test_final_documents_seed_an_empty_map() -> None:
    state = run([make_packet(MessageStart((doc("x"), doc("y"))), turn_index=1)])
    assert list(state.document_map) == ["x", "y"]


@pytest.mark.parametrize(
    ("packets", "complete", "reason"),
    [
        ([delta("hi")], False, None),
        ([make_packet(MessageEnd())], True, None),
        ([{"obj": {"type": "stop"}}], True, None),
        ([stop("user_cancelled")], True, "user_cancelled"),
        ([stop("user_cancelled"), stop(None)], True, "user_cancelled"),
        ([stop(None), stop("user_cancelled")], True, None),
        ([make_packet(MessageEnd()), stop("user_cancelled")], True, "user_cancelled"),
        ([stop("user_cancelled"), make_packet(MessageEnd())], True, "user_cancelled"),
    ],
    ids=[
        "streaming",
        "message_end",
        "bare-stop",
        "cancelled",
        "first-reason-wins",
        "first-null-wins",
        "end-then-stop-keeps-reason",
        "stop-then-end",
    ],
)
def test_completion_and_stop_reason(packets: list[Any], complete: bool, reason: str | None) -> None:
    state = run(packets)
    assert state.is_complete is complete
    assert state.stop_reason == reason


def test_message_text_joins_deltas() -> None:
    state = run([delta("Hel"), delta(""), delta("lo"), delta(" world")])
    assert state.text == "Hello world"


def test_error_flag() -> None:
    state = run([{"obj": {"type": "error"}}])
    assert state.has_error
    assert not state.is_complete


def test_unknown_and_malformed_packets() -> None:
    state = run(
        [
            {"obj": {"type": "search_tool_queries_delta", "queries": ["x"]}},
            {"obj": {"type": "citation_info", "citation_number": True, "document_id": "a"}},
            "garbage",
            {
                "obj": {
                    "type": "search_tool_documents_delta",
                    "documents": ["junk", {"document_id": "a"}],
                }
            },
            citation_packet(1, "a"),
            None,
        ]
    )
    # Two malformed packets, one junk document and a null: counted; the rest still applies.
    assert state.malformed_count == 4
    assert state.citations == [StreamingCitation(1, "a")]
    assert list(state.document_map) == ["a"]
    assert state.next_packet_index == 6


def test_cursor_processes_only_new_packets() -> None:
    packets: list[Any] = [citation_packet(1, "a")]
    state = create_initial_state(1)
    same = process_packets(state, packets)
    assert same is state
    assert state.next_packet_index == 1
    # Re-running on the same list adds nothing twice.
    process_packets(state, packets)
    packets.append(citation_packet(2, "b"))
    process_packets(state, packets)
    assert state.citations == [StreamingCitation(1, "a"), StreamingCitation(2, "b")]
    assert state.next_packet_index == 2


def test_reset_when_the_list_shrinks() -> None:
    state = run([documents_packet([doc("old")]), citation_packet(1, "old"), stop()])
    assert state.is_complete
    fresh = process_packets(state, [documents_packet([doc("new")])])
    assert fresh is not state
    assert fresh.node_id == 7
    assert list(fresh.document_map) == ["new"]
    assert fresh.citations == []
    assert not fresh.is_complete
    assert fresh.next_packet_index == 1


def test_raw_and_parsed_packets_give_the_same_state() -> None:
    packets = [
        documents_packet([doc("a", link="https://a.example")]),
        delta("See [[1]](https://a.example)."),
        citation_packet(1, "a"),
        stop(),
    ]
    assert run(packets) == run([packet_to_json(p) for p in packets])


OLD = [documents_packet([doc("old")]), citation_packet(1, "old"), delta("old [[1]]()"), stop()]


@pytest.mark.parametrize(
    "new",
    [
        [documents_packet([doc("new")]), citation_packet(1, "new"), delta("new [[1]]()"), stop()],
        [
            documents_packet([doc("new")]),
            citation_packet(1, "new"),
            delta("new "),
            delta("[[1]]()"),
            stop("user_cancelled"),
        ],
        [documents_packet([doc("new")])],
    ],
    ids=["same-length", "longer", "shorter"],
)
def test_stream_replace_always_resets(new: list[Packet]) -> None:
    stream = PacketStream(3, OLD)
    assert stream.state.citations == [StreamingCitation(1, "old")]
    stream.replace(new)
    assert stream.state == run(new, node_id=3)
    assert "old" not in stream.state.document_map
    assert "old" not in stream.state.seen_citation_doc_ids
    assert "old" not in stream.state.text
    assert stream.packets == tuple(new)


def test_the_seed_cursor_alone_would_keep_stale_state() -> None:
    # Why PacketStream.replace exists: the seed's shrink check misses a same-length swap.
    new = [documents_packet([doc("new")]), citation_packet(1, "new"), delta("x"), stop()]
    stale = process_packets(run(OLD), new)
    assert "old" in stale.document_map
    assert PacketStream(7, OLD).replace(new) == run(new)


def test_stream_append_and_extend() -> None:
    stream = PacketStream(1)
    stream.append(packet_to_json(documents_packet([doc("a")])))
    stream.extend([citation_packet(1, "a"), delta("ok")])
    assert stream.node_id == 1
    assert stream.state.citations == [StreamingCitation(1, "a")]
    assert stream.state.text == "ok"
    assert stream.state.next_packet_index == 3


DOC_IDS = ["a", "b", "c", "f"]


def _doc_strategy() -> st.SearchStrategy[SearchDoc]:
    return st.builds(
        lambda i, link, file_id: SearchDoc(i, link=link, file_id=file_id),
        st.sampled_from(DOC_IDS),
        st.sampled_from([None, "", "https://a.example/x", "https://b.example", "javascript:x"]),
        st.sampled_from([None, "file-1"]),
    )


_TEXT = st.text(alphabet="[]()0123` \nab", max_size=12) | st.sampled_from(
    ["[[1]](https://a.example)", "[[2]]()", "[[", "1]]", "](x)", "```\n", "`", "[[9]]()"]
)
_PACKET = st.one_of(
    st.builds(lambda docs: documents_packet(docs), st.lists(_doc_strategy(), max_size=3)),
    st.builds(
        lambda docs: make_packet(OpenUrlDocuments(tuple(docs))),
        st.lists(_doc_strategy(), max_size=2),
    ),
    st.builds(
        lambda docs: make_packet(MessageStart(tuple(docs))), st.lists(_doc_strategy(), max_size=2)
    ),
    st.builds(citation_packet, st.integers(0, 4), st.sampled_from(DOC_IDS)),
    st.builds(delta, _TEXT),
    st.builds(stop, st.sampled_from([None, "user_cancelled"])),
    st.just(make_packet(MessageEnd())),
    st.sampled_from(
        [
            {"obj": {"type": "mystery"}},
            {"obj": {"type": "citation_info", "citation_number": "1", "document_id": "a"}},
            "junk",
        ]
    ),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    packets=st.lists(_PACKET, max_size=14),
    cuts=st.lists(st.integers(0, 14), max_size=6),
    raw=st.lists(st.booleans(), min_size=14, max_size=14),
)
def test_any_flushes_equal_one_pass(packets: list[Any], cuts: list[int], raw: list[bool]) -> None:
    whole = run(packets)
    # The stream gets some packets as wire JSON, the one pass gets them parsed.
    fed = [
        packet_to_json(p) if as_json and isinstance(p, Packet) else p
        for p, as_json in zip(packets, raw, strict=False)
    ]
    stream = PacketStream(7)
    bounds = sorted({min(cut, len(fed)) for cut in cuts} | {len(fed)})
    start = 0
    for bound in bounds:
        chunk = fed[start:bound]
        if len(chunk) == 1:
            stream.append(chunk[0])
        else:
            stream.extend(chunk)
        # Mid-stream segments never fail, whatever was cut where.
        answer_segments(stream.state)
        start = bound
    assert stream.state == whole
    assert answer_segments(stream.state) == answer_segments(whole)
