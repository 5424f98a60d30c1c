"""The spending page: by category for a month (`?month=YYYY-MM`, last month by default) and
by month for the last six, as server-drawn charts (webapp/web/spending_charts.py)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from flask import Blueprint, render_template, request

from ..store.app_db import get_engine
from .auth import current_user, login_required
from .spending_charts import month_start, short_month, spending_charts

bp = Blueprint("spending", __name__)

_MONTH = re.compile(r"(\d{4})-(\d{2})")


def chosen_month(today: date, asked: str | None) -> date:
    """Return the month asked for, within the last six, else last month."""
    first, latest = month_start(today, 5), month_start(today)
    match = _MONTH.fullmatch(asked or "")
    if match and 1 <= int(match.group(2)) <= 12:
        month = date(int(match.group(1)), int(match.group(2)), 1)
        if first <= month <= latest:
            return month
    return month_start(today, 1)


@bp.get("/spending")
@login_required
def index() -> str:
    """Show the user's spending charts."""
    today = datetime.now(UTC).date()
    month = chosen_month(today, request.args.get("month"))
    charts = spending_charts(get_engine(), current_user().id, month, today)
    months = [
        {
            "key": (m := month_start(today, back)).isoformat()[:7],
            "label": short_month(m),
            "current": m == month,
        }
        for back in range(5, -1, -1)
    ]
    return render_template("spending.html", charts=charts, months=months)
