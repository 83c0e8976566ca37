"""Views of bulk decisions: the queue's selection, its summary, and what became of each hold."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from holds.deciding import bulk, review
from holds.handover import assignments, notes
from holds.models import Hold
from holds.pages.guards import reviewer_required
from teams import scopes


@reviewer_required
@require_POST
def bulk_review(request):
    """Show the summary of the selected holds, or send them once the summary is confirmed."""
    selection = bulk.Selection.from_form(request.POST)
    if not selection.hold_ids:
        messages.info(request, "Select one or more holds in the queue first.")
        return redirect("queue")
    if request.POST.get("confirm") != "yes":
        return _summary(request, selection)
    try:
        results = bulk.send(selection, request.viewer, request.POST.get("digest", ""))
    except review.NotConfirmed as refused:
        return _summary(request, selection, refused.message, status=409)
    context = {
        "selection": selection,
        "sent": [result for result in results if result.decision],
        "approved": [result for result in results if result.approval],
        "not_sent": [result for result in results if not (result.decision or result.approval)],
    }
    return render(request, "holds/bulk_result.html", context)


def _summary(request, selection, message="", status=200):
    """Every hold and item that will be sent and every hold left out, signed so that only this can be confirmed."""
    plan = bulk.plan(selection, request.viewer)
    context = {
        "selection": selection,
        "plan": plan,
        "digest": bulk.summary_digest(selection, request.user, plan.included),
        "message": message,
    }
    return render(request, "holds/bulk_summary.html", context, status=status)


@reviewer_required
@require_POST
def bulk_assign(request):
    """Assign the selected holds: first choose whom (people and groups who can see them all), then assign each.

    Holds out of the reviewer's scopes are left out as unknown ids are; an assignee not offered is a 400.
    """
    hold_ids = bulk.selected_hold_ids(request.POST)
    found = scopes.visible(Hold.objects.filter(pk__in=hold_ids), request.viewer).in_bulk()
    holds = [found[pk] for pk in hold_ids if pk in found]
    if not holds:
        messages.info(request, "Select one or more holds in the queue first.")
        return redirect("queue")
    offered = assignments.choices(holds, request.viewer)
    if request.POST.get("confirm") != "yes":
        return render(
            request, "holds/bulk_assign.html", {"holds": holds, "choices": offered, "max_note": notes.MAX_NOTE}
        )
    chosen = assignments.read_choice(request.POST.get("assignee", ""), offered)
    note = assignments.read_note(request.POST.get("note", ""))
    assigned, left_out = assignments.assign_many(holds, chosen.assignee, note, by=request.user)
    if assigned:
        messages.success(
            request, f"Assigned {len(assigned)} hold{'s' if len(assigned) != 1 else ''} to {chosen.label}."
        )
    if left_out:
        messages.warning(
            request,
            f"{len(left_out)} hold{'s were' if len(left_out) != 1 else ' was'} not assigned: "
            "no longer waiting for a decision.",
        )
    return redirect("queue")
