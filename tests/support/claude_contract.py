"""What the real Claude API accepts and sends, checked with the `anthropic` SDK's own parts.

The fake Claude server (`fake_claude.py`) runs every request it receives through
`request_problems` and every stream it sends through `read_back`, so a test passes only when
the product sends what the API would take and reads what the API would send:

- requests: the SDK's typed request (`MessageCreateParamsStreaming`, a TypedDict tree) walked
  strictly: unknown fields, missing required ones, wrong types and literals are problems, as
  the API answers them with 400 `invalid_request_error`; plus the API's rules the types cannot
  say (the conversation ends with the user's turn on current models; at most four cache
  breakpoints; each tool call answered first in the next user turn);
- streams: each event validated as the SDK's `RawMessageStreamEvent` and folded by the SDK's
  own `accumulate_event`, which gives the message the SDK's users would see;
- models: one past its date in the SDK's deprecated-models table is refused, as the API
  refuses retired models (404 `not_found_error`).
"""

from __future__ import annotations

import collections.abc
import datetime as dt
import re
import types
import typing
from typing import Any

import typing_extensions as te
from anthropic._constants import ANTHROPIC_API_VERSION
from anthropic._data import DEPRECATED_MODELS
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from pydantic import TypeAdapter, ValidationError

_EVENT = TypeAdapter(RawMessageStreamEvent)
# The events the SDK types; it skips others (`ping`, `error` are its decoder's, and the
# API may add new types: "ignore unknown ones").
_TYPED = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
    }
)
MAX_CACHE_BREAKPOINTS = 4
# The SDK's own version, and the one before it that the API still serves (the versions page).
API_VERSIONS = frozenset({ANTHROPIC_API_VERSION, "2023-06-01"})


def retirement(model: str) -> dt.date | None:
    """Return the day `model` retires by the SDK's deprecated-models table, or None."""
    said = DEPRECATED_MODELS.get(model)
    if said is None:
        return None
    return dt.datetime.strptime(re.sub(r"(\d+)(st|nd|rd|th)", r"\1", said), "%B %d, %Y").date()


def is_retired(model: str, today: dt.date | None = None) -> bool:
    """Whether requests for `model` fail today (the deprecations page: past the date)."""
    day = retirement(model)
    return day is not None and (today or dt.datetime.now(dt.UTC).date()) > day


def type_problems(value: Any, tp: Any, path: str = "$") -> list[str]:
    """Return where `value` (JSON) breaks the SDK type `tp`; an empty list when it fits."""
    origin, args = te.get_origin(tp), te.get_args(tp)
    if tp is Any or tp is object:
        return []
    if origin is te.Annotated or origin in (te.Required, te.NotRequired, te.ReadOnly):
        return type_problems(value, args[0], path)
    if isinstance(tp, te.TypeAliasType):
        return type_problems(value, tp.__value__, path)
    if origin in (typing.Union, types.UnionType):
        return _union_problems(value, args, path)
    if origin is te.Literal:
        return [] if value in args else [f"{path}: {value!r} is not one of {list(args)}"]
    if te.is_typeddict(tp):
        return _object_problems(value, tp, path)
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence):
        if not isinstance(value, list):
            return [f"{path}: expected a list"]
        item = args[0] if args else Any
        return [p for i, v in enumerate(value) for p in type_problems(v, item, f"{path}[{i}]")]
    if origin in (dict, collections.abc.Mapping):
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        item = args[1] if args else Any
        return [p for k, v in value.items() for p in type_problems(v, item, f"{path}.{k}")]
    return _scalar_problems(value, tp, path)


def _union_problems(value: Any, alternatives: tuple[Any, ...], path: str) -> list[str]:
    best: list[str] | None = None
    for alternative in alternatives:
        found = type_problems(value, alternative, path)
        if not found:
            return []
        if best is None or len(found) < len(best):
            best = found
    return best or [f"{path}: fits none of its types"]


