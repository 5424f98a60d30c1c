"""Packets on the wire: lenient reading, malformed values, exact JSON, builders (docs/specs.md, "Packets the server emits")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.citations.targets import AccountTarget, TaxReferenceTarget, WebTarget
from webapp.packets.documents import SearchDoc, search_doc_from_json, search_doc_to_json
from webapp.packets.models import (
    CitationInfo,
    ErrorPacket,
    Malformed,
    MessageDelta,
    MessageEnd,
    MessageStart,
    OpenUrlDocuments,
    Packet,
    Placement,
    SearchToolDocumentsDelta,
    SearchToolStart,
    SectionEnd,
    Stop,
    UnknownPacket,
)
from webapp.packets.state import PacketStream
from webapp.packets.wire import (
    citation_packet,
    documents_packet,
    make_packet,
    packet_to_json,
    parse_packet,
)

ACCOUNT_ID = "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp"
PLACEMENT = {"turn_index": 1, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
FULL_DOC: dict[str, Any] = {
    "document_id": "silvia://tax-authority/irs/p17.md",
    "semantic_identifier": "Publication 17",
    "link": "https://www.irs.gov/publications/p17",
    "blurb": "Your federal income tax",
    "source_type": "tax_reference",
    "score": 0.82,
    "updated_at": "2024-05-07T00:00:00Z",
    "match_highlights": ["the <hi>standard</hi> deduction"],
    "metadata": {"year": "2024", "tags": ["tax", "irs"]},
    "is_internet": False,
    "chunk_ind": 3,
    "boost": 1,
    "hidden": False,
    "primary_owners": ["irs"],
    "secondary_owners": None,
    "is_relevant": True,
    "relevance_explanation": "names the deduction",
    "file_id": None,
    "target": {"kind": "tax_reference", "url": "https://www.irs.gov/publications/p17"},
}


def wrap(obj: object, placement: object = PLACEMENT) -> dict[str, Any]:
    return {"placement": placement, "obj": obj}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"type": "search_tool_start"}, SearchToolStart()),
        ({"type": "section_end"}, SectionEnd()),
        ({"type": "error"}, ErrorPacket()),
        ({"type": "message_end"}, MessageEnd()),
        ({"type": "stop"}, Stop(None)),
        ({"type": "stop", "stop_reason": None}, Stop(None)),
        ({"type": "stop", "stop_reason": "user_cancelled"}, Stop("user_cancelled")),
        ({"type": "stop", "stop_reason": 7}, Stop(None)),
        ({"type": "message_delta", "content": "Hi"}, MessageDelta("Hi")),
        ({"type": "message_delta"}, MessageDelta("")),
        ({"type": "message_delta", "content": 3}, MessageDelta("")),
        ({"type": "message_start"}, MessageStart(None)),
        ({"type": "message_start", "final_documents": None}, MessageStart(None)),
        ({"type": "message_start", "final_documents": []}, MessageStart(())),
        (
            {"type": "citation_info", "citation_number": 2, "document_id": "d"},
            CitationInfo(2, "d"),
        ),
        (
            {"type": "search_tool_documents_delta", "documents": [{"document_id": "d"}]},
            SearchToolDocumentsDelta((SearchDoc("d"),)),
        ),
        (
            {"type": "open_url_documents", "documents": [{"document_id": "d"}]},
            OpenUrlDocuments((SearchDoc("d"),)),
        ),
    ],
    ids=[
        "search_tool_start",
        "section_end",
        "error",
        "message_end",
        "bare-stop",
        "stop-null",
        "stop-cancelled",
        "stop-mistyped-reason",
        "delta",
        "delta-missing-content",
        "delta-mistyped-content",
        "message_start-bare",
        "message_start-null-docs",
        "message_start-empty-docs",
        "citation_info",
        "documents_delta",
        "open_url_documents",
    ],
)
def test_parse_known_types(obj: dict[str, Any], expected: object) -> None:
    parsed = parse_packet(wrap(obj))
    assert isinstance(parsed, Packet)
    assert parsed.obj == expected
    assert parsed.placement == Placement(turn_index=1)


@pytest.mark.parametrize(
    "value",
    [
        None,
        3,
        [],
        "not json",
        b"{",
        {"placement": PLACEMENT},
        {"placement": PLACEMENT, "obj": None},
        {"placement": PLACEMENT, "obj": "stop"},
        wrap({"kind": "stop"}),
        wrap({"type": 5}),
        wrap({"type": "citation_info", "document_id": "d"}),
        wrap({"type": "citation_info", "citation_number": "1", "document_id": "d"}),
        wrap({"type": "citation_info", "citation_number": True, "document_id": "d"}),
        wrap({"type": "citation_info", "citation_number": 1.0, "document_id": "d"}),
        wrap({"type": "citation_info", "citation_number": 1}),
        wrap({"type": "citation_info", "citation_number": 1, "document_id": 9}),
        wrap({"type": "citation_info", "citation_number": 1, "document_id": ""}),
        wrap({"type": "search_tool_documents_delta"}),
        wrap({"type": "search_tool_documents_delta", "documents": {"document_id": "d"}}),
        wrap({"type": "open_url_documents", "documents": "d"}),
        wrap({"type": "message_start", "final_documents": {"document_id": "d"}}),
    ],
    ids=[
        "null",
        "number",
        "list",
        "text-not-json",
        "bytes-not-json",
        "no-obj",
        "null-obj",
        "string-obj",
        "obj-without-type",
        "mistyped-type",
        "citation-without-number",
        "citation-number-string",
        "citation-number-bool",
        "citation-number-float",
        "citation-without-document",
        "citation-document-number",
        "citation-document-empty",
        "documents-missing",
        "documents-object",
        "open-url-documents-string",
        "final-documents-object",
    ],
)
def test_parse_malformed_never_raises(value: object) -> None:
    parsed = parse_packet(value)
    assert isinstance(parsed, Malformed)
    assert parsed.reason


def test_malformed_reason_and_repr_hide_the_value() -> None:
    secret = {"obj": {"type": "citation_info", "citation_number": "1", "document_id": ACCOUNT_ID}}
    parsed = parse_packet(secret)
    assert isinstance(parsed, Malformed)
    assert parsed.value is secret
    assert ACCOUNT_ID not in parsed.reason
    assert ACCOUNT_ID not in repr(parsed)


def test_unknown_type_is_kept() -> None:
    parsed = parse_packet(wrap({"type": "search_tool_queries_delta", "queries": ["q"]}))
    assert isinstance(parsed, Packet)
    assert parsed.obj == UnknownPacket(
        "search_tool_queries_delta",
        {
            "type": "search_tool_queries_delta",
            "queries": ["q"],
        },
    )
    assert packet_to_json(parsed)["obj"] == {"type": "search_tool_queries_delta", "queries": ["q"]}


@pytest.mark.parametrize(
    ("documents", "kept", "skipped"),
    [
        ([{"document_id": "a"}, "junk", {"document_id": "b"}], ["a", "b"], 1),
        ([None, 3, [], {"semantic_identifier": "no id"}], [], 4),
        ([{"document_id": ""}, {"document_id": 7}, {"document_id": "c"}], ["c"], 2),
        ([], [], 0),
    ],
    ids=["one-junk", "all-junk", "bad-ids", "empty"],
)
def test_malformed_documents_are_skipped_and_counted(
    documents: list[object], kept: list[str], skipped: int
) -> None:
    for kind in ("search_tool_documents_delta", "open_url_documents"):
        parsed = parse_packet(wrap({"type": kind, "documents": documents}))
        assert isinstance(parsed, Packet)
        obj = parsed.obj
        assert isinstance(obj, SearchToolDocumentsDelta | OpenUrlDocuments)
        assert [doc.document_id for doc in obj.documents] == kept
        assert obj.malformed_documents == skipped
    start = parse_packet(wrap({"type": "message_start", "final_documents": documents}))
    assert isinstance(start, Packet) and isinstance(start.obj, MessageStart)
    assert [doc.document_id for doc in start.obj.final_documents or ()] == kept
    assert start.obj.malformed_documents == skipped


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (wrap({"type": "stop"}, PLACEMENT), Placement(1, 0, None, 0)),
        (
            wrap(
                {"type": "stop"},
                {"turn_index": 2, "tab_index": 1, "sub_turn_index": 3, "model_index": 4},
            ),
            Placement(2, 1, 3, 4),
        ),
        (wrap({"type": "stop"}, None), Placement()),
        (wrap({"type": "stop"}, {"turn_index": "1", "model_index": True}), Placement()),
        ({"ind": 5, "obj": {"type": "stop"}}, Placement(turn_index=5)),
        ({"type": "stop"}, Placement()),
    ],
    ids=["normal", "all-set", "null", "mistyped", "legacy-ind", "bare-obj"],
)
def test_placement_is_lenient(value: object, expected: Placement) -> None:
    parsed = parse_packet(value)
    assert isinstance(parsed, Packet)
    assert parsed.placement == expected
    assert parsed.obj == Stop(None)


@pytest.mark.parametrize(
    "as_text",
    [lambda v: json.dumps(v), lambda v: json.dumps(v).encode()],
    ids=["str", "bytes"],
)
def test_json_text_is_read(as_text: Any) -> None:
    value = wrap({"type": "citation_info", "citation_number": 1, "document_id": "d"})
    assert parse_packet(as_text(value)) == parse_packet(value)


def test_parsed_packet_passes_through() -> None:
    packet = citation_packet(1, "d")
    assert parse_packet(packet) is packet


@pytest.mark.parametrize(
    "packet",
    [
        make_packet(SearchToolStart()),
        make_packet(SectionEnd(), turn_index=0, tab_index=1),
        make_packet(MessageStart((SearchDoc("a", link="https://a.example"),)), turn_index=1),
        make_packet(MessageStart(None), turn_index=1),
        make_packet(MessageDelta("Hello [[1]](https://a.example)"), turn_index=1),
        citation_packet(1, "a", turn_index=1),
        documents_packet([SearchDoc("a"), SearchDoc("b", file_id="f")]),
        make_packet(OpenUrlDocuments((SearchDoc("u", link="https://u.example"),))),
        make_packet(Stop(None), turn_index=1, sub_turn_index=2, model_index=1),
        make_packet(Stop("user_cancelled"), turn_index=1),
        make_packet(ErrorPacket()),
        make_packet(MessageEnd()),
    ],
    ids=lambda p: p.obj.type,
)
def test_wire_round_trip(packet: Packet) -> None:
    wire = packet_to_json(packet)
    assert set(wire) == {"placement", "obj"}
    assert set(wire["placement"]) == {"turn_index", "tab_index", "sub_turn_index", "model_index"}
    assert wire["obj"]["type"] == packet.obj.type
    # The wire JSON survives a real JSON encoder and reads back to the same packet.
    assert parse_packet(json.loads(json.dumps(wire))) == packet


def test_exact_wire_shape() -> None:
    assert packet_to_json(citation_packet(3, "doc", turn_index=1)) == {
        "placement": PLACEMENT,
        "obj": {"type": "citation_info", "citation_number": 3, "document_id": "doc"},
    }
    assert packet_to_json(make_packet(Stop(None), turn_index=1)) == {
        "placement": PLACEMENT,
        "obj": {"type": "stop", "stop_reason": None},
    }
    # `malformed_documents` is bookkeeping, never on the wire.
    wire = packet_to_json(documents_packet([SearchDoc("a")]))
    assert wire["obj"] == {
        "type": "search_tool_documents_delta",
        "documents": [search_doc_to_json(SearchDoc("a"))],
    }


def test_search_doc_full_round_trip() -> None:
    doc = search_doc_from_json(FULL_DOC)
    assert doc is not None
    assert doc.target == TaxReferenceTarget("https://www.irs.gov/publications/p17")
    assert doc.metadata == {"year": "2024", "tags": ("tax", "irs")}
    assert search_doc_to_json(doc) == FULL_DOC


def test_search_doc_defaults() -> None:
    doc = search_doc_from_json({"document_id": "x"})
    assert doc == SearchDoc("x")
    wire = search_doc_to_json(SearchDoc("x"))
    assert wire == {
        "document_id": "x",
        "semantic_identifier": "",
        "link": None,
        "blurb": "",
        "source_type": "",
        "score": None,
        "updated_at": None,
        "match_highlights": [],
        "metadata": {},
        "is_internet": False,
        "chunk_ind": 0,
        "boost": 0,
        "hidden": False,
        "primary_owners": None,
        "secondary_owners": None,
        "is_relevant": None,
        "relevance_explanation": None,
        "file_id": None,
        "target": None,
    }


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("semantic_identifier", 5, ""),
        ("link", 5, None),
        ("score", True, None),
        ("score", "0.5", None),
        ("score", 2, 2),
        ("updated_at", 1700000000, None),
        ("match_highlights", "one", ()),
        ("match_highlights", ["a", 3, "b"], ("a", "b")),
        ("metadata", ["a"], {}),
        ("metadata", {"a": 1, "b": "x", "c": ["y", 2]}, {"b": "x", "c": ("y",)}),
        ("is_internet", "yes", False),
        ("chunk_ind", True, 0),
        ("boost", 1.5, 0),
        ("primary_owners", "me", None),
        ("is_relevant", "no", None),
        ("file_id", 12, None),
        ("target", {"kind": "mystery"}, None),
        (
            "target",
            {"kind": "account", "accountId": ACCOUNT_ID, "provider": "plaid"},
            AccountTarget(ACCOUNT_ID, "plaid"),
        ),
        ("target", {"kind": "web", "url": "https://a.example"}, WebTarget("https://a.example")),
    ],
    ids=lambda v: v if isinstance(v, str) and v.isidentifier() else None,
)
def test_search_doc_mistyped_optional_fields_default(
    field: str, value: object, expected: object
) -> None:
    doc = search_doc_from_json({"document_id": "x", field: value})
    assert doc is not None
    assert getattr(doc, field) == expected


def test_search_doc_repr_hides_the_target() -> None:
    doc = SearchDoc("x", target=AccountTarget(ACCOUNT_ID, "plaid"))
    assert ACCOUNT_ID not in repr(doc)
    assert "plaid" not in repr(doc)


_SCALAR = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
_KEYS = st.sampled_from(
    [
        "type",
        "obj",
        "placement",
        "documents",
        "final_documents",
        "document_id",
        "citation_number",
        "content",
        "stop_reason",
        "link",
        "file_id",
        "target",
        "kind",
        "url",
        "metadata",
        "turn_index",
    ]
) | st.text(max_size=4)
_JSON = st.recursive(
    _SCALAR | st.sampled_from(["citation_info", "stop", "message_start", "open_url_documents"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)


@given(values=st.lists(_JSON, max_size=8))
def test_any_json_is_read_without_raising(values: list[object]) -> None:
    parsed = [parse_packet(value) for value in values]
    assert all(isinstance(item, Packet | Malformed) for item in parsed)
    state = PacketStream(1, values).state
    assert state.malformed_count >= sum(isinstance(item, Malformed) for item in parsed)
    assert state.next_packet_index == len(values)
    for item in parsed:
        if isinstance(item, Packet):
            # Whatever was read can be written back and read again to the same packet.
            assert parse_packet(json.loads(json.dumps(packet_to_json(item)))) == item
