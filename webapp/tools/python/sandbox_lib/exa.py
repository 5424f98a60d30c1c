"""Article search in Exa's shape: `search_and_contents(query, num_results=5)`.

    import exa
    exa.search_and_contents("index funds", num_results=3)["results"][0]["text"]

Results are dicts that also read as attributes (`.results[0].url`), as exa_py's objects do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import _sandbox_rpc as rpc
else:  # in the sandbox this folder is on sys.path, so the module is top-level
    import _sandbox_rpc as rpc


class ExaError(rpc.DataError):
    """A search that was refused or could not be served."""


__all__ = ["Exa", "ExaError", "search_and_contents"]


def search_and_contents(query: str, num_results: int = 5, **_options: Any) -> rpc.AttrDict:
    """Search articles and return {"results": [{"id", "url", "title", "publishedDate", ...}]}."""
    data = rpc.call({"op": "exa", "query": query, "num_results": num_results}, ExaError)
    results = [rpc.AttrDict(item) for item in data.get("results", [])]
    return rpc.AttrDict(results=results)


class Exa:
    """exa_py's client surface over the same search; the api_key is ignored here."""

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key

    def search_and_contents(self, query: str, num_results: int = 5, **options: Any) -> rpc.AttrDict:
        return search_and_contents(query, num_results, **options)
