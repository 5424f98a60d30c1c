"""What a turn's checkpoint keeps beyond its messages, and how a resumed turn reads it back.

A turn saves a checkpoint after every tool round (`runner.py`): the messages sent so far,
the round, the citation registry's targets, the answer so far, and what the messages'
`search_result` blocks do not say of each citable (its link, kind, date, file). A turn taken
over from its checkpoint reads these back here, so that its sources keep their meaning
(docs/specs.md, T12: one meaning per source per turn).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..citations.citable import Citable
from ..citations.registry import CitationRegistry


def citables_to_checkpoint(citables: Iterable[Citable]) -> list[dict[str, Any]]:
    """Return the citables as a checkpoint keeps them: everything but their targets."""
    return [
        {
            "tool": c.tool,
            "source": c.source,
            "title": c.title,
            "texts": list(c.texts),
            "source_type": c.source_type,
            "link": c.link,
            "updated_at": c.updated_at,
            "is_internet": c.is_internet,
            "file_id": c.file_id,
        }
        for c in citables
    ]


def citables_from_checkpoint(checkpoint: Mapping[str, Any]) -> dict[str, Citable]:
    """Return a checkpoint's citables by source (their targets are the registry's)."""
    citables: dict[str, Citable] = {}
    for raw in checkpoint.get("citables", []):
        citable = Citable(**{**raw, "texts": tuple(raw["texts"]), "target": None})
        citables[citable.source] = citable
    return citables


def registry_from_checkpoint(
    checkpoint: Mapping[str, Any], messages: list[dict[str, Any]]
) -> CitationRegistry:
    """Return the turn's citation registry as the checkpoint left it.

    A checkpoint from before targets has none: its sources stream untyped, and stay so when
    written again, since a citation cannot say which write it came from.
    """
    registry = CitationRegistry.from_checkpoint(checkpoint)
    for source in _written_sources(messages):
        if source not in registry:
            registry.record(source, None)
    return registry


def _written_sources(messages: list[dict[str, Any]]) -> list[str]:
    sources = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            inner = block.get("content") if block.get("type") == "tool_result" else [block]
            for item in inner if isinstance(inner, list) else []:
                if isinstance(item, dict) and item.get("type") == "search_result":
                    sources.append(str(item.get("source")))
    return sources
