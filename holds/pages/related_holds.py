"""A hold's related holds as a fragment of their own, for the audit's timeline of the hold: the partial the hold
page shows at its top (``holds/_related.html``), for a reviewer or an auditor, within their team scopes."""

from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from holds.pages import guards, hold_page
from holds.related import related
from reviewqueue import roles

reader_required = roles.required(roles.has_a_role, "Related holds need the Reviewers or the Auditors role.")


@reader_required
@require_safe
def related_holds(request, pk):
    hold = guards.hold_or_404(request, pk)
    now = timezone.now()
    shown = {"hold": hold, "now": now, "to_timelines": True, "window_days": related.window().days}
    return render(request, "holds/related_holds.html", hold_page.related_context(hold, request.viewer, now) | shown)
