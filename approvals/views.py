"""The reviewer's page of their remembered approvals (linked from Preferences): what each approves, what it
matched so far, and Revoke. Thin: ``approvals.remembering`` does the work."""

from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from approvals import remembering
from reviewqueue import readers, roles

reviewer_required = roles.required(roles.can_review, "Remembered approvals need the Reviewers role.")


@reviewer_required
@require_safe
def remembered(request):
    return render(
        request, "approvals/remembered.html", {"remembered": remembering.listed(request.user, timezone.now())}
    )


@reviewer_required
@require_POST
def revoke(request):
    """Revoke one of the reviewer's own remembered approvals; anyone else's is a 404, as an unknown id."""
    remembered_pk = readers.identifier(request.POST.get("remembered", ""), "remembered")
    if (
        remembered_pk is None
        or remembering.revoke(remembered_pk, request.user, timezone.now(), owned_only=True) is None
    ):
        raise readers.BadValue("remembered", "say which of your remembered approvals to revoke")
    return redirect("remembered")
