"""Each person's own settings: one row per user, written the first time they save one."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from reviewqueue import readers


def validate_time_zone(value: str) -> None:
    """Refuse anything ``zoneinfo`` does not name, as the strict reader does."""
    try:
        readers.time_zone(value, "time_zone")
    except readers.BadValue as bad:
        raise ValidationError(bad.problem) from None


def site_time_zone() -> str:
    return settings.TIME_ZONE


class Preference(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference")
    time_zone = models.CharField(
        max_length=64,
        default=site_time_zone,
        validators=[validate_time_zone],
        help_text=(
            'An IANA zone name such as "Europe/Paris": the zone of every time this person sees, on pages and in emails.'
        ),
    )

    def __str__(self) -> str:
        return f"{self.user} in {self.time_zone}"
