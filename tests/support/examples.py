"""How many examples a property with its own count gets under the loaded Hypothesis profile."""

from __future__ import annotations

from hypothesis import settings

# The profile's examples at which a property runs its whole count (Hypothesis's default, 100,
# which the `ci` profile keeps).
FULL_PROFILE_EXAMPLES = 100


def examples(full: int) -> int:
    """Return `full` under the `ci` profile, and as large a share of it as the loaded profile
    gives every property otherwise (a fifth under `dev`): a property worth more examples than
    the rest keeps its weight, and a developer's run stays quick."""
    loaded = settings.default.max_examples
    return max(loaded, full * loaded // FULL_PROFILE_EXAMPLES)
