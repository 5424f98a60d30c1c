"""Spending charts drawn by the server: by category for a month, by month for the last six.

Each chart is plain numbers for an SVG of horizontal bars (no script, no chart service) and
the same rows for the table a screen reader reads instead. One chart per currency: nothing
is converted. A month or category whose spending nets to nothing or less (refunds only)
gets no bar, and is still a row of the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy.engine import Engine

from ..money import format_money
from ..store.spending import by_category, by_month

__all__ = [
    "BarChart",
    "ChartBar",
    "category_chart",
    "month_chart",
    "month_start",
    "short_month",
    "spending_charts",
]

WIDTH = 360
LABEL_WIDTH = 110
BAR_SPACE = 160
ROW = 30
BAR_HEIGHT = 18
# English names, as the rest of the app writes them; `strftime` would follow the locale.
_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTHS = tuple(name[:3] for name in _MONTH_NAMES)


@dataclass(frozen=True, slots=True)
class ChartBar:
    """One bar: what it stands for, its amount, and its place."""

    label: str
    name: str
    value: float
    shown: str
    y: int
    width: float

    @property
    def text_y(self) -> int:
        return self.y + BAR_HEIGHT // 2 + 5

    @property
    def value_x(self) -> float:
        return round(LABEL_WIDTH + self.width + 6, 2)


@dataclass(frozen=True, slots=True)
class BarChart:
    """The bars of one chart, in one currency, with its title and size."""

    title: str
    caption: str
    currency: str
    bars: tuple[ChartBar, ...]
    total: str
    width: int = WIDTH
    bar_x: int = LABEL_WIDTH
    bar_height: int = BAR_HEIGHT

    @property
    def height(self) -> int:
        return max(ROW * len(self.bars), ROW)


def month_start(day: date, back: int = 0) -> date:
    """Return the first day of the month `back` months before `day`'s."""
    index = day.year * 12 + day.month - 1 - back
    return date(index // 12, index % 12 + 1, 1)


def short_month(first: date) -> str:
    """Name a month briefly: "Nov 2026"."""
    return f"{_MONTHS[first.month - 1]} {first.year}"


def _category_name(key: str) -> str:
    return key.replace("_", " ").lower().capitalize()


def _chart(
    title: str, caption: str, currency: str, rows: Sequence[tuple[str, str, float]]
) -> BarChart:
    top = max((value for _, _, value in rows), default=0.0)
    bars = []
    for index, (label, name, value) in enumerate(rows):
        width = round(max(value, 0.0) / top * BAR_SPACE, 2) if top > 0 else 0.0
        shown = format_money(value, currency)
        bars.append(
            ChartBar(label, name, value, shown, index * ROW + (ROW - BAR_HEIGHT) // 2, width)
        )
    total = format_money(sum(value for _, _, value in rows), currency)
    return BarChart(title, caption, currency, tuple(bars), total)


def category_chart(rows: Sequence[tuple[str, str, float]], month: date, currency: str) -> BarChart:
    """Chart one currency's spending by category in the month starting on `month`."""
    named = f"{_MONTH_NAMES[month.month - 1]} {month.year}"
    mine = sorted((r for r in rows if r[1] == currency), key=lambda r: -r[2])
    bars = [(_category_name(k)[:16], _category_name(k), total) for k, _, total in mine]
    return _chart(
        f"Spending by category, {named}", f"Spending by category in {named}", currency, bars
    )


def month_chart(
    rows: Sequence[tuple[str, str, float]], first: date, currency: str, months: int = 6
) -> BarChart:
    """Chart one currency's spending in each of `months` months from `first`."""
    totals = {key: total for key, c, total in rows if c == currency}
    bars = []
    for step in range(months):
        start = month_start(first, -step)
        key = start.isoformat()[:7]
        label = f"{_MONTHS[start.month - 1]} {start.year}"
        bars.append((label, f"{_MONTH_NAMES[start.month - 1]} {start.year}", totals.get(key, 0.0)))
    return _chart(
        "Spending by month", f"Spending in each of the last {months} months", currency, bars
    )


def spending_charts(
    engine: Engine, user_id: int, month: date, today: date, account_id: str | None = None
) -> list[BarChart]:
    """Return the category chart of `month` and the six-month chart, per currency."""
    first = month_start(today, 5)
    categories = by_category(engine, user_id, month, month_start(month, -1), account_id)
    months = by_month(engine, user_id, first, month_start(today, -1), account_id)
    currencies = sorted({c for _, c, _ in categories} | {c for _, c, _ in months}) or ["USD"]
    charts: list[BarChart] = []
    for currency in currencies:
        charts.append(category_chart(categories, month, currency))
        charts.append(month_chart(months, first, currency))
    return charts
