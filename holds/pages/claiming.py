"""Who is deciding a hold and who has it open: the page's heartbeat, claiming, taking over, releasing, leaving."""

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from holds import lifecycle
from holds.deciding import decidable, presence
from holds.models import Hold
from holds.pages import guards, hold_page


@guards.reviewer_required
@require_POST
def hold_heartbeat(request, pk):
    """The open page's heartbeat: renews the reviewer's presence and their claim; answers who else is there."""
    hold = guards.hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    now = timezone.now()
    closed = bool(decidable.closed_reason(hold, now) or hold.live_decision())
    if not closed:
        presence.forget_ended(request.user, now)
        presence.note_viewing(hold, request.user, now)
        lifecycle.keep_claim(hold, request.user, now, presence.live_window())
    context = hold_page.presence_context(hold, request.user, now) | {
        "closed": closed,
        "on_summary": request.POST.get("summary") == "yes",
    }
    return render(request, "holds/_presence.html", context)


@guards.reviewer_required
@require_POST
def claim_hold(request, pk):
    """ "I'll take this": the reviewer starts deciding. From the page's script the heartbeat keeps the claim alive."""
    hold = guards.hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    now = timezone.now()
    lifecycle.claim(hold, request.user, now, lasting=presence.live_window() if request.htmx else None)
    if not request.htmx:
        return redirect("hold", pk=hold.pk)
    return render(request, "holds/_presence.html", hold_page.presence_context(hold, request.user, now))


@guards.reviewer_required
@require_POST
def leave_hold(request, pk):
    """The page closed (its ``pagehide`` beacon): the reviewer is no longer looking, nor deciding."""
    hold = guards.hold_or_404(request, pk)
    presence.leave(hold, request.user)
    lifecycle.release_claim(hold, request.user)
    return HttpResponse(status=204)


@guards.reviewer_required
@require_http_methods(["GET", "HEAD", "POST"])
def take_over(request, pk):
    """Ask to confirm, then take the hold's claim from whoever holds it."""
    hold = guards.hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    if request.method != "POST":
        return render(request, "holds/take_over.html", {"hold": hold, "claimant": hold.claimant(timezone.now())})
    lifecycle.take_over(hold, request.user)
    return redirect("hold", pk=hold.pk)


@guards.reviewer_required
@require_POST
def release(request, pk):
    hold = guards.hold_or_404(request, pk)
    lifecycle.release_claim(hold, request.user)
    return redirect("queue")
