"""Relative times in words ("37 minutes ago", "in 2 hours, 5 minutes"): one wording for every page.

Django's ``timesince`` is slow enough that a queue of fifty rows, which calls it twice a
row per request, would feel it; up to four weeks apart the words depend on the whole
minutes between the two times and the language alone, so they are remembered by those.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.utils import translation
from django.utils.timesince import timesince, timeuntil

from reviewqueue import processcache

# Beyond four weeks the words need the calendar (months), not the minutes alone.
MEMO_LIMIT = timedelta(days=28)
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # any moment: the words depend on the minutes between alone
_MINUTE = timedelta(minutes=1)


def relative(moment: datetime, now: datetime) -> str:
    """ "37 minutes ago" for a past ``moment``, "in 37 minutes" for a future one."""
    return ago(moment, now) if moment <= now else f"in {until(moment, now)}"


def ago(moment: datetime, now: datetime, language: str | None = None) -> str:
    """ "37 minutes ago"; "0 minutes ago" for a ``moment`` a little ahead of ``now`` (another clock's)."""
    return f"{since(moment, now, language)} ago"


def since(moment: datetime, now: datetime, language: str | None = None) -> str:
    """``timesince``'s words ("37 minutes") in the active language (``language``, when the caller read it already
    for many times at once)."""
    if timedelta(0) <= now - moment < MEMO_LIMIT:
        return _since_minutes((now - moment) // _MINUTE, language or translation.get_language())
    return timesince(moment, now)


def until(moment: datetime, now: datetime, language: str | None = None) -> str:
    """``timeuntil``'s words ("37 minutes") in the active language (``language``: as ``since``'s)."""
    if timedelta(0) <= moment - now < MEMO_LIMIT:
        return _until_minutes((moment - now) // _MINUTE, language or translation.get_language())
    return timeuntil(moment, now)


@processcache.cached(maxsize=8192)
def _since_minutes(minutes: int, language: str | None) -> str:
    return timesince(_EPOCH, _EPOCH + timedelta(minutes=minutes))


@processcache.cached(maxsize=8192)
def _until_minutes(minutes: int, language: str | None) -> str:
    return timeuntil(_EPOCH + timedelta(minutes=minutes), _EPOCH)
