from django.contrib import admin

from holds.models import QuarantinedHold
from reviewqueue.admin import ReadOnlyAdmin


@admin.register(QuarantinedHold)
class QuarantinedHoldAdmin(ReadOnlyAdmin):
    """Read-only: the holds sync could not mirror and why; sync removes each once it is stored or gone."""

    list_display = ["env", "hold_id", "reason", "times_seen", "first_seen_at", "last_seen_at"]
    fields = ["env", "hold_id", "reason", "excerpt", "times_seen", "first_seen_at", "last_seen_at"]
