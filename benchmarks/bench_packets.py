"""Folding a streamed answer: incremental `PacketStream` vs a full pass per flush.

Seed 001's mobile client re-processes every packet on every flush ("cheap at chat scale");
the server folds each stream once, incrementally. This measures both side by side on the
same packets and prints the ratio. Run: `.venv/bin/python benchmarks/bench_packets.py`.
"""

from __future__ import annotations

import time
from typing import Any

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


def main() -> None:
    for deltas, flush in ((500, 5), (2000, 10), (5000, 20)):
        packets = answer_packets(deltas)
        fast = min(incremental(packets, flush) for _ in range(3))
        slow = min(full_pass(packets, flush) for _ in range(3))
        print(
            f"{len(packets):>6} packets, flush every {flush:>2}: incremental {fast * 1e3:8.2f} ms"
            f"  full pass per flush {slow * 1e3:9.2f} ms  ratio {slow / fast:6.1f}x"
        )


if __name__ == "__main__":
    main()
