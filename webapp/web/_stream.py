"""The browser's answer stream: packets folded into HTML fragments for htmx's SSE extension.

One `PacketStream` per connection. The answer is re-rendered at most every `THROTTLE`
seconds while packets arrive, and always once at the end; then the sources bar and sheet,
then `done` (the placeholder closes on it, so the browser never reconnects and replays).
Each event is a whole fragment (`answer` replaces the body), so a reconnect that starts
over shows the answer once. Events that end before the turn's own `done` (and before its
`stop` packet) are an interrupted answer, never a complete one: it says so, and `done`
carries "interrupted"; a reload reads the stored answer again and carries on.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Literal

from ..chat import StoredEvent
from ..packets import PacketStream
from ..sse import format_comment, format_event
from ._answers import GENERIC_ERROR, AnswerViews, packet_error

log = logging.getLogger(__name__)

THROTTLE = 0.1
HEARTBEAT = 15.0
Phase = Literal["streaming", "final", "interrupted"]
Render = Callable[[PacketStream, Phase, str | None], AnswerViews]
Fragments = Callable[[AnswerViews], tuple[str, str]]


class _End:
    pass


_END = _End()


class _Pump:
    """Read the stored events in a thread, so the stream can render while waiting for more."""

    def __init__(self, events: Iterator[StoredEvent | None]) -> None:
        self._queue: queue.Queue[StoredEvent | None | _End] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(events,), daemon=True,
                                        name="answer-stream")
        self._thread.start()

    def _run(self, events: Iterator[StoredEvent | None]) -> None:
        try:
            for item in events:
                if self._stop.is_set():
                    break
                self._queue.put(item)
        except Exception:  # the stream ends with what it has; the page can be reloaded
            log.exception("reading an answer's events failed")
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
            self._queue.put(_END)

    def get(self, timeout: float) -> StoredEvent | None | _End | float:
        """Return the next item, or the timeout (a float) when none came in time."""
        try:
            return self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return timeout

    def close(self) -> None:
        self._stop.set()


def answer_stream(events: Iterator[StoredEvent | None], render: Render,
                  fragments: Fragments, clock: Callable[[], float] = time.monotonic,
                  ) -> Iterator[str]:
    """Yield SSE text: `answer` fragments while packets arrive, then `sources` and `done`."""
    stream = PacketStream(0)
    received: list[tuple[int, object]] = []  # (event id, packet): what a `reset` rewinds
    error: str | None = None
    pump = _Pump(events)
    dirty, rendered_at = False, float("-inf")
    saw_done = False

    def answer() -> str:
        nonlocal dirty, rendered_at
        dirty, rendered_at = False, clock()
        answer_html, _ = fragments(render(stream, "streaming", error))
        return format_event(answer_html, event="answer")

    try:
        while True:
            wait = rendered_at + THROTTLE - clock() if dirty else HEARTBEAT
            item = pump.get(wait)
            if isinstance(item, float):
                yield answer() if dirty else format_comment("heartbeat")
                continue
            if isinstance(item, _End):
                break
            if item is None:
                continue
            if item.event == "done":
                saw_done = True
                if _status(item.data) == "error" and error is None:
                    error = GENERIC_ERROR
                break
            if item.event == "reset":
                # A runner took the turn over: what came after its checkpoint is withdrawn.
                after = _reset_after(item.data)
                received = [(seq, p) for seq, p in received if seq <= after]
                stream.replace([p for _, p in received])
                error = next((e for _, p in received if (e := packet_error(p))), None)
                dirty = True
                continue
            if item.event != "packet":
                continue
            packet = _json(item.data)
            received.append((item.seq, packet))
            stream.append(packet)
            error = packet_error(packet) or error
            dirty = True
            if clock() - rendered_at >= THROTTLE:
                yield answer()
    finally:
        pump.close()
    interrupted = not saw_done and not stream.state.stopped and error is None
    if interrupted:
        log.warning("an answer's events ended before the answer did")
    views = render(stream, "interrupted" if interrupted else "final", error)
    answer_html, sources_html = fragments(views)
    yield format_event(answer_html, event="answer")
    if views.sources.visible:
        yield format_event(sources_html, event="sources")
    status = "interrupted" if interrupted else "complete" if error is None else "error"
    yield format_event(status, event="done")


def _json(data: str) -> object:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _reset_after(data: str) -> int:
    loaded = _json(data)
    after = loaded.get("after") if isinstance(loaded, dict) else None
    return after if isinstance(after, int) and not isinstance(after, bool) else 0


def _status(data: str) -> str | None:
    loaded = _json(data)
    status = loaded.get("status") if isinstance(loaded, dict) else None
    return status if isinstance(status, str) else None
