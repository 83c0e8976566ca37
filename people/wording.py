"""How messages to people write times: one format for the pages' refusals, emails and webhooks alike."""

from datetime import datetime

from django.utils import timezone
from django.utils.formats import date_format


def moment(value: datetime) -> str:
    """A time in the site's time zone, e.g. "2026-11-29 21:34 UTC"."""
    return date_format(timezone.localtime(value), "Y-m-d H:i T")


def expiry(value: datetime | None) -> str:
    """When something expires, as a message lists it: its moment, or "never"."""
    return moment(value) if value else "never"
