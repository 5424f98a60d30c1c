"""The browser's SSE stream: a whole `answer`, throttled `patch` events, `sources`, `done`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from markupsafe import escape

from tests.support.answer_stream import (
    Events,
    Page,
    deltas,
    fragments,
    names,
    packet,
    render,
    run,
    stored,
)
from webapp.chat.notes import StoredEvent
from webapp.chat.reading import WorkerStopping
from webapp.sse import ServerSentEvent
from webapp.web import stream
from webapp.web.answers import GENERIC_ERROR
from webapp.web.stream import THROTTLE, answer_stream

DOC = {
    "document_id": "https://www.irs.gov/a",
    "semantic_identifier": "IRS",
    "link": "https://www.irs.gov/a",
}
OPENING = [
    packet({"type": "search_tool_documents_delta", "documents": [DOC]}),
    packet({"type": "message_start", "final_documents": None}),
]
CLOSING = [
    packet({"type": "citation_info", "citation_number": 1, "document_id": DOC["document_id"]}),
    packet({"type": "stop", "stop_reason": None}),
]


def test_a_quick_answer_is_rendered_once_streaming_then_final() -> None:
    events, _ = run(
        stored(OPENING + deltas("You owe [[1]]", "(https://www.irs.gov/a) $5.") + CLOSING)
    )
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
        assert all(
            line.startswith(("event: ", "data: ", ": ")) or line == "data:" for line in lines
        ), block


def test_rerenders_are_throttled_while_packets_pour_in() -> None:
    many = deltas(*(f"word{i} " for i in range(300)))
    events, _ = run(stored(OPENING + many + CLOSING))
    updates = [e for e in events if e.event in ("answer", "patch")]
    assert 2 <= len(updates) <= 4
    assert "word299" in updates[-1].data and updates[-1].data.startswith("<div class='final'>")


def shown(events: list[ServerSentEvent]) -> list[str]:
    """Return the answer body the page shows after each event."""
    page, bodies = Page(), []
    for event in events:
        page.apply(event)
        bodies.append(page.body)
    return bodies


def test_slow_packets_are_each_bodiesand_a_pending_render_is_not_held_back() -> None:
    pause = THROTTLE * 3
    datas = OPENING + deltas("first ", "second ", "third") + CLOSING
    # "second" arrives right after "first"; then the stream goes quiet before "third".
    events, _ = run(stored(datas, pauses={3: pause, 4: 0.0, 5: pause * 2}))
    assert "patch" in names(events)
    assert any("second" in body and "third" not in body for body in shown(events))


def test_an_error_packet_shows_its_message() -> None:
    error = packet({"type": "error", "error": "The model is <overloaded>."})
    events, _ = run(stored(OPENING + deltas("Partial") + [error], status="error"))
    final = [e for e in events if e.event == "answer"][-1].data
    assert "The model is &lt;overloaded&gt;." in final
    assert names(events)[-1] == "done" and events[-1].data == "error"
    assert "sources" not in names(events)


def test_a_stopped_answer_ends_its_stream_as_cancelled() -> None:
    stop = packet({"type": "stop", "stop_reason": "user_cancelled"})
    events, _ = run(stored(OPENING + deltas("Part of it") + [stop], status="cancelled"))
    assert names(events)[-1] == "done" and events[-1].data == "cancelled"


def test_a_failed_turn_without_an_error_packet_still_says_so() -> None:
    events, _ = run(stored(OPENING + deltas("Partial"), status="error"))
    final = [e for e in events if e.event == "answer"][-1].data
    assert str(escape(GENERIC_ERROR)) in final


def test_an_answer_without_sources_sends_no_sources_event() -> None:
    events, _ = run(stored(deltas("Hello.") + [packet({"type": "stop"})]))
    assert names(events) == ["answer", "answer", "done"]


@pytest.mark.parametrize(
    "bad", ["not json", "[]", "null", '{"obj": 5}'], ids=["not-json", "list", "null", "bad-obj"]
)
def test_malformed_stored_packets_are_skipped(bad: str) -> None:
    events, _ = run(stored(OPENING + [bad] + deltas("Still fine.") + CLOSING))
    assert "Still fine." in [e for e in events if e.event == "answer"][-1].data


def test_idle_streams_send_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "HEARTBEAT", 0.05)
    events = stored(deltas("x") + [packet({"type": "stop"})], pauses={1: 0.3})
    _, text = run(events)
    assert ": heartbeat\n\n" in text


def test_a_closed_stream_stops_reading_events() -> None:
    events = Events(
        [(0.0, StoredEvent(1, "packet", deltas("x")[0]))] + [(0.05, None) for _ in range(200)]
    )
    stream = answer_stream(iter(events), render, fragments)
    assert next(stream).startswith("event: answer")
    stream.close()  # type: ignore[attr-defined]
    assert events.closed.wait(30)  # at once, but a loaded machine may take a while


def test_a_reset_withdraws_what_a_dead_runner_sent_after_its_checkpoint() -> None:
    before = OPENING + deltas("Kept. ")
    items: list[tuple[float, StoredEvent | None]] = [
        (0.0, StoredEvent(seq, "packet", data)) for seq, data in enumerate(before, start=1)
    ]
    items += [
        (0.0, StoredEvent(4, "packet", deltas("Withdrawn. ")[0])),
        (0.0, StoredEvent(5, "reset", json.dumps({"after": 3}))),
        (0.0, StoredEvent(6, "packet", deltas("Resumed.")[0])),
    ]
    items += [(0.0, StoredEvent(7 + i, "packet", data)) for i, data in enumerate(CLOSING)]
    items.append((0.0, StoredEvent(9, "done", json.dumps({"status": "complete"}))))
    events, _ = run(Events(items))
    final = [e.data for e in events if e.event == "answer"][-1]
    assert "Kept." in final and "Resumed." in final and "Withdrawn." not in final


class Broken(Events):
    """Stored events that end (or fail) before the turn's `done`."""

    def __init__(self, datas: list[str], *, fail: bool) -> None:
        super().__init__(
            [(0.0, StoredEvent(seq, "packet", data)) for seq, data in enumerate(datas, start=1)]
        )
        self.fail = fail

    def __iter__(self) -> Iterator[StoredEvent | None]:
        yield from super().__iter__()
        if self.fail:
            raise RuntimeError("the database went away")


