"""A personal-finance chat service whose every citation says what it points at.

The factory lives in `webapp.app` and is imported lazily, so that the pure cores
(`webapp.citations`, `webapp.packets`) import no web framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

__all__ = ["create_app"]


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the application (see `webapp.app.create_app`)."""
    from .app import create_app as build

    return build(test_config)
