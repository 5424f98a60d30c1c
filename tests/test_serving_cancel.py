"""Stopping an answer mid-stream under the Procfile's gunicorn: the stream says so and ends,
the answer keeps what it wrote, and the chat takes the next question."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

from httpx_sse import ServerSentEvent, connect_sse

from tests.support.fake_claude import FakeClaude, Paced, Reply, text_reply
from tests.support.gunicorn import gunicorn
from tests.test_serving import _ask, _client, _env, _sqlite, _stream, _token

# About a minute at 7 characters every 50 ms: still being written when it is cancelled.
LONG_TEXT = "One part of the answer, then another. " * 200
ANSWER = "Your cards: $1,842.17 at American Express and $2,940.00 at Chase."


def _packet(event: ServerSentEvent) -> dict[str, object]:
    obj: dict[str, object] = json.loads(event.data)["obj"]
    return obj


def test_cancelling_mid_stream_ends_the_stream_and_keeps_what_was_written(
    tmp_path: Path, seeded_sqlite_template: Path
) -> None:
    url = _sqlite(tmp_path, seeded_sqlite_template)
    replies: list[Reply] = [Paced(text_reply((LONG_TEXT, [])), 0.05), text_reply((ANSWER, []))]
    with FakeClaude(replies) as fake, ExitStack() as stack:
        env = _env(url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.url)
        server = stack.enter_context(gunicorn(env, tmp_path))
        client = stack.enter_context(_client(server, _token(url)))
        session_id, stream_url = _ask(client)
        message_id = stream_url.rsplit("/", 2)[-2]
        events: list[ServerSentEvent] = []
        with connect_sse(client, "GET", stream_url) as source:
            assert source.response.status_code == 200
            reading = source.iter_sse()
            for event in reading:  # read until the answer has words
                events.append(event)
                if event.event == "packet" and _packet(event)["type"] == "message_delta":
                    break
            # From another connection, so perhaps another worker than the runner's.
            cancelled = client.post(f"/api/chat/sessions/{session_id}/messages/{message_id}/cancel")
            events.extend(reading)  # the stream ends by itself
        stored = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]
        again = client.post(
            f"/api/chat/sessions/{session_id}/messages",
            json={"message": "And my checking account?"},
        )
        assert again.status_code == 202, again.text
        next_events = _stream(client, again.json()["stream_url"])
        after = client.get(f"/api/chat/sessions/{session_id}").json()["messages"]

    assert cancelled.status_code == 202 and cancelled.json() == {"status": "cancelled"}
    # The stream ends with `stop` (user_cancelled), then `done` {"status": "cancelled"}.
    assert [e.event for e in events[-2:]] == ["packet", "done"]
    assert _packet(events[-2]) == {"type": "stop", "stop_reason": "user_cancelled"}
    assert json.loads(events[-1].data) == {"status": "cancelled"}
    assert [
        p for p in map(_packet, (e for e in events if e.event == "packet")) if p["type"] == "stop"
    ] == [{"type": "stop", "stop_reason": "user_cancelled"}]
    assert [int(e.id) for e in events] == list(range(1, len(events) + 1))
    # The stored answer is what was streamed, no more: the start of the reply, not all of it.
    streamed = "".join(
        str(p["content"])
        for p in map(_packet, (e for e in events if e.event == "packet"))
        if p["type"] == "message_delta"
    )
    answer = stored[-1]
    assert answer["id"] == message_id and answer["status"] == "cancelled"
    assert answer["content"] == streamed
    assert streamed and LONG_TEXT.startswith(streamed) and streamed != LONG_TEXT
    # The chat takes the next question, which is answered in full.
    assert json.loads(next_events[-1].data) == {"status": "complete"}
    assert [m["status"] for m in after if m["role"] == "assistant"] == ["cancelled", "complete"]
    assert after[-1]["content"] == ANSWER
