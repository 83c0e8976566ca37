"""The run behind a hold, fetched from the platform and kept on the hold so the page works when it is down."""

from datetime import timedelta

from django.utils import timezone

from holds.mirror import platform
from holds.models import Hold
from reviewqueue.agent_json import storable
from reviewqueue.showing import nested_within

FRESH_FOR = timedelta(seconds=60)


def run_context(hold: Hold, client: platform.PlatformClient) -> tuple[dict | None, str]:
    """The run's payload (fresh, or the last one fetched) and an error message when it could not be refreshed."""
    now = timezone.now()
    if (
        hold.run_snapshot
        and hold.run_fetched_at
        and now - hold.run_fetched_at < FRESH_FOR
        and not _settled_since(hold, hold.run_fetched_at)
    ):
        return hold.run_snapshot, ""
    try:
        run = client.get_run(hold.env, hold.run_id)
    except platform.PlatformError as error:
        return hold.run_snapshot, str(error)
    # Agent text: PostgreSQL refuses a NUL in JSON. The run is only shown, so it is kept as shown, nested within the
    # depth any page or answer shows, however deep the platform's JSON (storable's walk would run out first).
    snapshot = storable(nested_within(run.raw))
    Hold.objects.filter(pk=hold.pk).update(run_snapshot=snapshot, run_fetched_at=now)
    return snapshot, ""


def _settled_since(hold: Hold, moment) -> bool:
    """Whether the hold was decided or closed after ``moment``: the run has moved on since it was fetched."""
    if hold.closed_at and hold.closed_at > moment:
        return True
    return hold.decisions.filter(finished_at__gt=moment).exists()


def customer_message(run: dict | None) -> str:
    """The customer's message the run started from, read from the run as fetched or as last kept."""
    return platform.parse_run(run).customer_message if run else ""
