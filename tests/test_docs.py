"""The README's Configuration table and `webapp.settings` list the same settings, and only
`webapp/settings.py` reads the environment (so the table in it is the whole story)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from webapp.settings import BY_NAME, SETTINGS, Setting

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# Files that may read the environment: the table itself, and what runs outside the app's
# process or before it (gunicorn's settings, the developer script, the sandbox's own library).
MAY_READ_ENVIRONMENT = {"webapp/settings.py"}
OUTSIDE_THE_APP = ("webapp/tools/python/sandbox_lib/",)


def configuration_rows(readme: str) -> dict[str, tuple[str, str]]:
    """Return the README Configuration table's rows: variable -> (default, meaning)."""
    section = readme.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not re.fullmatch(r"`[A-Z][A-Z0-9_]*`", cells[0]):
            continue
        rows[cells[0].strip("`")] = (cells[1], " | ".join(cells[2:]))
    return rows


ROWS = configuration_rows(README)


def environment_reads(source: str) -> list[int]:
    """Return the lines of `source` that read the environment (`os.environ`, `os.getenv`)."""
    names = {"environ", "environb", "getenv"}
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            reads = (
                node.attr in names and isinstance(node.value, ast.Name) and node.value.id == "os"
            )
        elif isinstance(node, ast.ImportFrom):
            reads = node.module == "os" and any(alias.name in names for alias in node.names)
        else:
            reads = False
        if reads and isinstance(node, ast.expr | ast.stmt):
            found.append(node.lineno)
    return sorted(found)


def test_the_table_is_read() -> None:
    # Able to fail: the parser finds rows of each kind of default.
    assert ROWS["TURN_LEASE_SECONDS"][0] == "`30`"
    assert ROWS["ANTHROPIC_API_KEY"][0].startswith("unset")
    assert len(ROWS) >= 20


@pytest.mark.parametrize("name", [s.name for s in SETTINGS])
def test_every_setting_is_in_the_readme(name: str) -> None:
    assert name in ROWS, f"{name} is in webapp/settings.py but not in README's Configuration"


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_readme_row_is_a_setting(name: str) -> None:
    assert name in BY_NAME, f"README's Configuration lists {name}, which webapp/settings.py lacks"


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.name for s in SETTINGS])
def test_the_readme_gives_each_default(setting: Setting) -> None:
    default = ROWS[setting.name][0]
    if setting.default is None:
        assert default.startswith("unset"), f"{setting.name} has no default: say 'unset: ...'"
    else:
        assert default == f"`{setting.shown_default}`", setting.name


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("import os\nx = os.environ['A']\n", [2]),
        ("import os\nx = os.getenv('A')\n", [2]),
        ("from os import environ\n", [1]),
        ("from os import getenv as g\n", [1]),
        ("environ = {}\nx = environ.get('A')\n", []),
        ("import os\nx = os.path.join('a')\n", []),
    ],
    ids=["environ", "getenv", "import-environ", "import-getenv", "a-local-name", "other"],
)
def test_the_scan_finds_environment_reads(source: str, lines: list[int]) -> None:
    assert environment_reads(source) == lines


def test_only_the_settings_module_reads_the_environment() -> None:
    readers = []
    for path in sorted((ROOT / "webapp").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in MAY_READ_ENVIRONMENT or name.startswith(OUTSIDE_THE_APP):
            continue
        readers += [f"{name}:{line}" for line in environment_reads(path.read_text())]
    assert readers == [], "read settings through webapp.settings (app.config) instead"
    # The table's own reads are found, so the scan would see any other.
    assert environment_reads((ROOT / "webapp/settings.py").read_text())
