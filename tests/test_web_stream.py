"""The browser's SSE stream: throttled `answer` fragments, then `sources`, then `done`."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from markupsafe import escape

from webapp.chat import StoredEvent
from webapp.packets import PacketStream
from webapp.sse import ServerSentEvent, SSEDecoder
from webapp.web import _stream
from webapp.web._answers import GENERIC_ERROR, AnswerViews
from webapp.web._render import answer_view, sources_view
from webapp.web._stream import THROTTLE, Phase, answer_stream


def packet(obj: dict[str, Any]) -> str:
    placement = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    return json.dumps({"placement": placement, "obj": obj})


DOC = {"document_id": "https://www.irs.gov/a", "semantic_identifier": "IRS",
       "link": "https://www.irs.gov/a"}
OPENING = [packet({"type": "search_tool_documents_delta", "documents": [DOC]}),
           packet({"type": "message_start", "final_documents": None})]
CLOSING = [packet({"type": "citation_info", "citation_number": 1,
                   "document_id": DOC["document_id"]}),
           packet({"type": "stop", "stop_reason": None})]


def deltas(*texts: str) -> list[str]:
    return [packet({"type": "message_delta", "content": text}) for text in texts]


def render(stream: PacketStream, phase: Phase, error: str | None) -> AnswerViews:
    state = stream.state
    answer = answer_view(state, "m", None, streaming=phase == "streaming", error=error,
                         interrupted=phase == "interrupted")
    return AnswerViews(answer, sources_view(state, "m", None, lambda doc: "/icon"))


def fragments(views: AnswerViews) -> tuple[str, str]:
    # Multi-line on purpose: every line must travel in its own `data:` field.
    answer = views.answer
    head = ("interrupted" if answer.interrupted else
            "streaming" if answer.streaming else "final")
    return (f"<div class='{head}'>\n{answer.body}\n<p>{escape(answer.error or '')}</p>\n</div>",
            f"<dialog>\nSources · {views.sources.count}\n</dialog>")


class Events:
    """Stored events as the chat service yields them, optionally with pauses between them."""

    def __init__(self, items: list[tuple[float, StoredEvent | None]]) -> None:
        self.items = items
        self.closed = threading.Event()

    def __iter__(self) -> Iterator[StoredEvent | None]:
        try:
            for pause, item in self.items:
                if pause:
                    time.sleep(pause)
                yield item
        finally:
            self.closed.set()


def stored(datas: list[str], *, status: str = "complete",
           pauses: dict[int, float] | None = None) -> Events:
    items: list[tuple[float, StoredEvent | None]] = []
    for seq, data in enumerate(datas, start=1):
        items.append(((pauses or {}).get(seq, 0.0), StoredEvent(seq, "packet", data)))
    items.append((0.0, StoredEvent(len(datas) + 1, "done", json.dumps({"status": status}))))
    return Events(items)


def run(events: Events) -> tuple[list[ServerSentEvent], str]:
    text = "".join(answer_stream(iter(events), render, fragments))
    decoder = SSEDecoder()
    return decoder.decode(text) + decoder.flush(), text


def names(events: list[ServerSentEvent]) -> list[str]:
    return [e.event for e in events]


def test_a_quick_answer_is_rendered_once_streaming_then_final() -> None:
    events, _ = run(stored(OPENING + deltas("You owe [[1]]", "(https://www.irs.gov/a) $5.")
                           + CLOSING))
    assert names(events) == ["answer", "answer", "sources", "done"]
    final = events[1].data
    assert final.startswith("<div class='final'>\n") and "$5." in final
    assert '<a class="cite" href="https://www.irs.gov/a"' in final
    assert events[2].data == "<dialog>\nSources · 1\n</dialog>"
    assert events[3].data == "complete"


def test_every_fragment_arrives_whole_and_line_by_line() -> None:
    events, text = run(stored(OPENING + deltas("line one\n\nline two") + CLOSING))
    for event in events:
        if event.event == "answer":
            assert event.data.startswith("<div") and event.data.endswith("</div>")
    # A raw line break inside data would end the field: every line carries its own prefix.
    for block in text.strip().split("\n\n"):
        lines = block.split("\n")
        assert all(line.startswith(("event: ", "data: ", ": ")) or line == "data:"
                   for line in lines), block


def test_rerenders_are_throttled_while_packets_pour_in() -> None:
    many = deltas(*(f"word{i} " for i in range(300)))
    events, _ = run(stored(OPENING + many + CLOSING))
    answers = [e for e in events if e.event == "answer"]
    assert 2 <= len(answers) <= 4
    assert "word299" in answers[-1].data and answers[-1].data.startswith("<div class='final'>")


def test_slow_packets_are_each_shown_and_a_pending_render_is_not_held_back() -> None:
    pause = THROTTLE * 3
    datas = OPENING + deltas("first ", "second ", "third") + CLOSING
    # "second" arrives right after "first"; then the stream goes quiet before "third".
    events, _ = run(stored(datas, pauses={3: pause, 4: 0.0, 5: pause * 2}))
    streaming = [e.data for e in events if e.event == "answer" and "'streaming'" in e.data]
    assert any("second" in data and "third" not in data for data in streaming)


def test_an_error_packet_shows_its_message() -> None:
    error = packet({"type": "error", "error": "The model is <overloaded>."})
    events, _ = run(stored(OPENING + deltas("Partial") + [error], status="error"))
    final = [e for e in events if e.event == "answer"][-1].data
    assert "The model is &lt;overloaded&gt;." in final
    assert names(events)[-1] == "done" and events[-1].data == "error"
    assert "sources" not in names(events)


def test_a_failed_turn_without_an_error_packet_still_says_so() -> None:
    events, _ = run(stored(OPENING + deltas("Partial"), status="error"))
    final = [e for e in events if e.event == "answer"][-1].data
    assert str(escape(GENERIC_ERROR)) in final


def test_an_answer_without_sources_sends_no_sources_event() -> None:
    events, _ = run(stored(deltas("Hello.") + [packet({"type": "stop"})]))
    assert names(events) == ["answer", "answer", "done"]


@pytest.mark.parametrize("bad", ["not json", "[]", "null", '{"obj": 5}'],
                         ids=["not-json", "list", "null", "bad-obj"])
def test_malformed_stored_packets_are_skipped(bad: str) -> None:
    events, _ = run(stored(OPENING + [bad] + deltas("Still fine.") + CLOSING))
    assert "Still fine." in [e for e in events if e.event == "answer"][-1].data


def test_idle_streams_send_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stream, "HEARTBEAT", 0.05)
    events = stored(deltas("x") + [packet({"type": "stop"})], pauses={1: 0.3})
    _, text = run(events)
    assert ": heartbeat\n\n" in text


def test_a_closed_stream_stops_reading_events() -> None:
    events = Events([(0.0, StoredEvent(1, "packet", deltas("x")[0]))]
                    + [(0.05, None) for _ in range(200)])
    stream = answer_stream(iter(events), render, fragments)
    assert next(stream).startswith("event: answer")
    stream.close()
    assert events.closed.wait(2)


def test_a_reset_withdraws_what_a_dead_runner_sent_after_its_checkpoint() -> None:
    before = OPENING + deltas("Kept. ")
    items: list[tuple[float, StoredEvent | None]] = [
        (0.0, StoredEvent(seq, "packet", data)) for seq, data in enumerate(before, start=1)]
    items += [(0.0, StoredEvent(4, "packet", deltas("Withdrawn. ")[0])),
              (0.0, StoredEvent(5, "reset", json.dumps({"after": 3}))),
              (0.0, StoredEvent(6, "packet", deltas("Resumed.")[0]))]
    items += [(0.0, StoredEvent(7 + i, "packet", data)) for i, data in enumerate(CLOSING)]
    items.append((0.0, StoredEvent(9, "done", json.dumps({"status": "complete"}))))
    events, _ = run(Events(items))
    final = [e.data for e in events if e.event == "answer"][-1]
    assert "Kept." in final and "Resumed." in final and "Withdrawn." not in final


class Broken(Events):
    """Stored events that end (or fail) before the turn's `done`."""

    def __init__(self, datas: list[str], *, fail: bool) -> None:
        super().__init__([(0.0, StoredEvent(seq, "packet", data))
                          for seq, data in enumerate(datas, start=1)])
        self.fail = fail

    def __iter__(self) -> Iterator[StoredEvent | None]:
        yield from super().__iter__()
        if self.fail:
            raise RuntimeError("the database went away")


