"""The browser's answer stream: packets folded into HTML fragments for htmx's SSE extension.

One `PacketStream` per connection. While packets arrive, the page is brought up to date at
most every `THROTTLE` seconds, and only with what changed: a `patch`. The blocks of the
answer that can no longer change (`settled_lines`) are rendered and sent once, then stay;
only the open blocks (the last ones, still growing) are rendered again, and only the part
of their HTML that changed is sent. So the bytes grow with the answer, not with the answer
times the flushes. A whole `answer` fragment (htmx swaps it in) comes first on every
connection, so a reconnect that starts over shows the answer once; again after a `reset`,
when the answer's look changes (its first words, an error) or a citation already sent would
be drawn differently; and once at the end, drawn as history draws it. Then the sources bar
and sheet, then `done` (the placeholder closes on it, so the browser never reconnects and
replays). Events that end before the turn's own `done` (and before its `stop` packet) are
an interrupted answer, never a complete one: it says so, and `done` carries "interrupted";
a reload reads the stored answer again and carries on.

A `patch` is "BASE KEEP SETTLE HTML": of the open blocks' HTML the page was last sent (BASE
long; 0 when it was sent none since the last `answer`), keep the first KEEP characters and
add HTML; then the first SETTLE characters of that are settled blocks, moved after the
others; the rest are the open blocks. Lengths are in UTF-16 code units, as JavaScript
counts them (static/app.js applies patches).
"""

from __future__ import annotations

import json
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Literal

from flask import Response
from markupsafe import Markup
from werkzeug.exceptions import TooManyRequests

from ..chat.notes import StoredEvent
from ..chat.reading import WorkerStopping
from ..chat.service import ChatService
from ..packets.state import PacketStream
from ..sse import format_comment, format_event
from .answer_body import AnswerText
from .answers import GENERIC_ERROR, AnswerViews, packet_error, reset_after
from .markdown import line_start, settled_lines
from .status import THINKING

log = logging.getLogger(__name__)

THROTTLE = 0.1
HEARTBEAT = 15.0
Phase = Literal["streaming", "final", "interrupted"]
# The answer's views, its text read from an offset (0: all of it; see `answer_text`).
Render = Callable[[PacketStream, Phase, str | None, int], AnswerViews]
Fragments = Callable[[AnswerViews], tuple[str, str]]

_CR = re.compile(r"\r\n?")
_MARKER = re.compile(r"\[\[(\d{1,9})\]\]")


# The one way this app answers with server-sent events.
# Never stored (a user's answer), and not buffered by a proxy in front (nginx honours
# X-Accel-Buffering).
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


def sse_response(body: Iterable[str]) -> Response:
    """Return a streaming `text/event-stream` response for already-framed events."""
    return Response(body, mimetype="text/event-stream", headers=SSE_HEADERS)


TOO_MANY_STREAMS = (
    "You have as many answers open as one person may; close a tab or wait for an answer to finish."
)
STREAM_RETRY_SECONDS = 5


def counted_sse_response(service: ChatService, user_id: int, body: Iterable[str]) -> Response:
    """`sse_response`, counted among the user's open streams until it closes (429 past cap)."""
    slot = service.open_stream(user_id)
    if slot is None:
        raise TooManyRequests(TOO_MANY_STREAMS, retry_after=STREAM_RETRY_SECONDS)
    response = sse_response(body)
    # Called when the server closes the response: finished, or its client went away.
    response.call_on_close(lambda: service.close_stream(slot))
    return response


class _End:
    """The events ended; `stopping` when because this worker stops (the client reconnects)."""

    def __init__(self, stopping: bool = False) -> None:
        self.stopping = stopping


_END = _End()


class _Pump:
    """Read the stored events in a thread, so the stream can render while waiting for more."""

    def __init__(self, events: Iterator[StoredEvent | None]) -> None:
        self._queue: queue.Queue[StoredEvent | None | _End] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(events,), daemon=True, name="answer-stream"
        )
        self._thread.start()

    def _run(self, events: Iterator[StoredEvent | None]) -> None:
        end = _END
        try:
            for item in events:
                if self._stop.is_set():
                    break
                self._queue.put(item)
        except WorkerStopping:
            end = _End(stopping=True)
        except Exception:  # the stream ends with what it has; the page can be reloaded
            log.exception("reading an answer's events failed")
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
            self._queue.put(end)

    def get(self, timeout: float) -> StoredEvent | None | _End | float:
        """Return the next item, or the timeout (a float) when none came in time."""
        try:
            return self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return timeout

    def close(self) -> None:
        self._stop.set()


