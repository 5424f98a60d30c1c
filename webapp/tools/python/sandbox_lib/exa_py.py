"""`from exa_py import Exa` works in the sandbox too."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .exa import Exa, ExaError
else:  # in the sandbox this folder is on sys.path, so the module is top-level
    from exa import Exa, ExaError

__all__ = ["Exa", "ExaError"]
