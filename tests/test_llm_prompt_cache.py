"""Prompt caching on the real HTTP path: later rounds read what earlier ones sent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.support.fake_claude import FakeClaude, text_reply, tool_reply
from tests.support.turns import CannedTools, MemorySink
from webapp.llm.claude import ClaudeModel
from webapp.turn.runner import run_turn, start_checkpoint

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_prompt_cache.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_prompt_cache", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_tool_round_reads_the_rounds_before_it_from_the_cache() -> None:
    row: dict[str, object] = {"source": "plaid", "source_account_id": "A" * 20, "account_name": "C"}
    tools = CannedTools({"q1": [row] * 60, "q2": [row] * 60})
    replies = [
        tool_reply(("tu_1", "execute_sql", {"query": "q1"})),
        tool_reply(("tu_2", "execute_sql", {"query": "q2"})),
        text_reply(("Done.", [])),
    ]
    with FakeClaude(replies) as fake:
        engine = ClaudeModel("sk-test", base_url=fake.url)
        result = run_turn(engine, tools, MemorySink(), start_checkpoint([], "What do I have?"))
    assert result.status == "complete"
    # Each round reads back everything the round before it sent and cached (the system
    # prompt, the tools, the question and the earlier tool rounds): only the newest part is
    # written, or sent plain where it is under the least the API caches (1,024 tokens).
    for before, after in zip(fake.usages, fake.usages[1:], strict=False):
        cached = before["cache_read_input_tokens"] + before["cache_creation_input_tokens"]
        assert after["cache_read_input_tokens"] >= cached
    assert fake.usages[-1]["cache_read_input_tokens"] > 0
    marked = [b for b in fake.requests[2]["messages"][-1]["content"] if "cache_control" in b]
    assert len(marked) == 1  # the newest tool result carries the breakpoint


def test_the_benchmark_bills_less_with_caching_at_a_small_size() -> None:
    bills = _bench().run(2)
    for with_cache, without in zip(bills[True], bills[False], strict=True):
        assert with_cache.read > 0 and with_cache.billed < without.billed
    assert all(b.read == 0 and b.written == 0 for b in bills[False])