@pytest.mark.parametrize("fail", [False, True], ids=["ended-early", "raised"])
def test_events_that_stop_before_done_are_an_interrupted_answer(
    fail: bool, caplog: pytest.LogCaptureFixture
) -> None:
    events, _ = run(Broken(OPENING + deltas("You owe [[1]]", "(https://www.irs.gov/a) $5"),
                           fail=fail))
    final = [e.data for e in events if e.event == "answer"][-1]
    assert final.startswith("<div class='interrupted'>") and "$5" in final
    assert "sources" not in names(events)
    assert events[-1].event == "done" and events[-1].data == "interrupted"
    assert "ended before the answer did" in caplog.text


def test_events_that_stop_after_the_stop_packet_are_a_complete_answer() -> None:
    events, _ = run(Broken(OPENING + deltas("You owe [[1]]() $5.") + CLOSING, fail=True))
    final = [e.data for e in events if e.event == "answer"][-1]
    assert final.startswith("<div class='final'>")
    assert names(events)[-2:] == ["sources", "done"] and events[-1].data == "complete"


def test_an_error_packet_without_done_is_an_error_not_an_interruption() -> None:
    error = packet({"type": "error", "error": "Rate limited"})
    events, _ = run(Broken(OPENING + deltas("Partial") + [error], fail=False))
    final = [e.data for e in events if e.event == "answer"][-1]
    assert final.startswith("<div class='final'>") and "Rate limited" in final
    assert events[-1].data == "error"
