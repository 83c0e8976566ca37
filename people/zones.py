"""Which time zone a person sees times in: their preference, else the site's ``TIME_ZONE``.

Pages read the zone from the session, where signing in puts it, so that showing
a page costs no query and no session write (a background poll must not look like
use of the session); saving the preference updates the session that saved it,
and the person's other sessions pick it up at their next sign-in.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.conf import settings

from people.models import Preference
from reviewqueue import readers

SESSION_KEY = "people.time_zone"


def choices() -> list[str]:
    """The zones offered in the preferences, sorted: "Area/City" names and UTC, not the legacy aliases."""
    return sorted(zone for zone in readers.time_zone_names() if "/" in zone or zone == "UTC")


def zone_name_of(user) -> str:
    """The zone a user chose, else the site's."""
    chosen = Preference.objects.filter(user=user).values_list("time_zone", flat=True).first()
    return chosen or settings.TIME_ZONE


def save(request, zone_name: str) -> None:
    """Store a zone already read by ``readers.time_zone`` as the signed-in user's, and use it from now on."""
    Preference.objects.update_or_create(user=request.user, defaults={"time_zone": zone_name})
    request.session[SESSION_KEY] = zone_name


def remember_at_sign_in(sender, request, user, **kwargs) -> None:
    """``user_logged_in`` receiver: keep the person's zone in their new session."""
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_KEY] = zone_name_of(user)


def for_request(request) -> ZoneInfo:
    """The signed-in user's zone: the session's when it holds a valid one, else read from the database."""
    remembered = request.session.get(SESSION_KEY)
    try:
        zone_name = readers.time_zone(remembered, SESSION_KEY) if isinstance(remembered, str) else ""
    except readers.BadValue:
        zone_name = ""
    return ZoneInfo(zone_name or zone_name_of(request.user))


def chosen(value: str) -> str:
    """The zone a person picked in the preferences form; blank or unknown raises ``readers.BadValue``."""
    zone_name = readers.time_zone(value, "time_zone")
    if not zone_name:
        raise readers.BadValue("time_zone", "choose a time zone")
    return zone_name


def zones_of(users) -> dict[int, ZoneInfo]:
    """Each user's zone by id, in one query, for writing messages to many people (emails in their own zone)."""
    users = list(users)
    chosen = dict(Preference.objects.filter(user__in=users).values_list("user_id", "time_zone"))
    return {user.pk: ZoneInfo(chosen.get(user.pk) or settings.TIME_ZONE) for user in users}
