"""Deciding on the hold page: the form's summary and its confirm, approving as shown, rejecting all, undoing a
decision or an approval, and the state of a decision being sent."""

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from approvals import approving, remembering, rounds
from approvals.models import Approval
from holds.deciding import decisions, remember, review
from holds.mirror import fresh
from holds.models import Decision, Hold
from holds.pages import guards, hold_page
from reviewqueue import readers


@guards.reviewer_required
@require_POST
def hold_review(request, pk):
    """Check the submitted form; show the summary, or store the decision once confirmed (against the hold as the
    platform has it now: ``fresh.refresh``)."""
    hold = guards.hold_or_404(request, pk, decisions.with_latest_decision(Hold.objects.prefetch_related("items")))
    if request.POST.get("confirm") == "yes" and fresh.refresh(hold):
        hold = guards.hold_or_404(request, pk, decisions.with_latest_decision(Hold.objects.prefetch_related("items")))
    reviews, valid = review.read(hold, request.POST)
    if request.POST.get("back") == "yes":
        return render(request, "holds/hold.html", hold_page.hold_context(hold, reviews, viewer=request.viewer))
    if not valid:
        return render(
            request, "holds/hold.html", hold_page.hold_context(hold, reviews, viewer=request.viewer), status=422
        )
    if request.POST.get("confirm") != "yes":
        return _summary(request, hold, reviews)
    round_shown = readers.integer(request.POST.get("round", ""), "round", minimum=0, maximum=readers.ID_MAX)
    try:
        decision_shown = review.confirmed_decision(
            hold, request.user, reviews, request.POST.get("digest", ""), round_shown
        )
    except review.NotConfirmed as refused:
        return _summary(request, hold, reviews, refused.message, status=409)
    checked = review.duplicates_checked(request.POST)
    try:
        remember.submit(
            hold,
            request.viewer,
            review.choices(reviews),
            request.POST.get("remember", ""),
            round_shown=round_shown,
            decision_shown=decision_shown,
            duplicates_checked=checked,
        )
    except remembering.NotRememberable as refused:
        return _summary(request, hold, reviews, f"Nothing was sent: {refused.message}", status=409)
    except decisions.PossibleDuplicate as refused:  # not ticked, or a duplicate found since the summary
        if checked is None:
            return _summary(request, hold, reviews, duplicate_error=review.DUPLICATE_NOT_CHECKED, status=422)
        return _summary(request, hold, reviews, duplicate_error=refused.message, status=409)
    except decisions.DecisionRefused as refused:
        return render(
            request,
            "holds/hold.html",
            hold_page.hold_context(hold, reviews, refused.message, viewer=request.viewer),
            status=409,
        )
    return redirect("hold", pk=hold.pk)


def _summary(request, hold, reviews, message="", status=200, duplicate_error=""):
    """The summary of a valid form, signed so that only what it shows can be confirmed, against the round of
    approvals it shows; with the confirmation an approval of a possible duplicate asks for (``duplicate_error``: why
    the last confirm was refused)."""
    standing = rounds.standing(hold)
    round_shown = rounds.shown(standing.approvals)
    context = hold_page.presence_context(hold, request.user, timezone.now()) | {
        "reviews": reviews,
        "digest": review.summary_digest(hold, request.user, reviews, round_shown),
        "message": message,
        "on_summary": True,
        "standing": standing,
        "round_shown": round_shown,
        "remember": remembering.offer(hold, request.viewer, review.choices(reviews), timezone.now(), with_replay=True),
        "duplicate_check": review.duplicate_check(hold, request.viewer, reviews),
        "duplicate_error": duplicate_error,
    }
    return render(request, "holds/summary.html", context, status=status)


@guards.reviewer_required
@require_POST
def hold_approve(request, pk):
    """ "Approve as it is": give the open round's next approval to the decision the page showed."""
    hold = guards.hold_or_404(request, pk)
    shown = guards.posted_id(request, "approval", "say which approval you agree with")
    fresh.refresh(hold)  # a hold ended elsewhere is then refused by submit, which reads it again
    try:
        choices = [decisions.ItemChoice(**choice) for choice in approving.choices_to_approve(hold, shown)]
        decisions.submit(hold, request.user, choices, round_shown=shown)
    except (decisions.DecisionRefused, approving.NotCounted) as refused:
        return hold_page.refusal(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@guards.reviewer_required
@require_POST
def approval_undo(request, pk):
    """Take back one's own approval in its undo window: the round is one approval short again."""
    hold = guards.hold_or_404(request, pk)
    approval_id = guards.posted_id(request, "approval", "say which approval to take back")
    approval = get_object_or_404(Approval, pk=approval_id, hold=hold)
    try:
        decisions.withdraw_approval(approval.pk, request.user, timezone.now())
    except approving.NotCounted as refused:
        return hold_page.refusal(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@guards.reviewer_required
@require_POST
def hold_reject(request, pk):
    """Reject every item at once with one comment: what an earlier approver, who may not approve again, may still do."""
    hold = guards.hold_or_404(request, pk)
    comment = readers.text(request.POST.get("comment", "").replace("\r\n", "\n"), "comment", review.MAX_COMMENT)
    fresh.refresh(hold)  # a hold ended elsewhere is then refused by submit, which reads it again
    try:
        decisions.submit(hold, request.user, review.rejecting_all(hold, comment))
    except decisions.DecisionRefused as refused:
        return hold_page.refusal(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@guards.reviewer_required
@require_safe
def decision_status(request, pk):
    hold = guards.hold_or_404(request, pk)
    decision = hold.latest_decision()
    if decision is None:
        raise Http404("This hold has no decision yet.")
    if decision.state in Decision.NOT_LIVE and hold.status == Hold.Status.OPEN:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"  # the hold can be decided again: show the form
        return response
    response = render(request, "holds/_decision_status.html", {"decision": decision, "hold": hold})
    if decision.state in (Decision.State.APPLIED, Decision.State.NOT_APPLIED):
        response["HX-Trigger"] = "decision-settled"  # the run panel reloads: the run has moved on
    return response


@guards.reviewer_required
@require_POST
def decision_undo(request, pk):
    """Undo: withdraw the reviewer's decision in its window; nothing is sent and they may decide again."""
    hold = guards.hold_or_404(request, pk)
    decision_id = guards.posted_id(request, "decision", "say which decision to undo")
    decision = get_object_or_404(Decision, pk=decision_id, hold=hold)
    try:
        decisions.withdraw(decision.pk, request.user)
    except decisions.DecisionRefused as refused:
        return hold_page.refusal(request, hold, refused)
    return redirect("hold", pk=hold.pk)
