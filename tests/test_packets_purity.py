"""The pure cores (citations, packets, SSE framing) load no web framework, database or network
code: every one of their modules is imported in a fresh interpreter and what it loaded is read."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

FORBIDDEN = ("flask", "jinja2", "sqlalchemy", "sqlite3", "_sqlite3", "requests", "httpx", "socket")

WEBAPP = Path(__file__).resolve().parent.parent / "webapp"


def core_modules() -> list[str]:
    """Every module of the pure cores: both packages' modules, and the SSE module."""
    found = ["webapp.sse", "webapp.text", "webapp.money", "webapp.tool_registry"]
    for package in ("citations", "packets"):
        names = pkgutil.iter_modules([str(WEBAPP / package)])
        found += [f"webapp.{package}"] + [f"webapp.{package}.{m.name}" for m in names]
    return found


CORE = tuple(core_modules())

# A fresh interpreter, so that nothing another test imported counts.
PROBE = """
import json, sys
import webapp.packets
print(json.dumps(sorted(sys.modules)))
"""


@cache
def loaded_modules(*imports: str) -> frozenset[str]:
    code = PROBE.replace("import webapp.packets", "\n".join(f"import {m}" for m in imports))
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return frozenset(json.loads(result.stdout))


@pytest.mark.parametrize("module", FORBIDDEN)
def test_packets_import_nothing_impure(module: str) -> None:
    loaded = loaded_modules(*CORE)
    assert set(CORE) <= loaded
    assert not {name for name in loaded if name == module or name.startswith(module + ".")}


def test_probe_would_notice_an_impure_import() -> None:
    # The probe is able to fail: importing sqlite3 alongside shows up in its answer.
    assert "sqlite3" in loaded_modules(*CORE, "sqlite3")


def test_the_cores_are_all_probed() -> None:
    # A module added to a core is probed without editing this file.
    assert {"webapp.packets.state", "webapp.citations.targets", "webapp.sse"} <= set(CORE)
    assert len(CORE) > 15
