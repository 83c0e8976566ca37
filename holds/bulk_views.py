"""Views of bulk decisions: the queue's selection, its summary, and what became of each hold."""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from holds.deciding import bulk, review
from holds.views import reviewer_required


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
