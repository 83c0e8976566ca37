"""The audit pages, for auditors (and superusers) only: thin, they call the modules doing the work."""

from django.contrib.auth import get_user_model
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from audit import (
    approvalstats,
    approvers,
    charts,
    decisiontime,
    describe,
    diff,
    export,
    handoffstats,
    queries,
    rubberstamping,
    stats,
    timing,
)
from audit.models import AuditEvent
from audit.payloads import ITEM_ACTIONS
from holds.models import Decision, Hold
from reviewqueue import roles

OUTCOMES = [*Decision.Outcome.values, "retry"]


auditor_required = roles.required(roles.can_audit, "Reading the audit needs the Auditors role.")


@auditor_required
@require_safe
def event_list(request):
    filters = queries.Filters.from_query(request.GET)
    events, next_cursor = queries.page(queries.filtered(filters).select_related("actor"), request.GET.get("after", ""))
    context = {
        "rows": describe.rows(events),
        "next_cursor": next_cursor,
        "filters": filters,
        "query": filters.query_string(),
        "export_query": filters.query_string(keep_view=True),
        "views": {view: filters.query_string(view=view) for view in queries.VIEWS},
        "actions": ITEM_ACTIONS,
        "outcomes": OUTCOMES,
        "people": get_user_model().objects.order_by("username").only("pk", "username", "first_name", "last_name"),
        "quick_seconds": rubberstamping.QUICK_SECONDS,
        "section": "list",
    }
    return render(request, "audit/list.html", context)


@auditor_required
@require_safe
def export_csv(request):
    filters = queries.Filters.from_query(request.GET, default_view=queries.ALL_EVENTS)
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M%S")
    response = StreamingHttpResponse(export.lines(filters), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.csv"'
    return response


@auditor_required
@require_safe
def event_detail(request, sequence):
    event = get_object_or_404(AuditEvent.objects.select_related("decision", "hold_record", "actor"), sequence=sequence)
    row = describe.rows([event])[0]
    return render(request, "audit/event.html", {"event": event, "row": row, "section": "list"})


@auditor_required
@require_safe
def decision_detail(request, pk):
    decision = get_object_or_404(Decision.objects.select_related("hold", "reviewer"), pk=pk)
    approved_by = approvers.of_decision(decision)
    events = describe.rows(
        queries.of_decision(decision, approved_by.approval_pks).select_related("actor").order_by("at", "sequence")
    )
    context = {
        "decision": decision,
        "hold": decision.hold,
        "diffs": [diff.item_diff(item) for item in decision.items.all()],
        "attempts": list(decision.delivery_attempts.all()),
        "waited": timing.waited(decision),
        "to_decide": timing.to_decide(decision),
        "to_deliver": timing.to_deliver(decision),
        "approvers": approved_by,
        "events": events,
        "channel": describe.decision_channel(events),
        "section": "list",
    }
    return render(request, "audit/decision.html", context)


@auditor_required
@require_safe
def hold_timeline(request, pk):
    hold = get_object_or_404(Hold, pk=pk)
    context = {
        "hold": hold,
        "events": describe.rows(queries.timeline(hold).select_related("actor").defer("search_text")),
        "decisions": list(hold.decisions.select_related("reviewer").order_by("created_at", "pk")),
        "section": "list",
    }
    return render(request, "audit/timeline.html", context)


@auditor_required
@require_safe
def statistics(request):
    period = stats.Period.from_query(request.GET, timezone.localdate())
    computed = stats.compute(period)
    handoffs = handoffstats.current()
    times = decisiontime.compute(period)
    context = {
        "stats": computed,
        "decision_times": times,
        "decision_time_chart": times.chart(),
        "remembered": approvalstats.remembered_approvals(),
        "reviewer_charts": charts.for_rows("reviewer", computed.reviewers, timing.humanize),
        "agent_charts": charts.for_rows("agent", computed.agents, timing.humanize),
        "policies": approvalstats.per_policy(period),
        "stages": approvalstats.per_stage(period),
        "quick_seconds": rubberstamping.QUICK_SECONDS,
        "handoffs": handoffs,
        "oldest_assignment_age": handoffs.oldest_age_seconds(timezone.now()) if handoffs.oldest_assigned_at else None,
        "section": "stats",
    }
    return render(request, "audit/stats.html", context)
