"""How old a quote is, and whether the page must warn that it is not a live price.

A quote from the bundled snapshot is never live, whatever its date; a quote from a live
source is live only while it is recent (markets close, feeds stall). `now` is passed in, so
the rule is tested without a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["LIVE_FOR", "QuoteAge", "day_text", "quote_age"]

# A live feed's quote older than this is shown as the last price on record, not as live.
LIVE_FOR = timedelta(minutes=20)
_SKEW = timedelta(minutes=5)  # a quote stamped this far ahead of our clock is still believed


def day_text(moment: datetime) -> str:
    """Return a date as people write it: "27 Jun 2025"."""
    return f"{moment.day} {moment:%b %Y}"


@dataclass(frozen=True, slots=True)
class QuoteAge:
    """When a quote was made (None: unknown), whether it is live, and why it is not."""

    at: datetime | None
    live: bool
    warning: str | None

    @property
    def as_of(self) -> str | None:
        """The quote's day, "27 Jun 2025"; a live one with its time, "27 Jun 2025, 14:05 UTC"."""
        if self.at is None:
            return None
        return f"{day_text(self.at)}, {self.at:%H:%M} UTC" if self.live else day_text(self.at)

    @property
    def headline(self) -> str | None:
        """What the warning says first, plainly; None for a live quote."""
        return None if self.live else "Not a live price."

    @property
    def iso(self) -> str | None:
        return self.at.isoformat().replace("+00:00", "Z") if self.at else None


def _moment(stamp: object) -> datetime | None:
    if isinstance(stamp, bool) or not isinstance(stamp, int) or not 0 < stamp < 2**37:
        return None
    return datetime.fromtimestamp(stamp, UTC)


def quote_age(stamp: object, *, live_source: bool, now: datetime) -> QuoteAge:
    """Return how old a quote stamped `stamp` (UNIX seconds) is, and what to warn about."""
    at = _moment(stamp)
    if at is not None and at > now + _SKEW:
        at = None  # a date in the future says nothing true about the quote's age
    if not live_source:
        when = f"the market as of {day_text(at)}" if at else "a day that is not recorded"
        return QuoteAge(
            at,
            False,
            f"This quote comes from a saved market snapshot and does not update: it shows {when}.",
        )
    if at is None:
        return QuoteAge(
            None, False, "The time of this quote is not known, so it may be out of date."
        )
    if now - at > LIVE_FOR:
        return QuoteAge(
            at,
            False,
            "This is the last price on record, from "
            f"{day_text(at)} at {at:%H:%M} UTC; the market may be closed.",
        )
    return QuoteAge(at, True, None)
