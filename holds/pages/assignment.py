"""Handing a hold over from its page: assigning, unassigning, adding a note."""

from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from holds.handover import assignments, notes
from holds.models import Hold
from holds.pages import guards, hold_page
from reviewqueue import readers


@guards.reviewer_required
@require_http_methods(["GET", "HEAD", "POST"])
def assign_hold(request, pk):
    """Choose a person or a group who can see the hold, with a note; the POST assigns it (or reassigns it).

    Only those ``assignments.choices`` offers are taken: anyone else posted is a 400, as an unknown value is.
    """
    hold = guards.hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    offered = assignments.choices([hold], request.viewer)
    if request.method != "POST":
        context = {
            "hold": hold,
            "choices": offered,
            "assignment": assignments.current(hold),
            "max_note": notes.MAX_NOTE,
        }
        return render(request, "holds/assign.html", context)
    chosen = assignments.read_choice(request.POST.get("assignee", ""), offered)
    note = assignments.read_note(request.POST.get("note", ""))
    try:
        assignments.assign(hold, chosen.assignee, note, by=request.user)
    except assignments.NotAssignable as refused:
        return hold_page.refusal(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@guards.reviewer_required
@require_POST
def unassign_hold(request, pk):
    hold = guards.hold_or_404(request, pk)
    try:
        assignments.unassign(hold, request.user, assignments.read_note(request.POST.get("note", "")))
    except assignments.NotAssignable as refused:
        return hold_page.refusal(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@guards.reviewer_required
@require_POST
def add_note(request, pk):
    """Add a note to the hold's thread; an empty or too long one is shown again with why (422)."""
    hold = guards.hold_or_404(request, pk)
    try:
        text = notes.read_text(request.POST.get("text", ""))
    except readers.BadValue as bad:
        page, decision = hold_page.hold_for_page(request, pk)
        context = hold_page.hold_context(
            page,
            viewer=request.viewer,
            decision=decision,
            note_error=bad.problem,
            assignment=getattr(page, "page_assignment", None),
        )
        return render(request, "holds/hold.html", context | {"note_text": request.POST.get("text", "")}, status=422)
    notes.add_note(hold, request.user, text)
    return redirect(reverse("hold", args=[hold.pk]) + "#notes")
