"""The portfolio's allocation chart: each holding's share of the market value, as SVG bars.

Shares are rounded by the largest-remainder method, so the shown percentages add up to
exactly 100 (https://en.wikipedia.org/wiki/Largest_remainder_method). Only holdings with a
positive market value are charted, one chart per currency (nothing is converted); the rest
are returned so the page can say what was left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from ..money import as_decimal, currency_code

__all__ = ["Allocation", "Bar", "allocations", "shares"]

# The SVG's own units (its viewBox): pages.css caps its width near 1:1 on a wide screen, and
# a phone's column scales it by about 5/6 at worst, so its 15-unit text stays readable.
WIDTH = 360
LABEL_WIDTH = 80
BAR_SPACE = 220  # the length of a 100 % bar; "100.0%" still fits after it
ROW = 32
BAR_HEIGHT = 20
_LABEL_CHARS = 8


def shares(values: Sequence[Decimal], places: int = 1) -> list[Decimal]:
    """Return each value's percentage of their sum, rounded so that they add up to 100."""
    total = sum(values, Decimal(0))
    if total <= 0 or any(value < 0 for value in values):
        raise ValueError("shares need non-negative values with a positive sum")
    units = 100 * 10**places
    exact = [value * units / total for value in values]
    floors = [int(x.to_integral_value(rounding=ROUND_FLOOR)) for x in exact]
    # Hand the units lost to flooring to the largest remainders, the earlier first on a tie.
    order = sorted(range(len(values)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[: units - sum(floors)]:
        floors[i] += 1
    return [Decimal(n).scaleb(-places) for n in floors]


@dataclass(frozen=True, slots=True)
class Bar:
    """One holding's bar: its label, value, share (percent) and place in the chart."""

    label: str
    name: str
    value: Decimal
    share: Decimal
    y: int
    width: float

    @property
    def text_y(self) -> int:
        return self.y + BAR_HEIGHT // 2 + 5

    @property
    def share_x(self) -> float:
        return round(LABEL_WIDTH + self.width + 8, 2)


@dataclass(frozen=True, slots=True)
class Allocation:
    """The bars of one currency, largest first, with their total and the chart's size."""

    currency: str
    total: Decimal
    bars: tuple[Bar, ...]
    width: int = WIDTH
    bar_x: int = LABEL_WIDTH
    bar_height: int = BAR_HEIGHT

    @property
    def height(self) -> int:
        return ROW * len(self.bars)


def _label(holding: Mapping[str, Any]) -> tuple[str, str]:
    ticker = holding.get("ticker")
    name = holding.get("security_name")
    full = next((v for v in (ticker, name) if isinstance(v, str) and v.strip()), "Holding")
    short = full if len(full) <= _LABEL_CHARS else full[: _LABEL_CHARS - 1] + "…"
    return short, name if isinstance(name, str) and name.strip() else full


def allocations(
    holdings: Sequence[Mapping[str, Any]],
) -> tuple[list[Allocation], list[Mapping[str, Any]]]:
    """Return a chart per currency of the holdings with a positive value, and the others."""
    charted: dict[str, list[tuple[Mapping[str, Any], Decimal]]] = {}
    left_out: list[Mapping[str, Any]] = []
    for holding in holdings:
        value = as_decimal(holding.get("market_value"))
        if value is None or value <= 0:
            left_out.append(holding)
            continue
        currency = currency_code(holding.get("currency"))
        charted.setdefault(currency, []).append((holding, value))
    charts = []
    for currency, rows in charted.items():
        rows.sort(key=lambda row: -row[1])  # stable: equal values keep the page's order
        percents = shares([value for _, value in rows])
        bars = []
        for index, ((holding, value), share) in enumerate(zip(rows, percents, strict=True)):
            label, name = _label(holding)
            width = round(max(float(share) / 100 * BAR_SPACE, 1.0), 2)
            bars.append(
                Bar(label, name, value, share, index * ROW + (ROW - BAR_HEIGHT) // 2, width)
            )
        charts.append(Allocation(currency, sum((v for _, v in rows), Decimal(0)), tuple(bars)))
    return charts, left_out
