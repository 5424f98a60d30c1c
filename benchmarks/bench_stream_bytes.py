"""Bytes on the wire for a streamed answer: settled blocks and patches vs a whole re-render.

The browser's stream (`answer_stream`) used to render the whole answer on every flush and
send it as one `answer` event; now finished blocks travel once and only the open blocks'
changes follow. This feeds both the same synthetic answers, side by side in one run: an
answer with headings, paragraphs, lists and citations, written at one pace (PACE characters
of markdown a flush, about what a fast model writes in the stream's 0.1 s throttle), so
more flushes make a longer answer; every packet is a flush. It prints the answer's bytes on
the wire (every line of its `answer` and `patch` events; the sources sheet is the same in
both) over the final answer HTML (the last `answer` event's data), and each stream's CPU.
The whole re-render is too slow to run in full on long answers: past SAMPLE_FROM flushes it
renders one flush in SAMPLE, and counts each rendered flush SAMPLE times. A second table
writes the 1,000-flush answer at other paces: each patch costs about 50 bytes of framing,
so the slower the pace, the more those weigh.
Run: `.venv/bin/python benchmarks/bench_stream_bytes.py`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import _hog
from flask import render_template

from webapp import create_app
from webapp.chat.notes import StoredEvent
from webapp.packets.state import PacketStream
from webapp.sse import format_event
from webapp.web.answer_body import answer_view
from webapp.web.answers import AnswerViews
from webapp.web.sheet import sources_view
from webapp.web.stream import Phase, answer_stream

PACE = 64
SAMPLE_FROM, SAMPLE = 500, 25
# The app's own templates and helpers (`url_for`, icons), drawn in a request of its own.
APP = create_app({"TESTING": True, "SECRET_KEY": "bench", "DATABASE_URL": "sqlite://"})
SENTENCES = [
    "Your Sapphire Preferred card has a balance of **$4,782.07**, due on the 14th.",
    "Paying it in full avoids the 24.99% APR on purchases.",
    "The IRS lets you exclude up to $250,000 of gain on a home you lived in for two years.",
    "An index fund holds every stock in its index, so its fees stay low.",
    "Your checking account earns 0.01%, while a high-yield savings account pays about 4%.",
    "Contributions to a Roth IRA are limited to $7,000 for 2025, or $8,000 from age 50.",
    "Rebalancing once a year keeps your mix of stocks and bonds where you set it.",
    "A 15-year mortgage costs more each month but far less interest over its life.",
]


def _doc(number: int) -> dict[str, Any]:
    return {
        "document_id": f"https://example.com/{number}",
        "link": f"https://example.com/{number}",
        "semantic_identifier": f"Source {number}",
        "blurb": "b" * 120,
    }


def answer_markdown(length: int) -> str:
    """Return a realistic answer of at least `length` characters, in sections."""
    parts: list[str] = []
    sentences = itertools.cycle(SENTENCES)
    cites = itertools.cycle(range(1, 13))
    for section in itertools.count(1):
        if sum(map(len, parts)) >= length:
            break
        if section % 3 == 1:
            parts.append(f"### Part {section}\n\n")
        for _ in range(2):
            body = " ".join(next(sentences) for _ in range(3))
            parts.append(f"{body} [[{next(cites)}]](https://example.com/)\n\n")
        items = [
            f"- **Step {i}:** {next(sentences)} [[{next(cites)}]](https://example.com/)"
            for i in range(1, 5)
        ]
        parts.append("\n".join(items) + "\n\n")
    return "".join(parts).rstrip()


def packets(flushes: int, pace: int = PACE) -> list[str]:
    """Return the packets of an answer written in `flushes` deltas of `pace` characters."""
    place = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}

    def wire(obj: dict[str, Any]) -> str:
        return json.dumps({"placement": place, "obj": obj})

    text = answer_markdown(flushes * pace)[: flushes * pace]
    out = [
        wire({"type": "search_tool_documents_delta", "documents": [_doc(n) for n in range(1, 13)]}),
        wire({"type": "message_start", "final_documents": None}),
    ]
    cited: set[int] = set()
    for start in range(0, len(text), pace):
        delta = text[start : start + pace]
        # As the engine does: a number's citation_info comes before its first marker.
        for number in range(1, 13):
            if number not in cited and f"[[{number}]]" in text[: start + pace + 8]:
                cited.add(number)
                out.append(
                    wire(
                        {
                            "type": "citation_info",
                            "citation_number": number,
                            "document_id": f"https://example.com/{number}",
                        }
                    )
                )
        out.append(wire({"type": "message_delta", "content": delta}))
    out.append(wire({"type": "stop", "stop_reason": None}))
    return out


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
    return (
        render_template("_answer.html", answer=views.answer).strip(),
        render_template("_sources.html", sources=views.sources).strip(),
    )


def events(datas: list[str]) -> Iterator[StoredEvent | None]:
    for seq, data in enumerate(datas, start=1):
        yield StoredEvent(seq, "packet", data)
    yield StoredEvent(len(datas) + 1, "done", json.dumps({"status": "complete"}))


class Ticks:
    """A clock two throttles on at every read: the stream draws after every packet."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.2
        return self.now


