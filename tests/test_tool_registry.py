"""One spec per tool: the runner, the model's tool list, the citation core, the packets and the
status line all read the registry, and no other module spells a tool's name."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from tests.support.turns import MemorySink
from webapp import tool_registry
from webapp.citations.citable import CITABLE_FROM
from webapp.citations.sources import READER_CORPORA
from webapp.tool_registry import BY_NAME, READERS, TOOLS, Content, ToolName, ToolSpec
from webapp.tools.readers import READER_TOOLS
from webapp.tools.runner import LocalTools
from webapp.turn.emit import Emitter
from webapp.turn.prompt import TOOLS as MODEL_TOOLS

ROOT = Path(__file__).resolve().parent.parent
NAMES = frozenset(get_args(ToolName))


def test_each_name_has_one_spec_and_the_model_is_told_of_each() -> None:
    assert [spec.name for spec in TOOLS] == list(get_args(ToolName))
    assert set(BY_NAME) == NAMES
    assert [spec.for_model() for spec in TOOLS] == MODEL_TOOLS
    for tool in MODEL_TOOLS:
        assert set(tool) == {"name", "description", "input_schema"}
        schema = tool["input_schema"]
        assert schema["type"] == "object"
        assert set(schema["required"]) <= set(schema["properties"])


def test_the_runner_has_an_executor_for_each_tool_and_no_other() -> None:
    # handlers() reads only bound methods, so a bare instance will do.
    tools = LocalTools.__new__(LocalTools)
    assert set(tools.handlers()) == NAMES


def test_each_kind_of_result_has_its_way_into_citable_content() -> None:
    assert set(CITABLE_FROM) == set(get_args(Content))
    assert {spec.content for spec in TOOLS} <= set(CITABLE_FROM)


def test_the_readers_and_their_corpora_come_from_the_specs() -> None:
    assert set(READER_TOOLS) == set(READER_CORPORA) == set(READERS)
    for reader in READERS:
        assert READER_TOOLS[reader] == BY_NAME[reader].corpus
        assert READER_CORPORA[reader][0] == f"silvia://{BY_NAME[reader].corpus}/"


@pytest.mark.parametrize("spec", TOOLS, ids=[spec.name for spec in TOOLS])
def test_the_packets_say_whether_a_tool_searches_the_internet(spec: ToolSpec) -> None:
    sink = MemorySink()
    Emitter(sink).tool_section(0, 0, spec.name, [])
    start = sink.packets()[0]["obj"]
    assert start["type"] == "search_tool_start"
    assert start["tool_name"] == spec.name
    assert start["is_internet_search"] is spec.searches_internet


def tool_name_literals() -> list[str]:
    """Return each string literal outside the registry that is exactly a tool's name."""
    registry = Path(tool_registry.__file__).resolve()
    found = []
    for module in sorted((ROOT / "webapp").rglob("*.py")):
        if module.resolve() == registry or "migrations" in module.parts:
            continue
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in NAMES
            ):
                found.append(f"{module.relative_to(ROOT)}:{node.lineno}: {node.value}")
    return found


def test_no_module_but_the_registry_spells_a_tools_name() -> None:
    assert tool_name_literals() == []
