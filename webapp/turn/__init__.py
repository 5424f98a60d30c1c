"""The turn: the model and the tools in rounds; citable content; targets on every channel."""

from __future__ import annotations

from .answer import AnswerBuilder, CitedSource
from .citable import (
    Citable,
    chunks,
    from_document,
    from_python,
    from_sql,
    from_web_results,
)
from .emit import SinkClosed, TurnSink
from .prompt import SYSTEM_PROMPT, TOOL_NAMES, TOOLS
from .runner import (
    MAX_ROUNDS,
    ToolOutcome,
    ToolRunner,
    TurnResult,
    failed_turn,
    run_turn,
    start_checkpoint,
)

__all__ = [
    "MAX_ROUNDS",
    "SYSTEM_PROMPT",
    "TOOLS",
    "TOOL_NAMES",
    "AnswerBuilder",
    "Citable",
    "CitedSource",
    "SinkClosed",
    "ToolOutcome",
    "ToolRunner",
    "TurnResult",
    "TurnSink",
    "chunks",
    "failed_turn",
    "from_document",
    "from_python",
    "from_sql",
    "from_web_results",
    "run_turn",
    "start_checkpoint",
]