def _data(event: str) -> str:
    return "\n".join(line.removeprefix("data: ") for line in event.rstrip("\n").split("\n")[1:])


def settled_stream(datas: list[str]) -> tuple[int, int, float]:
    """Return (answer bytes on the wire, final answer HTML bytes, CPU seconds) as built now."""
    start = time.process_time()
    wire = final = 0
    for event in answer_stream(events(datas), render, fragments, Ticks()):
        if event.startswith(("event: answer\n", "event: patch\n")):
            wire += len(event.encode())
        if event.startswith("event: answer\n"):
            final = len(_data(event).encode())
    return wire, final, time.process_time() - start


def whole_rerender(datas: list[str], sample: int) -> tuple[int, float]:
    """Return (answer bytes on the wire, CPU seconds) of the whole answer sent every flush.

    With `sample` > 1, only every `sample`-th flush is rendered, and counts `sample` times.
    """
    start = time.process_time()
    stream, wire, cpu = PacketStream(0), 0, 0.0
    for index, data in enumerate(datas):
        stream.append(json.loads(data))
        if index % sample == 0:
            began = time.process_time()
            views = render(stream, "streaming", None)
            whole = replace(views.answer, open_at=0)  # every block drawn again, as before
            html = fragments(AnswerViews(whole, views.sources))[0]
            wire += sample * len(format_event(html, event="answer").encode())
            cpu += (sample - 1) * (time.process_time() - began)
    views = render(stream, "final", None)
    wire += len(format_event(fragments(views)[0], event="answer").encode())
    return wire, time.process_time() - start + cpu


def main(
    sizes: tuple[int, ...] = (10, 100, 1_000, 5_000), paces: tuple[int, ...] = (16, 32, 128)
) -> None:
    with APP.test_request_context():
        _table(sizes, paces)


def _table(sizes: tuple[int, ...], paces: tuple[int, ...]) -> None:
    print(
        f"{PACE} characters of markdown a flush; answer bytes are its `answer` and `patch`"
        " events (the sources sheet is the same in both)"
    )
    print(
        f"{'flushes':>7} {'answer':>9} | {'settled: wire':>13} {'ratio':>6} {'CPU':>7}"
        f" | {'whole re-render: wire':>21} {'ratio':>7} {'CPU':>8}"
    )
    for flushes in sizes:
        datas = packets(flushes)
        wire, final, cpu = settled_stream(datas)
        sample = SAMPLE if flushes > SAMPLE_FROM else 1
        old_wire, old_cpu = whole_rerender(datas, sample)
        note = f"  (1 flush in {sample} rendered)" if sample > 1 else ""
        print(
            f"{flushes:>7} {final / 1e3:>7.1f}KB | {wire / 1e3:>11.1f}KB {wire / final:>5.2f}x"
            f" {cpu:>6.2f}s | {old_wire / 1e3:>19.1f}KB {old_wire / final:>6.1f}x"
            f" {old_cpu:>7.2f}s{note}"
        )
    print("\n1,000 flushes at other paces (settled blocks and patches)")
    for pace in paces:
        wire, final, cpu = settled_stream(packets(1_000, pace))
        print(
            f"{pace:>4} characters a flush: answer {final / 1e3:>6.1f}KB,"
            f" wire {wire / 1e3:>7.1f}KB, ratio {wire / final:.2f}x, CPU {cpu:.2f}s"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _hog.add_flag(parser)
    with _hog.beside(parser.parse_args().hog):
        main()
