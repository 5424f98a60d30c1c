"""The sidebar's chats, grouped by the day they were last used: Today, Yesterday, earlier."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any


def day_label(day: date, today: date) -> str:
    """Return a group's heading: Today, Yesterday, Previous 7 days, or the month."""
    if day >= today:
        return "Today"
    if day == today - timedelta(days=1):
        return "Yesterday"
    if day > today - timedelta(days=7):
        return "Previous 7 days"
    return day.strftime("%B %Y")


def by_day(
    sessions: Iterable[Mapping[str, Any]], today: date | None = None
) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """Group sessions (most recent first, `updated_at` ISO 8601) under their day's heading."""
    today = today or datetime.now(UTC).date()
    groups: list[tuple[str, list[Mapping[str, Any]]]] = []
    for session in sessions:
        try:
            day = datetime.fromisoformat(str(session["updated_at"])).astimezone(UTC).date()
        except (KeyError, ValueError):
            day = today
        label = day_label(day, today)
        if groups and groups[-1][0] == label:
            groups[-1][1].append(session)
        else:
            groups.append((label, [session]))
    return groups