class _Page:
    """What one connection's page shows of a streaming answer, so it gets only what changed."""

    def __init__(self, render: Render, fragments: Fragments) -> None:
        self._render, self._fragments = render, fragments
        self.reset()
        # A new connection's page shows a waiting answer (the question's placeholder), or
        # what it had of this answer: once there are words, they come whole.
        self._look: tuple[bool, str | None, str] | None = (True, None, THINKING)

    def reset(self) -> None:
        """Forget what was drawn: the next update sends the whole answer."""
        self._start = 0  # where the open blocks start in the answer's text
        self._open = ""  # the open blocks' HTML as last drawn
        self._patchable = False  # whether the page was sent `_open` (an `answer` is not kept)
        self._cited: dict[int, Markup | None] = {}  # each number in a settled block, as drawn
        self._look = None  # (waiting, error, status), as drawn; None: not known, draw all

    def update(self, stream: PacketStream, error: str | None) -> str:
        """Return the SSE text that brings the page up to date ("" when nothing changed)."""
        answer = self._render(stream, "streaming", error, self._start).answer
        numbers = answer.text.numbers
        waiting = self._start == 0 and answer.waiting
        look = (waiting, answer.error, answer.status if waiting else "")
        if look != self._look or any(numbers.get(n) != html for n, html in self._cited.items()):
            return self._whole(stream, error)
        return self._patch(stream.state.text[self._start :], answer.text)

    def _whole(self, stream: PacketStream, error: str | None) -> str:
        views = self._render(stream, "streaming", error, 0)
        answer, text = views.answer, stream.state.text
        lines = settled_lines(answer.text.markdown, text)
        drawn = replace(answer, open_at=line_start(answer.text.markdown, lines))
        self._start, self._cited = 0, {}
        self._settle(text[: line_start(text, lines)], answer.text)
        self._open, self._patchable = _lf(drawn.open_html), False
        self._look = (answer.waiting, answer.error, answer.status if answer.waiting else "")
        return format_event(self._fragments(AnswerViews(drawn, views.sources))[0], event="answer")

    def _patch(self, text: str, answer: AnswerText) -> str:
        lines = settled_lines(answer.markdown, text)
        cut = line_start(answer.markdown, lines)
        settled, open_html = _lf(answer.html(0, cut)) if cut else "", _lf(answer.html(cut))
        if cut and settled + open_html != (whole := _lf(answer.html())):
            lines, settled, open_html = 0, "", whole  # never seen: then nothing settles yet
        if not settled and open_html == self._open:
            return ""
        html = settled + open_html
        base = self._open if self._patchable else ""
        keep = _common_prefix(base, html)
        self._settle(text[: line_start(text, lines)], answer)
        self._open, self._patchable = open_html, True
        head = f"{_units(base)} {_units(html[:keep])} {_units(settled)}"
        return format_event(f"{head} {html[keep:]}", event="patch")

    def _settle(self, text: str, answer: AnswerText) -> None:
        """Note that `text`, from where the open blocks started, is now settled blocks."""
        for number in _MARKER.findall(text):
            self._cited[int(number)] = answer.numbers.get(int(number))
        self._start += len(text)


def answer_stream(
    events: Iterator[StoredEvent | None],
    render: Render,
    fragments: Fragments,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[str]:
    """Yield SSE text: `answer` and `patch` events while packets arrive, `sources`, `done`."""
    stream = PacketStream(0)
    received: list[tuple[int, object]] = []  # (event id, packet): what a `reset` rewinds
    error: str | None = None
    page = _Page(render, fragments)
    pump = _Pump(events)
    dirty, rendered_at = False, float("-inf")
    said_at = clock()  # when anything was last sent, heartbeats included
    saw_done, ended = False, None

    def update() -> str:
        nonlocal dirty, rendered_at, said_at
        dirty, sent = False, page.update(stream, error)
        if sent:  # the throttle spaces out what is sent: a packet that shows nothing is free
            rendered_at = said_at = clock()
        return sent

    try:
        while True:
            wait = rendered_at + THROTTLE - clock() if dirty else HEARTBEAT
            item = pump.get(wait)
            if isinstance(item, float):
                sent = update() if dirty else format_comment("heartbeat")
                if sent:
                    said_at = clock()
                    yield sent
                continue
            if isinstance(item, _End):
                if item.stopping:
                    # This worker stops: the connection closes with no `done`, and htmx's
                    # SSE extension reconnects to a live worker, whose stream starts over.
                    return
                break
            if item is None:
                continue
            if item.event == "done":
                saw_done = True
                ended = _status(item.data)
                if ended == "error" and error is None:
                    error = GENERIC_ERROR
                break
            if item.event == "reset":
                # A runner took the turn over: what came after its checkpoint is withdrawn.
                after = reset_after(item.data)
                received = [(seq, p) for seq, p in received if seq <= after]
                stream.replace([p for _, p in received])
                error = next((e for _, p in received if (e := packet_error(p))), None)
                page.reset()  # rare: the whole answer is sent again
                dirty = True
                continue
            if item.event != "packet":
                continue
            packet = _json(item.data)
            received.append((item.seq, packet))
            stream.append(packet)
            error = packet_error(packet) or error
            dirty = True
            if clock() - rendered_at >= THROTTLE and (sent := update()):
                yield sent
            elif clock() - said_at >= HEARTBEAT:  # packets keep coming, but none shows
                said_at = clock()
                yield format_comment("heartbeat")
    finally:
        pump.close()
    interrupted = not saw_done and not stream.state.stopped and error is None
    if interrupted:
        log.warning("an answer's events ended before the answer did")
    views = render(stream, "interrupted" if interrupted else "final", error, 0)
    answer_html, sources_html = fragments(views)
    yield format_event(answer_html, event="answer")
    if views.sources.visible:
        yield format_event(sources_html, event="sources")
    status = (
        "interrupted"
        if interrupted
        else "error"
        if error is not None
        else "cancelled"
        if ended == "cancelled"
        else "complete"
    )
    yield format_event(status, event="done")


def _lf(html: str) -> str:
    # The browser reads every line break in an event's data as "\n": count them so.
    return _CR.sub("\n", html)


def _units(text: str) -> int:
    """Return the length of `text` as JavaScript counts it: in UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _common_prefix(a: str, b: str) -> int:
    """Return how many characters `a` and `b` share at their start."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # a[:low] == b[:low]; halve the rest
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _json(data: str) -> object:
    try:
        return json.loads(data)
    except ValueError:
        return None


def _status(data: str) -> str | None:
    loaded = _json(data)
    status = loaded.get("status") if isinstance(loaded, dict) else None
    return status if isinstance(status, str) else None
