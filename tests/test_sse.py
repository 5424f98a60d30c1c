"""The SSE decoder and encoder, with the WHATWG spec's own examples and every chunk boundary.

https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.sse import ServerSentEvent, SSEDecoder, format_comment, format_event


def decode_all(*chunks: str) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.decode(chunk)]
    return events + decoder.flush()


def test_spec_example_stock_ticker() -> None:
    stream = "data: YHOO\ndata: +2\ndata: 10\n\n"
    assert decode_all(stream) == [ServerSentEvent(data="YHOO\n+2\n10")]


def test_spec_example_comment_and_ids() -> None:
    stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    events = decode_all(stream)
    assert [(e.data, e.id) for e in events] == [
        ("first event", "1"),
        ("second event", ""),
        (" third event", ""),
    ]


def test_spec_example_empty_data() -> None:
    assert [e.data for e in decode_all("data\n\ndata\ndata\n\ndata:\n")] == ["", "\n"]


def test_spec_example_space_after_colon_is_optional() -> None:
    assert [e.data for e in decode_all("data:test\n\ndata: test\n\n")] == ["test", "test"]


def test_named_events_and_retry() -> None:
    events = decode_all("event: ping\nretry: 3000\ndata: {}\n\nevent: x\nretry: soon\ndata: 1\n\n")
    assert [(e.event, e.retry) for e in events] == [("ping", 3000), ("x", None)]


def test_event_name_resets_after_dispatch() -> None:
    events = decode_all("event: a\ndata: 1\n\ndata: 2\n\n")
    assert [e.event for e in events] == ["a", "message"]


def test_unknown_fields_and_no_data_are_ignored() -> None:
    assert decode_all("foo: bar\n\nevent: lonely\n\n") == []


def test_an_unterminated_event_is_discarded_at_flush() -> None:
    assert decode_all("data: partial") == []


def test_id_with_nul_is_ignored() -> None:
    assert decode_all("id: 7\n\nid: a\0b\ndata: x\n\n")[0].id == "7"


@pytest.mark.parametrize(
    "chunks",
    [
        ["data: a\r\n\r\n"],
        ["data: a\r", "\n\r", "\n"],
        ["data: a\r", "\r"],
        ["da", "ta: a", "\n", "\n"],
        ["\ufeffdata: a\n\n"],
        ["data: a\n", "\n"],
    ],
    ids=["crlf", "crlf-split", "cr-only", "split-field", "bom", "split-blank"],
)
def test_chunk_boundaries(chunks: list[str]) -> None:
    assert decode_all(*chunks) == [ServerSentEvent(data="a")]


def test_last_event_id_persists_across_events() -> None:
    events = decode_all("id: 5\ndata: a\n\ndata: b\n\n")
    assert [e.id for e in events] == ["5", "5"]


def test_format_event_splits_multiline_data() -> None:
    assert format_event("a\nb\r\nc", event="packet", id=3) == (
        "event: packet\nid: 3\ndata: a\ndata: b\ndata: c\n\n"
    )


@pytest.mark.parametrize(("kwargs"), [{"event": "a\nb"}, {"id": "1\n2"}, {"id": "a\0"}])
def test_format_event_refuses_breaks_in_names_and_ids(kwargs: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        format_event("x", **kwargs)


def test_comment_is_ignored_by_the_decoder() -> None:
    assert decode_all(format_comment("heartbeat")) == []


texts = st.text(alphabet=st.characters(blacklist_characters="\r\n\0", blacklist_categories=["Cs"]))


@given(st.lists(st.tuples(texts, st.text(alphabet="abc\n", max_size=30)), max_size=5), st.data())
def test_round_trip_through_any_chunking(items: list[tuple[str, str]], data: st.DataObject) -> None:
    stream = "".join(
        format_event(body, event=name or None, id=i) for i, (name, body) in enumerate(items)
    )
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    events = decode_all(*chunks)
    assert [(e.event, e.data, e.id) for e in events] == [
        (name or "message", body, str(i)) for i, (name, body) in enumerate(items)
    ]
