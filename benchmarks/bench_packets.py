"""Folding a streamed answer: against decoding its JSON, and against a full pass per flush.

The floor: decoding each packet's JSON text, which any reader of the stored events does. The
product: decoding it and folding it into a `PacketStream`, one packet at a time, as the
browser's stream does (goal: at most 3x the floor at every size). Beside them, seed 001's
mobile client, which re-processes every packet on every flush ("cheap at chat scale"). All
are run in turn, round after round, and each one's fastest round is kept.
Run: `.venv/bin/python benchmarks/bench_packets.py [--deltas 50,500,2000,5000] [--rounds 20]`.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import _hog

from webapp.packets.state import PacketStream, create_initial_state, process_packets


def answer_packets(deltas: int) -> list[dict[str, Any]]:
    """Return a long answer's packets: documents, text deltas with citations, stop."""
    place = {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0}
    docs = [
        {
            "document_id": f"https://example.com/{i}",
            "semantic_identifier": f"Doc {i}",
            "link": f"https://example.com/{i}",
            "blurb": "b" * 200,
        }
        for i in range(20)
    ]
    packets = [
        {"placement": place, "obj": {"type": "search_tool_documents_delta", "documents": docs}},
        {"placement": place, "obj": {"type": "message_start", "final_documents": docs}},
    ]
    for i in range(deltas):
        packets.append(
            {"placement": place, "obj": {"type": "message_delta", "content": f"word{i} "}}
        )
        if i % 50 == 0:
            number = i // 50 % 20 + 1
            packets.append(
                {
                    "placement": place,
                    "obj": {
                        "type": "citation_info",
                        "citation_number": number,
                        "document_id": f"https://example.com/{number - 1}",
                    },
                }
            )
    packets.append({"placement": place, "obj": {"type": "stop", "stop_reason": None}})
    return packets


def incremental(packets: list[dict[str, Any]], flush: int) -> float:
    start = time.perf_counter()
    stream = PacketStream(0)
    for i in range(0, len(packets), flush):
        stream.extend(packets[i : i + flush])
    assert stream.state.is_complete
    return time.perf_counter() - start


def full_pass(packets: list[dict[str, Any]], flush: int) -> float:
    start = time.perf_counter()
    state = create_initial_state(0)
    for i in range(0, len(packets), flush):
        state = process_packets(create_initial_state(0), packets[: i + flush])
    assert state.is_complete
    return time.perf_counter() - start


def decode(texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        json.loads(text)
    return time.perf_counter() - start


def decode_and_fold(texts: list[str]) -> float:
    start = time.perf_counter()
    stream = PacketStream(0)
    for text in texts:
        stream.append(json.loads(text))
    assert stream.state.is_complete
    return time.perf_counter() - start


def fastest(runs: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Run each in turn, `rounds` times over, and return each one's fastest time."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(rounds):
        for name, run in runs.items():
            best[name] = min(best[name], run())
    return best


GOAL = 3.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", default="50,500,2000,5000")
    parser.add_argument("--rounds", type=int, default=20)
    _hog.add_flag(parser)
    args = parser.parse_args(argv)
    with _hog.beside(args.hog):
        _table(args)


def _table(args: argparse.Namespace) -> None:
    print(f"fold ÷ JSON-decode floor (goal ≤ {GOAL:g}x), fastest of {args.rounds} rounds")
    for deltas in [int(d) for d in args.deltas.split(",") if d]:
        packets = answer_packets(deltas)
        texts = [json.dumps(p) for p in packets]
        flush = max(1, deltas // 100)
        t = fastest(
            {
                "floor": partial(decode, texts),
                "fold": partial(decode_and_fold, texts),
                "incremental": partial(incremental, packets, flush),
                "full": partial(full_pass, packets, flush),
            },
            args.rounds if deltas <= 500 else max(1, args.rounds // 5),
        )
        ratio = t["fold"] / t["floor"]
        print(
            f"{len(packets):>6} packets: decode {t['floor'] * 1e3:7.3f} ms"
            f"  decode+fold {t['fold'] * 1e3:7.3f} ms  = {ratio:4.2f}x"
            f" {'met' if ratio <= GOAL else 'NOT met'};"
            f"  flush every {flush:>2}: incremental {t['incremental'] * 1e3:7.2f} ms,"
            f" full pass per flush {t['full'] * 1e3:8.2f} ms"
            f" ({t['full'] / t['incremental']:5.1f}x)"
        )


if __name__ == "__main__":
    main()