def _object_problems(value: Any, tp: Any, path: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({tp.__name__})"]
    hints = te.get_type_hints(tp, include_extras=True)
    found = [f"{path}.{k}: not a field of {tp.__name__}" for k in value if k not in hints]
    found += [f"{path}.{k}: required" for k in sorted(tp.__required_keys__) if k not in value]
    for key, item in value.items():
        if key in hints:
            found += type_problems(item, hints[key], f"{path}.{key}")
    return found


def _scalar_problems(value: Any, tp: Any, path: str) -> list[str]:
    checks: dict[Any, Any] = {
        type(None): lambda v: v is None,
        bool: lambda v: isinstance(v, bool),
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        str: lambda v: isinstance(v, str),
    }
    check = checks.get(tp)
    if check is None:
        return [f"{path}: the checker does not know the type {tp!r}"]
    return [] if check(value) else [f"{path}: expected {getattr(tp, '__name__', tp)}"]


def request_problems(body: Any, headers: dict[str, str]) -> list[str]:
    """Return why the API would refuse this request; empty when it would take it."""
    found = []
    if not headers.get("x-api-key") and not headers.get("authorization", "").startswith("Bearer "):
        found.append("header x-api-key: missing")
    if headers.get("anthropic-version") not in API_VERSIONS:
        found.append(f"header anthropic-version: not one of {sorted(API_VERSIONS)}")
    streaming = isinstance(body, dict) and body.get("stream") is True
    params = MessageCreateParamsStreaming if streaming else MessageCreateParamsNonStreaming
    found += type_problems(body, params)
    if found or not isinstance(body, dict):
        return found
    messages = body["messages"]
    if not messages:
        found.append("$.messages: at least one message is required")
    elif messages[-1]["role"] != "user" and not _resumes_a_pause(messages[-1]):
        # "This model does not support assistant message prefill."
        found.append("$.messages: the conversation must end with a user message")
    found += _tool_result_problems(messages)
    if _has_empty_text(body):
        found.append("text content blocks must be non-empty")
    marks = _count_cache_marks(body)
    if marks > MAX_CACHE_BREAKPOINTS:
        found.append(f"cache_control: {marks} breakpoints, at most {MAX_CACHE_BREAKPOINTS}")
    return found


def _resumes_a_pause(message: dict[str, Any]) -> bool:
    """A turn a server tool paused goes back as it came (stop reason `pause_turn`)."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "server_tool_use" for b in content
    )


def _tool_result_problems(messages: list[dict[str, Any]]) -> list[str]:
    found = []
    for i, message in enumerate(messages[:-1]):
        content = message.get("content")
        if message["role"] != "assistant" or not isinstance(content, list):
            continue
        calls = [b["id"] for b in content if b.get("type") == "tool_use"]
        if not calls:
            continue
        reply = messages[i + 1].get("content")
        blocks = reply if isinstance(reply, list) else []
        answered = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        firsts = [b.get("type") for b in blocks[: len(calls)]]
        if sorted(answered) != sorted(calls) or firsts != ["tool_result"] * len(calls):
            found.append(f"$.messages[{i + 1}]: each tool_use must be answered first")
    return found


def _has_empty_text(value: Any) -> bool:
    if isinstance(value, dict):
        if value.get("type") == "text" and value.get("text") == "":
            return True
        return any(_has_empty_text(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_empty_text(v) for v in value)
    return False


def _count_cache_marks(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if "cache_control" in value else 0
        return own + sum(_count_cache_marks(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_count_cache_marks(v) for v in value)
    return 0


def read_back(events: list[dict[str, Any]]) -> Message | None:
    """Fold a stream as the SDK does; raise ValueError where the SDK would fail on it.

    Returns the SDK's message, or None when the stream ended before `message_start`.
    """
    snapshot: Message | None = None
    buffers: dict[int, bytes] = {}
    for event in events:
        kind = event.get("type")
        if kind not in _TYPED:
            continue
        try:
            typed = _EVENT.validate_python(event)
        except ValidationError as exc:
            raise ValueError(f"the SDK refuses the {kind} event: {exc}") from exc
        snapshot = accumulate_event(
            event=typed,
            current_snapshot=snapshot,  # type: ignore[arg-type]
            json_bufs=buffers,
        )
    return snapshot
