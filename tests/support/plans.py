"""The plan a database makes for a query, as text: a test reads which indexes it uses."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine


def query_plan(engine: Engine, query: sa.Select[Any]) -> str:
    """Return `engine`'s plan for `query` (PostgreSQL told to avoid sequential scans, so a
    small test table still shows the index a large one would use)."""
    compiled = query.compile(engine, compile_kwargs={"literal_binds": True})
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("SET LOCAL enable_seqscan = off"))
            rows = conn.execute(sa.text(f"EXPLAIN {compiled}")).scalars().all()
        else:
            rows = [r[-1] for r in conn.execute(sa.text(f"EXPLAIN QUERY PLAN {compiled}"))]
    return "\n".join(str(r) for r in rows)
