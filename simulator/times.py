"""The one time format the platform speaks: ISO-8601 UTC, whole seconds, trailing "Z"."""

from datetime import UTC, datetime


def iso(moment: datetime) -> str:
    """`moment` as e.g. "2026-11-29T10:00:00Z"."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """An aware UTC datetime from ISO-8601 text; a time without offset is taken as UTC."""
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def as_iso(value: datetime | str) -> str:
    """Normalise a datetime or ISO text to the platform's format.

    Holds are sorted by their `created_at` text, which is only chronological when every
    time is written the same way.
    """
    return iso(value if isinstance(value, datetime) else parse_iso(value))
