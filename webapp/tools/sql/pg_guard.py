"""Check the model's SQL with PostgreSQL's own parser (pglast) before it reaches the server.

The server-side roles and row-level security are the real wall; this check stops what a
read-only role could still do: call `set_config` (to change role or user), run dynamic SQL
(`query_to_xml`), read catalogs or any table but the views, or send several statements.
"""

from __future__ import annotations

from collections.abc import Iterator

from pglast import ast, parse_sql
from pglast.parser import ParseError

from webapp.store.schema import QUERY_VIEWS

from .allowed import POSTGRES_FUNCTIONS
from .result import VIEWS_HINT, QueryRejected

_SCHEMAS = (None, "public")


def _children(node: ast.Node) -> Iterator[object]:
    for name in getattr(type(node), "__slots__", ()):
        value = getattr(node, name, None)
        if isinstance(value, ast.Node | tuple | list):
            yield value


def _visible_ctes(
    clause: ast.WithClause, outer: frozenset[str]
) -> Iterator[tuple[object, frozenset[str]]]:
    """Yield each CTE body with the names it can see; the last item is for the main query."""
    names = [cte.ctename for cte in clause.ctes or ()]
    for index, cte in enumerate(clause.ctes or ()):
        # A plain WITH sees only the CTEs before it; WITH RECURSIVE sees all of them.
        visible = names if clause.recursive else names[:index]
        yield cte.ctequery, outer | frozenset(visible)
    yield None, outer | frozenset(names)


def _check_relation(node: ast.RangeVar, ctes: frozenset[str]) -> None:
    name = node.relname or ""
    if node.catalogname is None and node.schemaname is None and name in ctes:
        return
    in_views_schema = node.catalogname is None and node.schemaname in _SCHEMAS
    if in_views_schema and name in QUERY_VIEWS:
        return
    if in_views_schema and name.lower() in QUERY_VIEWS:
        # Only a quoted name keeps its capitals here, and PostgreSQL reads it case by case.
        raise QueryRejected(
            f'"{name}" cannot be queried here; write the view\'s name as '
            f"{name.lower()}, without quotes."
        )
    raise QueryRejected(f'"{name}" cannot be queried here; {VIEWS_HINT}.')


def _check_function(node: ast.FuncCall) -> None:
    parts = [getattr(part, "sval", "") for part in node.funcname or ()]
    name, schema = parts[-1], parts[:-1]
    if schema in ([], ["pg_catalog"]) and name in POSTGRES_FUNCTIONS:
        return
    raise QueryRejected(f'the function "{".".join(parts)}" is not available in these queries.')


def _walk(node: object, ctes: frozenset[str]) -> None:
    if isinstance(node, tuple | list):
        for item in node:
            _walk(item, ctes)
        return
    if not isinstance(node, ast.Node):
        return
    if isinstance(node, ast.SelectStmt):
        if node.intoClause is not None:
            raise QueryRejected("SELECT INTO writes a table; only reading is allowed.")
        if node.lockingClause:
            raise QueryRejected("row locks (FOR UPDATE / FOR SHARE) are not allowed.")
        if node.withClause is not None:
            for body, visible in _visible_ctes(node.withClause, ctes):
                if body is None:
                    ctes = visible
                else:
                    _walk(body, visible)
    elif type(node).__name__.endswith("Stmt"):
        raise QueryRejected("only SELECT statements can run; nothing can be changed.")
    elif isinstance(node, ast.RangeVar):
        _check_relation(node, ctes)
    elif isinstance(node, ast.FuncCall):
        _check_function(node)
    for child in _children(node):
        if not isinstance(node, ast.SelectStmt) or child is not node.withClause:
            _walk(child, ctes)


def check_postgres_query(query: str) -> str:
    """Return the one SELECT in `query` (without a closing `;`), over the views and allowed
    functions; raise `QueryRejected` for anything else."""
    try:
        statements = parse_sql(query)
    except ParseError as exc:
        raise QueryRejected(f"syntax error: {exc}") from None
    if len(statements) != 1:
        raise QueryRejected("send exactly one SQL statement (no `;` between statements).")
    raw = statements[0]
    statement = raw.stmt
    if not isinstance(statement, ast.SelectStmt):
        raise QueryRejected("only SELECT statements can run; nothing can be changed.")
    _walk(statement, frozenset())
    # pglast gives the statement's place in characters; a length of 0 means "to the end".
    start = raw.stmt_location or 0
    return query[start : start + raw.stmt_len] if raw.stmt_len else query[start:]
