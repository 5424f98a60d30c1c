"""One meaning per source per turn (docs/specs.md, T11-T12): pool accounts, poison any clash."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .parse import parse_citation_target
from .targets import CitationTarget, account_refs, target_for_accounts, target_to_json

CHECKPOINT_FIELD = "citationTargets"


def _merge(old: CitationTarget | None, new: CitationTarget | None) -> CitationTarget | None:
    """Return what a source means after it is written again; None once the writes disagree."""
    if old == new:
        return old
    old_refs, new_refs = account_refs(old), account_refs(new)
    if old_refs and new_refs:
        return target_for_accounts(old_refs + new_refs)
    return None


class CitationRegistry:
    """The targets of one turn's sources, as the turn writes them.

    A citation echoes only a source and a title back, so a source must mean one thing for
    the whole turn. A source recorded untyped, or whose records ever disagreed (other than
    by naming more accounts), stays untyped: once None, only None agrees with it.
    """

    def __init__(self) -> None:
        self._targets: dict[str, CitationTarget | None] = {}

    def record(self, source: str, target: CitationTarget | None) -> CitationTarget | None:
        """Record that the turn wrote `source` meaning `target`; return what it now means."""
        merged = _merge(self._targets[source], target) if source in self._targets else target
        self._targets[source] = merged
        return merged

    def target(self, source: str) -> CitationTarget | None:
        """Return the target of `source`, or None when it is unknown or untyped."""
        return self._targets.get(source)

    def __contains__(self, source: object) -> bool:
        return source in self._targets

    def __len__(self) -> int:
        return len(self._targets)

    def to_checkpoint(self) -> dict[str, Any]:
        """Return the value the slice checkpoint keeps under `citationTargets`."""
        return {
            source: None if target is None else target_to_json(target)
            for source, target in self._targets.items()
        }

    @classmethod
    def from_checkpoint(cls, checkpoint: object) -> CitationRegistry:
        """Rebuild from a checkpoint; empty when it predates targets or its field is malformed."""
        registry = cls()
        field = checkpoint.get(CHECKPOINT_FIELD) if isinstance(checkpoint, Mapping) else None
        if not isinstance(field, Mapping):
            return registry
        for source, value in field.items():
            if isinstance(source, str):
                # An entry that no longer parses is known to be written, with no safe meaning.
                registry._targets[source] = parse_citation_target(value)
        return registry
