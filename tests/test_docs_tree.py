"""The docs point only at what exists: paths, symbols, rules and the headings code links to.

Every backticked repository path in docs/ must exist, and every `path::symbol` must name a
top-level function, class or constant of that module (a test by its name, a parametrized
one by its base name). The architecture table has a row for every rule docs/specs.md
defines, so a newcomer finds each rule's code and test in one step.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SPECS = DOCS / "specs.md"
ARCHITECTURE = DOCS / "architecture.md"

# Top-level folders whose paths the docs may name, and the files beside them.
PATH_ROOTS = ("webapp/", "tests/", "templates/", "static/", "benchmarks/", "docs/")
ROOT_FILES = frozenset(
    {
        "README.md",
        "CHANGELOG.md",
        "Procfile",
        "dev.py",
        "gunicorn.conf.py",
        "pyproject.toml",
        ".pre-commit-config.yaml",
    }
)

_SPAN = re.compile(r"`([^`\n]+)`")
# A path, then optionally `::Name`, `::Class.attribute` or `::test_name[id]`.
_REFERENCE = re.compile(r"(?P<path>[\w./-]+)(?:::(?P<symbol>[\w.]+)(?:\[[^\]]*\])?)?")
_RULE_DEFINED = re.compile(r"^\s*[-*]\s+\*\*(?P<rule>[A-Z]\d+)\*\*", re.MULTILINE)
_TABLE_ROW = re.compile(r"^\|\s*(?P<rule>[A-Z]\d+)\s*\|", re.MULTILINE)
_DOC_LINK = re.compile(r"docs/(?P<file>[\w/.-]+\.md)(?:#(?P<anchor>[\w-]+))?")
_SPEC_RULE = re.compile(r"\b(?P<rule>[TPJ]\d{1,2})\b")


def doc_files() -> list[Path]:
    """Return every page of docs/: the top level and the decisions."""
    return sorted(DOCS.glob("*.md")) + sorted((DOCS / "decisions").glob("*.md"))


def references(text: str) -> list[tuple[str, str | None]]:
    """Return each backticked `(path, symbol)` in `text` that names a repository file."""
    found: list[tuple[str, str | None]] = []
    for span in _SPAN.findall(text):
        match = _REFERENCE.fullmatch(span.strip())
        if match is None:
            continue
        path = match["path"]
        if path.startswith(PATH_ROOTS) or path in ROOT_FILES:
            found.append((path, match["symbol"]))
    return found


@cache
def top_level_names(path: Path) -> dict[str, ast.AST]:
    """Return the functions, classes and assigned names at the top of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
    return names


def _class_members(node: ast.ClassDef) -> set[str]:
    members: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            members.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members.add(item.target.id)
        elif isinstance(item, ast.Assign):
            members.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return members


def problem(path: str, symbol: str | None) -> str | None:
    """Return what is wrong with a reference, or None when it names something real."""
    file = ROOT / path
    if not file.exists():
        return f"{path}: no such file or folder"
    if symbol is None:
        return None
    if file.suffix != ".py" or not file.is_file():
        return f"{path}::{symbol}: only a Python module has symbols"
    head, _, member = symbol.partition(".")
    node = top_level_names(file).get(head)
    if node is None:
        return f"{path}::{symbol}: no top-level {head} in that module"
    is_member = isinstance(node, ast.ClassDef) and member in _class_members(node)
    if member and not is_member:
        return f"{path}::{symbol}: {head} has no {member}"
    return None


def problems_in(text: str) -> list[str]:
    """Return a line for each reference in `text` that names nothing real."""
    return [p for path, symbol in references(text) if (p := problem(path, symbol)) is not None]


def slug(heading: str) -> str:
    """Return the anchor GitHub gives a markdown heading."""
    words = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return words.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Return the anchors of every heading on a docs page."""
    text = page.read_text(encoding="utf-8")
    return {slug(m[1]) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE)}


def rules_defined() -> list[str]:
    """Return the rule numbers docs/specs.md defines, in order."""
    return _RULE_DEFINED.findall(SPECS.read_text(encoding="utf-8"))


def table_rows() -> dict[str, str]:
    """Return the architecture table's rows by rule number."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    return {m["rule"]: line for m in _TABLE_ROW.finditer(text) for line in [_line_at(text, m)]}


def _line_at(text: str, match: re.Match[str]) -> str:
    end = text.find("\n", match.start())
    return text[match.start() : end if end != -1 else len(text)]


