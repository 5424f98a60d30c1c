"""The sidebar's chats, grouped by the day they were last used: Today, Yesterday, earlier."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from ..chat.records import SessionRow


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
    sessions: Iterable[SessionRow], today: date | None = None
) -> list[tuple[str, list[SessionRow]]]:
    """Group sessions (most recent first) under the heading of the day, in UTC, they were used."""
    today = today or datetime.now(UTC).date()
    groups: list[tuple[str, list[SessionRow]]] = []
    for session in sessions:
        label = day_label(session.updated_at.astimezone(UTC).date(), today)
        if groups and groups[-1][0] == label:
            groups[-1][1].append(session)
        else:
            groups.append((label, [session]))
    return groups
