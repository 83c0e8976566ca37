"""What the reviewers' queue shows, in the order they should work through it."""

from django.db.models import F, QuerySet

from holds.models import Hold


def open_holds() -> QuerySet[Hold]:
    """Open holds, soonest expiry first (never-expiring last), then oldest."""
    return (
        Hold.objects.filter(status=Hold.Status.OPEN)
        .order_by(F("expires_at").asc(nulls_last=True), F("created_at").asc(), "id")
        .prefetch_related("items")
    )
