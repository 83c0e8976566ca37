"""The hold page: everything it shows of a hold, to whom, and the page again with why an action was refused."""

from django.db.models import Exists, FilteredRelation, OuterRef, Q, Subquery, prefetch_related_objects
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from approvals.models import Escalation
from holds.deciding import decidable, form_layout, presence, review
from holds.handover import assignments, notes
from holds.mirror import fresh
from holds.models import Decision, Hold, Note
from holds.pages import approval_page, guards, run_and_files
from holds.queue import display as queue_display
from holds.related import duplicates, related
from notifications import away

_UNREAD = object()  # ``hold_context``'s decision when the caller has not read it


def hold_context(
    hold, reviews=None, error="", viewer=None, decision=_UNREAD, note_presence=False, note_error="", assignment=_UNREAD
):
    """What ``hold.html`` shows ``viewer`` (``request.viewer``); ``note_presence`` also notes that they have the page
    open; ``note_error`` says why the note they wrote was not added. ``decision`` and ``assignment``: as read with the
    hold, if they were."""
    now = timezone.now()
    user = viewer.user if viewer else None
    if decision is _UNREAD:
        decision = hold.latest_decision()
    closed = decidable.closed_reason(hold, now)
    can_decide = not closed and (decision is None or decision.state in Decision.NOT_LIVE)
    # Presence shows only on a hold that can still be decided: nobody is noted or listed on the others.
    if not (can_decide and viewer):
        looking = []
    elif note_presence:
        looking = presence.note_viewing_and_others(hold, user, now)
    else:
        looking = presence.others_looking(hold, user, now)
    reviews = reviews if reviews is not None else _reviews_to_show(hold, decision, user)
    approvals = approval_page.page_context(hold, viewer) if can_decide else {}
    return (
        presence_context(hold, user, now, looking)
        | approvals
        | related_context(hold, viewer, now)
        | {
            "reviews": reviews,
            "error_links": form_layout.error_links(reviews),
            "decision": decision,
            "decidable": can_decide,
            "closed_reason": closed,
            "previewable": [
                file for file in hold.files if file.get("content_type") in run_and_files.INLINE_IMAGE_TYPES
            ],
            "urgency": queue_display.urgency(hold, now),
            "expired": bool(hold.expires_at and hold.expires_at <= now),
            "error": error,
            # An assignment ends with the hold's decision or closing (``holds.handover.assignments``): shown while it
            # can be decided.
            "assignment": (
                shown := (assignments.current(hold) if assignment is _UNREAD else assignment) if can_decide else None
            ),
            "standing_in": away.standing_in_words(shown.user) if shown and shown.user_id else "",
            "notes": notes.thread(hold) if getattr(hold, "any_note", True) else [],  # read with the hold by the page
            "note_error": note_error,
            "max_note": notes.MAX_NOTE,
        }
    )


def related_context(hold, viewer, now) -> dict:
    """The holds related to ``hold`` that ``viewer`` may see, the possible duplicates among them and what was approved
    already on its subjects (``holds/related/``), for the ``holds/_related.html`` partial."""
    if viewer is None:
        return {}
    found = related.visible_related(hold, viewer, now=now)
    return {
        "related": found,
        "duplicate_of": duplicates.duplicates_among(found),
        "approved_already": duplicates.approved_on_subject(hold, viewer=viewer, now=now, related=found),
    }


def hold_for_page(request, pk):
    """The hold with everything its page shows, in three queries: the hold with its claimant, escalation, current
    assignment (``page_assignment``, absent when none), whether it has notes (``any_note``: the thread is read only
    then) and latest decision (and that decision's reviewer), the hold's items, and the decision's items."""
    latest = Decision.objects.filter(hold=OuterRef("pk")).order_by("-created_at", "-pk").values("pk")[:1]
    escalated = Escalation.objects.filter(hold=OuterRef("pk")).order_by("-at", "-pk").values("pk")[:1]
    hold = guards.hold_or_404(
        request,
        pk,
        Hold.objects.annotate(
            page_decision=FilteredRelation("decisions", condition=Q(decisions__pk=Subquery(latest))),
            page_assignment=FilteredRelation("assignments", condition=Q(assignments__ended_at__isnull=True)),
            page_escalation=FilteredRelation("escalations", condition=Q(escalations__pk=Subquery(escalated))),
            any_note=Exists(Note.objects.filter(hold=OuterRef("pk"))),
        )
        .select_related(
            "claimed_by",
            "page_decision__reviewer",
            "page_escalation",
            "page_assignment__user",
            "page_assignment__group",
            "page_assignment__assigned_by",
        )
        .annotate(**approval_page.page_annotations())
        .prefetch_related("items"),
    )
    decision = getattr(hold, "page_decision", None)  # absent, not None, when the hold has no decision
    if decision is not None:
        decision.hold = hold  # its summary reads the hold's items, already here
        prefetch_related_objects([decision], "items")
    return hold, decision


def _reviews_to_show(hold, decision, viewer):
    """A blank form, or the one the viewer just withdrew with Undo, filled as they had it."""
    if decision and decision.state == Decision.State.WITHDRAWN and viewer and decision.reviewer_id == viewer.pk:
        return review.restored(hold, decision)
    return review.blank(hold)


def presence_context(hold, viewer, now, looking=None):
    """Who else has the hold open (``looking``, when read already), and who is deciding it: what
    ``_presence.html`` shows ``viewer``."""
    if looking is None:
        looking = presence.others_looking(hold, viewer, now) if viewer else []
    return {
        "hold": hold,
        "claimant": hold.claimant(now),
        "looking": looking,
        "heartbeat_seconds": presence.HEARTBEAT_SECONDS,
        "now": now,
    }


@guards.reviewer_required
@require_safe
def hold_detail(request, pk):
    """Show the hold, as the platform has it now (``fresh.refresh``); opening it tells the others who is looking,
    and claims nothing."""
    hold, decision = hold_for_page(request, pk)
    if fresh.refresh(hold):
        hold, decision = hold_for_page(request, pk)
    context = hold_context(
        hold,
        viewer=request.viewer,
        decision=decision,
        note_presence=True,
        assignment=getattr(hold, "page_assignment", None),
    )
    return render(request, "holds/hold.html", context)


def refusal(request, hold, refused):
    """The hold page again, with why the reviewer's action was refused (409: the hold's state decided it)."""
    return render(
        request, "holds/hold.html", hold_context(hold, error=refused.message, viewer=request.viewer), status=409
    )
