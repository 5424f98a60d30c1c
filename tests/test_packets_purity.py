"""The packets core is pure: importing it loads no web framework, database or network code."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache

import pytest

FORBIDDEN = ("flask", "jinja2", "sqlalchemy", "sqlite3", "_sqlite3", "requests", "httpx", "socket")

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
    loaded = loaded_modules("webapp.packets")
    assert "webapp.packets" in loaded
    assert not {name for name in loaded if name == module or name.startswith(module + ".")}


def test_probe_would_notice_an_impure_import() -> None:
    # The probe is able to fail: importing sqlite3 alongside shows up in its answer.
    assert "sqlite3" in loaded_modules("webapp.packets", "sqlite3")