def test_the_docs_exist() -> None:
    names = {p.relative_to(DOCS).as_posix() for p in doc_files()}
    assert {"README.md", "architecture.md", "specs.md"} <= names
    assert any(name.startswith("decisions/0001-") for name in names)


@pytest.mark.parametrize("page", doc_files(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_path_and_symbol_a_page_names_exists(page: Path) -> None:
    assert problems_in(page.read_text(encoding="utf-8")) == []


def test_the_check_would_notice_a_wrong_path_or_symbol() -> None:
    text = (
        "`webapp/citations/targets.py::target_to_json` `webapp/nowhere.py` "
        "`webapp/citations/targets.py::no_such_name` `tests/test_docs_tree.py::test_the_docs_exist[x]` "
        "`webapp/citations/targets.py::AccountTarget.ref` `webapp/citations/targets.py::AccountTarget.nope`"
    )
    assert problems_in(text) == [
        "webapp/nowhere.py: no such file or folder",
        "webapp/citations/targets.py::no_such_name: no top-level no_such_name in that module",
        "webapp/citations/targets.py::AccountTarget.nope: AccountTarget has no nope",
    ]


def test_every_rule_has_a_row_in_the_architecture_table() -> None:
    defined = rules_defined()
    assert defined, "docs/specs.md defines no rules"
    assert len(defined) == len(set(defined)), "a rule number is defined twice"
    rows = table_rows()
    assert [rule for rule in defined if rule not in rows] == []
    assert [rule for rule in rows if rule not in defined] == []


@pytest.mark.parametrize("rule", rules_defined())
def test_each_row_names_the_code_and_the_test(rule: str) -> None:
    row = table_rows()[rule]
    named = references(row)
    assert any(path.startswith("webapp/") and symbol for path, symbol in named), row
    assert any(path.startswith("tests/") and symbol for path, symbol in named), row


def test_the_index_links_every_page() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    pages = [p.relative_to(DOCS).as_posix() for p in doc_files() if p.name != "README.md"]
    assert [page for page in pages if f"({page})" not in index] == []


def code_links() -> list[tuple[str, str]]:
    """Return each `docs/...md#anchor` (or rule) that webapp's docstrings and comments name."""
    found: list[tuple[str, str]] = []
    for module in sorted((ROOT / "webapp").rglob("*.py")):
        for number, line in enumerate(module.read_text(encoding="utf-8").splitlines(), 1):
            for link in _DOC_LINK.finditer(line):
                where = f"{module.relative_to(ROOT).as_posix()}:{number}"
                found.append((where, link[0]))
                if link["file"] == "specs.md":
                    found += [(where, f"rule {r}") for r in _SPEC_RULE.findall(line)]
    return found


def test_links_from_the_code_into_the_docs_land_somewhere() -> None:
    defined = set(rules_defined())
    broken = []
    for where, link in code_links():
        if link.startswith("rule "):
            if link.removeprefix("rule ") not in defined:
                broken.append(f"{where}: {link}")
            continue
        page, _, anchor = link.removeprefix("docs/").partition("#")
        file = DOCS / page
        if not file.exists() or (anchor and anchor not in anchors(file)):
            broken.append(f"{where}: {link}")
    assert broken == []


# A project document is named in capitals (README.md); test data files are not.
_MARKDOWN_NAME = re.compile(r"\b[A-Z][A-Z_-]+\.md\b")


def markdown_names_missing() -> list[str]:
    """Return each `NAME.md` the code, the tests or the docs name that no file here is called."""
    present = {path.name for path in ROOT.rglob("*.md") if ".venv" not in path.parts}
    texts = [
        *ROOT.glob("webapp/**/*.py"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("tests/**/*.toml"),
    ]
    texts += [*DOCS.rglob("*.md"), ROOT / "README.md"]
    return sorted(
        f"{text.relative_to(ROOT).as_posix()}: {name}"
        for text in texts
        for name in set(_MARKDOWN_NAME.findall(text.read_text(encoding="utf-8")))
        if name not in present and text.name != "test_docs_tree.py"
    )


def test_no_page_names_a_markdown_file_the_repository_lacks() -> None:
    # A design card outside the repository is no reference for a newcomer: point into docs/.
    assert markdown_names_missing() == []


def test_no_two_test_files_share_a_name() -> None:
    # pytest imports test files by their base name (no packages under tests/): two of one
    # name, in different folders, stop the whole run with "import file mismatch".
    seen: dict[str, list[str]] = {}
    for path in (ROOT / "tests").rglob("test_*.py"):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
