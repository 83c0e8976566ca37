"""The queue page and the next hold to open."""

from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from approvals import badges
from holds.pages import guards
from holds.queue import filter_form as queue_filters
from holds.queue import filter_values as queue_filter_values
from holds.queue import freshness as queue_freshness
from holds.queue import listing as holds_queue
from holds.queue import rows as queue_rows
from holds.related import duplicates
from notifications import in_app
from reviewqueue import readers, roles


@require_safe
def queue(request):
    """The home page: the queue for reviewers; auditors who do not review land on the audit."""
    if not roles.can_review(request.viewer) and roles.can_audit(request.viewer):
        return redirect("audit:list")
    return _queue(request)


@guards.reviewer_required
def _queue(request):
    now = timezone.now()
    filters = holds_queue.Filters.from_query(request.GET)
    holds, next_cursor = holds_queue.page(filters, request.viewer, now, request.GET.get("after", ""))
    loaded_at = _loaded_at(request, now)
    refresh = request.htmx and request.htmx.target == "queue-body"
    # Read with the sync states, in their statement: the holds new since the queue was opened, the bell's count on a
    # whole page (the refresh has no header), and which of the page's holds are possible duplicates (where the
    # database can gather them into one value; else in a query of their own).
    pks = [hold.pk for hold in holds]
    scalars = {}
    if loaded_at < now:
        scalars["new_count"] = holds_queue.new_count_query(filters, request.viewer, now, loaded_at)
    if not refresh:
        scalars["unread_notifications"] = in_app.unread_count_query(request.viewer)
    if flags_query := duplicates.flags_query(pks, request.viewer, now):
        scalars["flags"] = flags_query
    states, values = queue_freshness.sync_states_with(tuple(scalars.values()), prepare=not filters.active)
    read = dict(zip(scalars, values, strict=True))
    flags = duplicates.flags_from(read.pop("flags")) if flags_query else duplicates.flagged(pks, request.viewer, now)
    rows = queue_rows.rows(holds, now, loaded_at, badges.badges(holds, possible_duplicates=flags.keys()), flags)
    context = {
        "rows": rows,
        "rows_html": queue_rows.markup(rows),
        "next_cursor": next_cursor,
        "filters": filters,
        "freshness": queue_freshness.freshness(now, states),
        "loaded_at": loaded_at.isoformat(),
        "new_count": 0,
        "now": now,
    } | read
    if refresh:
        return render(request, "holds/_queue_body.html", context)
    choices = queue_filter_values.filter_values(request.viewer, states)  # no other team's agents
    return render(request, "holds/queue.html", context | {"filter_form": queue_filters.form(filters, choices)})


def _loaded_at(request, now):
    """When the reviewer opened the queue: holds first seen after it count as new (none when absent)."""
    return readers.moment(request.GET.get("loaded_at", ""), "loaded_at") or now


@guards.reviewer_required
@require_safe
def next_hold(request):
    """Open the next hold in queue order, or go back to the queue when none is left."""
    upcoming = holds_queue.next_for(request.viewer, timezone.now())
    return redirect("hold", pk=upcoming.pk) if upcoming else redirect("queue")