@pytest.mark.parametrize("fail", [False, True], ids=["ended-early", "raised"])
def test_events_that_stop_before_done_are_an_interrupted_answer(
    fail: bool, caplog: pytest.LogCaptureFixture
) -> None:
    events, _ = run(
        Broken(OPENING + deltas("You owe [[1]]", "(https://www.irs.gov/a) $5"), fail=fail)
    )
    final = [e.data for e in events if e.event == "answer"][-1]
    assert final.startswith("<div class='interrupted'>") and "$5" in final
    assert "sources" not in names(events)
    assert events[-1].event == "done" and events[-1].data == "interrupted"
    assert "ended before the answer did" in caplog.text


class Stopping(Events):
    """Stored events, then this worker begins to stop (a deploy) before the turn's `done`."""

    def __init__(self, datas: list[str]) -> None:
        super().__init__(
            [(0.0, StoredEvent(seq, "packet", data)) for seq, data in enumerate(datas, start=1)]
        )

    def __iter__(self) -> Iterator[StoredEvent | None]:
        yield from super().__iter__()
        raise WorkerStopping


def test_a_stopping_worker_ends_the_stream_without_done_so_the_browser_reconnects() -> None:
    events, _ = run(Stopping(OPENING + deltas("You owe [[1]]", "(https://www.irs.gov/a) $5")))
    assert "done" not in names(events)  # htmx's SSE extension closes only on `done`
    assert all("interrupted" not in e.data for e in events)


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


