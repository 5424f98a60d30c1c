"""Drive the browser's answer stream without Flask, and read it as a page would show it."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from markupsafe import escape

from webapp.chat.notes import StoredEvent
from webapp.packets.state import PacketStream
from webapp.sse import ServerSentEvent, SSEDecoder
from webapp.web.answer_body import answer_view
from webapp.web.answers import AnswerViews
from webapp.web.sheet import sources_view
from webapp.web.stream import THROTTLE, Phase, answer_stream


def packet(obj: dict[str, Any]) -> str:
    placement = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    return json.dumps({"placement": placement, "obj": obj})


def deltas(*texts: str) -> list[str]:
    return [packet({"type": "message_delta", "content": text}) for text in texts]


def render(stream: PacketStream, phase: Phase, error: str | None, start: int = 0) -> AnswerViews:
    state = stream.state
    answer = answer_view(
        state,
        "m",
        None,
        streaming=phase == "streaming",
        error=error,
        interrupted=phase == "interrupted",
        start=start,
    )
    return AnswerViews(answer, sources_view(state, "m", None, lambda doc: "/icon"))


def fragments(views: AnswerViews) -> tuple[str, str]:
    """Draw the views as the templates do, in made-up tags the answer HTML never holds."""
    # Multi-line on purpose: every line must travel in its own `data:` field.
    answer = views.answer
    head = "interrupted" if answer.interrupted else "streaming" if answer.streaming else "final"
    if answer.streaming:
        body = f"<answer-settled>{answer.settled_html}</answer-settled>{answer.open_html}"
    else:
        body = str(answer.body)
    return (
        f"<div class='{head}'>\n<answer-body>{body}</answer-body>\n"
        f"<p>{escape(answer.error or '')}</p>\n</div>",
        f"<dialog>\nSources · {views.sources.count}\n</dialog>",
    )


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


def stored(
    datas: list[str], *, status: str = "complete", pauses: dict[int, float] | None = None
) -> Events:
    items: list[tuple[float, StoredEvent | None]] = []
    for seq, data in enumerate(datas, start=1):
        items.append(((pauses or {}).get(seq, 0.0), StoredEvent(seq, "packet", data)))
    items.append((0.0, StoredEvent(len(datas) + 1, "done", json.dumps({"status": status}))))
    return Events(items)


class Ticks:
    """A clock that moves on by two throttles whenever it is read: every packet is drawn."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 2 * THROTTLE
        return self.now


def run(events: Events, *, every_packet: bool = False) -> tuple[list[ServerSentEvent], str]:
    clock = Ticks() if every_packet else time.monotonic
    text = "".join(answer_stream(iter(events), render, fragments, clock))
    decoder = SSEDecoder()
    return decoder.decode(text) + decoder.flush(), text


def names(events: list[ServerSentEvent]) -> list[str]:
    return [e.event for e in events]


_BODY = re.compile(
    r"<answer-body>(?:<answer-settled>(.*?)</answer-settled>)?(.*?)</answer-body>", re.DOTALL
)


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _text(units: bytes) -> str:
    return units.decode("utf-16-le", "surrogatepass")


class Page:
    """What a page shows of the answer: `answer` events swapped in whole, `patch` events
    applied as static/app.js applies them, counting in UTF-16 code units like JavaScript."""

    def __init__(self) -> None:
        self.fragment = ""  # the last `answer` event
        self.settled = ""  # the settled blocks' HTML
        self.open = ""  # the open blocks' HTML
        self.sent: str | None = None  # what app.js keeps of the open blocks (`openHtml`)
        self.streaming = False
        self.wire = 0  # the bytes of every `answer` and `patch` event's data

    @property
    def body(self) -> str:
        return self.settled + self.open

    def apply(self, event: ServerSentEvent) -> None:
        if event.event == "answer":
            found = _BODY.search(event.data)
            assert found is not None, event.data
            self.fragment, self.streaming = event.data, "class='streaming'" in event.data
            self.settled, self.open = found.group(1) or "", found.group(2)
            self.sent = None
        elif event.event == "patch":
            assert self.streaming, "a patch after the answer was finished"
            *head, html = event.data.split(" ", 3)
            base, keep, settle = (int(number) for number in head)
            sent = _utf16(self.sent or "")
            assert keep == 0 or len(sent) == 2 * base, "a patch to something else"
            assert keep * 2 <= len(sent)
            whole = sent[: 2 * keep] + _utf16(html)
            self.settled += _text(whole[: 2 * settle])
            self.open = self.sent = _text(whole[2 * settle :])
        else:
            return
        self.wire += len(event.data.encode())
