"""A query's rows as the offline engine is handed them: one `execute_sql` tool result."""

from __future__ import annotations

from webapp.llm.offline.cite import Result


def row_result(index: int, source: str, *rows: dict[str, object]) -> Result:
    """One SQL result of rows, as the query service returns it."""
    texts = ["\n".join(f"{k}: {v}" for k, v in row.items()) for row in rows]
    block = {
        "type": "search_result",
        "source": source,
        "title": source,
        "content": [{"type": "text", "text": t} for t in texts],
    }
    return Result("execute_sql", index, block)