# Finished blocks travel once; only the open blocks are drawn again.

PARAGRAPH = (
    "Your card's balance is **$4,782.07**, due on the 14th; paying it in full avoids"
    " the 24.99% APR on purchases"
)


def long_answer(sections: int) -> str:
    parts = []
    for n in range(sections):
        parts.append(f"{PARAGRAPH} [[1]](https://www.irs.gov/a).\n\n")
        parts.append("".join(f"- Step {i}: {PARAGRAPH[:60]} [[1]]()\n" for i in range(4)))
        parts.append(f"\n### Part {n}\n\n")
    return "".join(parts) + "The end."


def written(text: str, pace: int) -> list[str]:
    """Return the packets of `text` written `pace` characters at a time, cited first."""
    chunks = [text[i : i + pace] for i in range(0, len(text), pace)]
    return OPENING + CLOSING[:1] + deltas(*chunks) + CLOSING[1:]


def wire(text: str, kinds: tuple[str, ...] = ("answer", "patch")) -> int:
    return sum(
        len(block.encode()) + 2
        for block in text.split("\n\n")
        if block.startswith(tuple(f"event: {kind}\n" for kind in kinds))
    )


def test_settled_blocks_travel_once_and_only_the_open_ones_change() -> None:
    events, _ = run(stored(written(long_answer(3), 40)), every_packet=True)
    kinds = names(events)
    assert kinds[0] == "answer" and kinds[-3:] == ["answer", "sources", "done"]
    assert set(kinds[1:-3]) == {"patch"}  # never the whole answer again meanwhile
    page, settled = Page(), ""
    for event in events[:-3]:
        page.apply(event)
        assert page.settled.startswith(settled)  # settled blocks are only ever added to
        settled = page.settled
    assert settled.count("<ul>") == 3 and settled.count("<h3>") == 3
    assert page.open == "<p>The end.</p>\n"
    final = Page()
    final.apply(events[-3])
    assert page.body == final.body  # the streamed blocks are the final answer's


@pytest.mark.parametrize("sections", [1, 4, 16], ids=["short", "medium", "long"])
def test_the_answer_costs_at_most_three_times_its_html_on_the_wire(sections: int) -> None:
    # Every packet is a flush: 48 characters a flush, about a model's pace at 0.1 s.
    events, text = run(stored(written(long_answer(sections), 48)), every_packet=True)
    final = len(events[-3].data.encode())
    assert wire(text) <= 3 * final
    assert wire(text, ("patch",)) <= 2 * final


def test_a_citation_named_after_its_block_settled_redraws_the_whole_answer() -> None:
    # Not the engine's order: the number is unknown when its block settles, shown as nothing.
    datas = (
        OPENING
        + deltas("Fact [[1]](https://www.irs.gov/a).\n\n", "Next ", "words.\n\n")
        + CLOSING[:1]
        + deltas("More.")
        + CLOSING[1:]
    )
    events, _ = run(stored(datas), every_packet=True)
    page = Page()
    for event in events[:-3]:
        page.apply(event)
    assert names(events).count("answer") == 3  # first words, the citation, the end
    assert '<a class="cite" href="https://www.irs.gov/a"' in page.settled
    assert 'class="cite"' not in events[1].data  # the patches before it had no citation


def test_a_document_that_changes_a_sent_citation_redraws_the_whole_answer() -> None:
    renamed = {**DOC, "semantic_identifier": "IRS Publication 523"}
    datas = (
        OPENING
        + CLOSING[:1]
        + deltas("Fact [[1]]().\n\n", "Next.\n\n", "More")
        + [packet({"type": "search_tool_documents_delta", "documents": [renamed]})]
        + deltas(" words.")
        + CLOSING[1:]
    )
    events, _ = run(stored(datas), every_packet=True)
    streaming = [e.data for e in events if e.event == "answer" and "'streaming'" in e.data]
    assert len(streaming) == 2 and 'aria-label="Source 1: IRS Publication 523"' in streaming[1]


