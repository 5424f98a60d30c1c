"""What one `execute_python` run returns, and the error raised for input it refuses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

FinnhubEndpoint: TypeAlias = Literal["quote", "stock/profile2", "stock/candle"]


class SandboxError(ValueError):
    """Input `run_python` refuses (not code, too long, a bad limit); safe to show the model."""


@dataclass(frozen=True, slots=True)
class FinnhubCall:
    """One market-data call the code made, with the payload it was given."""

    endpoint: FinnhubEndpoint
    ticker: str | None
    payload: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Article:
    """One article the code's search returned."""

    url: str
    title: str
    text: str
    published_date: str | None


@dataclass(frozen=True, slots=True)
class PythonResult:
    """The outcome of one sandboxed run: output, a clear error if it failed, and data it read."""

    stdout: str
    stderr: str
    error: str | None
    truncated: bool
    finnhub: tuple[FinnhubCall, ...] = ()
    articles: tuple[Article, ...] = ()

    @property
    def ok(self) -> bool:
        """Tell whether the code ran to the end without an error."""
        return self.error is None
