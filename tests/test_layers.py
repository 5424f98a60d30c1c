"""Every import between the app's rooms points down the layers docs/architecture.md draws.

A room is a package or a module directly under `webapp/`. Each module's imports are read
with `ast` (those inside functions too); an import of a room in the same layer or above is
an arrow running back up, and fails here with the line that makes it. And no module under
`webapp/` passes MAX_MODULE_LINES: a room that grows past it is split by what its parts do.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEBAPP = ROOT / "webapp"

# Top to bottom, as docs/architecture.md ("Layers") draws them; a room imports only rooms of
# the layers below its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("webapp",),  # the package: `webapp:create_app()` for gunicorn
    ("app",),  # the factory
    ("web", "cli"),  # the blueprints, the commands
    ("services",),  # what the app makes once
    ("chat",),  # background turns, leases, events, wake-ups
    ("turn",),  # one turn: rounds, the answer, packets and events
    ("llm",),  # the models: Claude, the offline engine
    ("tools", "favicons"),  # the tools' executors; fetching source icons
    ("store", "migrations"),  # the database; its revisions
    ("statements",),  # uploaded statement files, parsed
    ("packets",),  # pure: packets, the processed state, where a source opens
    ("citations",),  # pure: targets, sources, citable content
    ("tool_registry", "money", "text", "sse", "settings", "lazy"),  # pure leaves
)
LAYER_OF = {room: depth for depth, rooms in enumerate(LAYERS) for room in rooms}

MAX_MODULE_LINES = 400
# Modules allowed past the limit: none today (the chat service, the last, is under it since
# its sink, reader and worker upkeep became rooms of their own). A module listed here must
# pass the limit: one back under it leaves the list.
LONG_MODULES_ALLOWED: frozenset[str] = frozenset()


def room_of(module: str) -> str:
    """Return the room of a dotted module name under webapp (`webapp` for the package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _module_name(path: Path) -> tuple[str, list[str]]:
    """Return a file's dotted name and the package its relative imports start from."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), parts
    return ".".join(parts), parts[:-1]


def imported(source: str, package: list[str]) -> list[tuple[str, int]]:
    """Return each webapp module that `source` imports, with the line that imports it."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                if node.module is None:
                    found += [(".".join([*base, a.name]), node.lineno) for a in node.names]
                else:
                    found.append((".".join([*base, node.module]), node.lineno))
            elif node.module and node.module.split(".")[0] == "webapp":
                found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "webapp"]
    return found


def upward_arrows(modules: dict[str, str]) -> list[str]:
    """Return each import, among `modules` (path under the root: source), not pointing down."""
    wrong = []
    for where, source in sorted(modules.items()):
        name, package = _module_name(ROOT / where)
        mine = room_of(name)
        for target, line in imported(source, package):
            theirs = room_of(target)
            if theirs == mine:
                continue
            if LAYER_OF.get(theirs, -1) <= LAYER_OF.get(mine, -1):
                wrong.append(f"{where}:{line}: {mine} -> {theirs}")
    return wrong


def app_modules() -> dict[str, str]:
    return {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(WEBAPP.rglob("*.py"))
    }


def test_every_room_has_its_layer() -> None:
    rooms = {p.stem for p in WEBAPP.glob("*.py") if p.stem != "__init__"}
    rooms |= {p.name for p in WEBAPP.iterdir() if (p / "__init__.py").exists()}
    assert rooms | {"webapp"} == set(LAYER_OF)


def test_every_import_points_down() -> None:
    assert upward_arrows(app_modules()) == []


def test_the_check_would_notice_an_arrow_back_up() -> None:
    modules = {
        "webapp/store/x.py": "from ..services import services\n",
        "webapp/tools/y.py": "def f():\n    import webapp.turn.runner\n",
        "webapp/llm/z.py": "from ..tools import readers\n",
        "webapp/sse.py": "from . import text\n",  # a sibling in its own layer
    }
    assert upward_arrows(modules) == [
        "webapp/sse.py:1: sse -> text",
        "webapp/store/x.py:1: store -> services",
        "webapp/tools/y.py:2: tools -> turn",
    ]


def long_modules(modules: dict[str, str]) -> dict[str, int]:
    """Return each of `modules` (path under the root: source) past MAX_MODULE_LINES, by lines."""
    lengths = {where: len(source.splitlines()) for where, source in modules.items()}
    return {where: n for where, n in sorted(lengths.items()) if n > MAX_MODULE_LINES}


def test_no_module_passes_the_line_limit() -> None:
    long = long_modules(app_modules())
    assert {where: n for where, n in long.items() if where not in LONG_MODULES_ALLOWED} == {}
    # An allowed module split (or shrunk) below the limit is taken off the list.
    assert set(long) >= LONG_MODULES_ALLOWED


def test_the_line_limit_counts_lines() -> None:
    modules = {
        "webapp/a.py": "x = 1\n" * MAX_MODULE_LINES,
        "webapp/b.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
    }
    assert long_modules(modules) == {"webapp/b.py": MAX_MODULE_LINES + 1}