def test_an_error_while_streaming_is_drawn_at_once() -> None:
    error = packet({"type": "error", "error": "The model is overloaded."})
    datas = OPENING + deltas("One.\n\n", "Two.\n\n", "Thr") + [error]
    events, _ = run(stored(datas, status="error"), every_packet=True)
    page = Page()
    for event in events[:-2]:
        page.apply(event)
        if "overloaded" in page.fragment:
            break
    assert "'streaming'" in page.fragment and "Thr" in page.body
    assert events[-1].data == "error"


def test_a_reconnect_that_starts_over_shows_the_answer_once() -> None:
    datas = written(long_answer(2), 30)
    first, _ = run(Broken(datas[: len(datas) // 2], fail=True), every_packet=True)
    again, _ = run(stored(datas), every_packet=True)
    page = Page()
    for event in [e for e in first if e.event in ("answer", "patch")][:-1] + again[:-3]:
        page.apply(event)  # the first stream broke off; the browser connected again
    assert page.body.count("Part 1") == 1 and page.body.count("<ul>") == 2
    page.apply(again[-3])
    assert page.body.count("Part 1") == 1


def test_a_reset_redraws_the_whole_answer_then_patches_again() -> None:
    before = OPENING + deltas("Kept.\n\n", "Also kept.\n\n")
    items: list[tuple[float, StoredEvent | None]] = [
        (0.0, StoredEvent(seq, "packet", data)) for seq, data in enumerate(before, start=1)
    ]
    items += [
        (0.0, StoredEvent(5, "packet", deltas("Withdrawn.\n\n")[0])),
        (0.0, StoredEvent(6, "reset", json.dumps({"after": 4}))),
        (0.0, StoredEvent(7, "packet", deltas("Resumed.\n\n")[0])),
        (0.0, StoredEvent(8, "packet", deltas("And more.")[0])),
        (0.0, StoredEvent(9, "done", json.dumps({"status": "complete"}))),
    ]
    events, _ = run(Events(items), every_packet=True)
    page, bodies = Page(), []
    for event in events[:-2]:
        page.apply(event)
        bodies.append((event.event, page.body))
    reset_at = next(i for i, (_, body) in enumerate(bodies) if "Resumed" in body)
    assert bodies[reset_at][0] == "answer" and "Withdrawn" not in bodies[reset_at][1]
    assert bodies[reset_at + 1][0] == "patch" and "And more" in bodies[reset_at + 1][1]


def test_packets_that_show_nothing_still_let_heartbeats_through() -> None:
    # Tool packets for a long while, nothing new to draw: proxies must still see bytes.
    quiet = [packet({"type": "search_tool_start", "tool_name": "search"})] * 200
    events = stored(deltas("x") + quiet + [packet({"type": "stop"})])
    _, text = run(events, every_packet=True)  # the clock moves 0.2 s a read: 40 s in all
    assert ": heartbeat\n\n" in text
    assert text.count("event: answer") == 2  # the first words and the end: quiet otherwise


def test_a_reset_that_withdraws_every_word_shows_the_answer_waiting_again() -> None:
    items: list[tuple[float, StoredEvent | None]] = [
        (0.0, StoredEvent(seq, "packet", data))
        for seq, data in enumerate(OPENING + deltas("Withdrawn."), start=1)
    ]
    items += [
        (0.0, StoredEvent(4, "reset", json.dumps({"after": 2}))),
        (THROTTLE * 10, StoredEvent(5, "packet", deltas("Fresh.")[0])),
        (0.0, StoredEvent(6, "done", json.dumps({"status": "complete"}))),
    ]
    events, _ = run(Events(items))
    page, bodies = Page(), []
    for event in events:
        page.apply(event)
        bodies.append(page.body)
    assert "" in bodies[bodies.index(next(b for b in bodies if "Withdrawn" in b)) :]
    assert "Withdrawn" not in bodies[-1] and "Fresh" in bodies[-1]
