"""The one ISO 8601 formatter of the service: UTC, milliseconds, a `Z` (never `+00:00`)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso_utc(t: float) -> str:
    """`t` (seconds since the epoch) as e.g. 2027-01-15T08:00:00.000Z."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
