"""Views: thin, they read the request, call the modules doing the work and render."""

import contextlib
from urllib.parse import quote

from django.db.models import Exists, FilteredRelation, OuterRef, Q, Subquery, prefetch_related_objects
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from approvals import approving, badges, rounds
from approvals.models import Approval
from holds.deciding import claims, decidable, decisions, form_layout, presence, review
from holds.handover import assignments, notes
from holds.mirror import platform, runs
from holds.models import Decision, Hold, Note
from holds.pages import approval_page
from holds.queue import display as queue_display
from holds.queue import filter_form as queue_filters
from holds.queue import filter_values as queue_filter_values
from holds.queue import freshness as queue_freshness
from holds.queue import listing as holds_queue
from holds.queue import rows as queue_rows
from notifications import away
from reviewqueue import readers, roles
from teams import scopes

INLINE_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


reviewer_required = roles.required(roles.can_review, "Deciding holds needs the Reviewers role.")


@require_safe
def queue(request):
    """The home page: the queue for reviewers; auditors who do not review land on the audit."""
    if not roles.can_review(request.viewer) and roles.can_audit(request.viewer):
        return redirect("audit:list")
    return _queue(request)


@reviewer_required
def _queue(request):
    now = timezone.now()
    filters = holds_queue.Filters.from_query(request.GET)
    matching = holds_queue.filtered(filters, request.viewer, now)
    holds, next_cursor = holds_queue.page(matching, request.GET.get("after", ""), filters)
    loaded_at = _loaded_at(request, now)
    new_holds = matching.filter(first_seen_at__gt=loaded_at) if loaded_at < now else None
    states, new_count = queue_freshness.sync_states_and_new_count(new_holds, filters)
    rows = queue_rows.rows(holds, now, loaded_at, badges.badges(holds))
    context = {
        "rows": rows,
        "next_cursor": next_cursor,
        "filters": filters,
        "freshness": queue_freshness.freshness(now, states),
        "loaded_at": loaded_at.isoformat(),
        "new_count": new_count,
        "now": now,
    }
    if request.htmx and request.htmx.target == "queue-body":
        return render(request, "holds/_queue_body.html", context)
    choices = queue_filter_values.filter_values(request.viewer, states)  # no other team's agents
    return render(request, "holds/queue.html", context | {"filter_form": queue_filters.form(filters, choices)})


def _loaded_at(request, now):
    """When the reviewer opened the queue: holds first seen after it count as new (none when absent)."""
    return readers.moment(request.GET.get("loaded_at", ""), "loaded_at") or now


_UNREAD = object()  # ``_hold_context``'s decision when the caller has not read it


def _hold_context(
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
        _presence_context(hold, user, now, looking)
        | approvals
        | {
            "reviews": reviews,
            "error_links": form_layout.error_links(reviews),
            "decision": decision,
            "decidable": can_decide,
            "closed_reason": closed,
            "previewable": [file for file in hold.files if file.get("content_type") in INLINE_IMAGE_TYPES],
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


def _posted_id(request, name: str, missing: str) -> int:
    """The database id the form posted as ``name``; a 400 that says ``missing`` when it posted none."""
    found = readers.identifier(request.POST.get(name, ""), name)
    if found is None:
        raise readers.BadValue(name, missing)
    return found


def _hold_or_404(request, pk, holds=Hold.objects):
    """The hold ``pk`` of ``holds``; 404 when there is none, or when it is out of the reviewer's team
    scopes, so that an id reveals nothing."""
    return get_object_or_404(scopes.visible(holds.all(), request.viewer), pk=pk)


def _hold_for_page(request, pk):
    """The hold with everything its page shows, in three queries: the hold with its claimant, escalation, current
    assignment (``page_assignment``, absent when none), whether it has notes (``any_note``: the thread is read only
    then) and latest decision (and that decision's reviewer), the hold's items, and the decision's items."""
    latest = Decision.objects.filter(hold=OuterRef("pk")).order_by("-created_at", "-pk").values("pk")[:1]
    hold = _hold_or_404(
        request,
        pk,
        Hold.objects.annotate(
            page_decision=FilteredRelation("decisions", condition=Q(decisions__pk=Subquery(latest))),
            page_assignment=FilteredRelation("assignments", condition=Q(assignments__ended_at__isnull=True)),
            any_note=Exists(Note.objects.filter(hold=OuterRef("pk"))),
        )
        .select_related(
            "claimed_by",
            "page_decision__reviewer",
            "escalation",
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


def _presence_context(hold, viewer, now, looking=None):
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


@reviewer_required
@require_safe
def hold_detail(request, pk):
    """Show the hold; opening it tells the others who is looking, and claims nothing."""
    hold, decision = _hold_for_page(request, pk)
    context = _hold_context(
        hold,
        viewer=request.viewer,
        decision=decision,
        note_presence=True,
        assignment=getattr(hold, "page_assignment", None),
    )
    return render(request, "holds/hold.html", context)


@reviewer_required
@require_POST
def hold_heartbeat(request, pk):
    """The open page's heartbeat: renews the reviewer's presence and their claim; answers who else is there."""
    hold = _hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    now = timezone.now()
    closed = bool(decidable.closed_reason(hold, now) or hold.live_decision())
    if not closed:
        presence.forget_ended(request.user, now)
        presence.note_viewing(hold, request.user, now)
        if claims.keep_alive(hold, request.user, now, presence.live_window()):
            hold.claim_expires_at = now + presence.live_window()  # as keep_alive stored it: no need to read it back
    context = _presence_context(hold, request.user, now) | {
        "closed": closed,
        "on_summary": request.POST.get("summary") == "yes",
    }
    return render(request, "holds/_presence.html", context)


@reviewer_required
@require_POST
def claim_hold(request, pk):
    """ "I'll take this": the reviewer starts deciding. From the page's script the heartbeat keeps the claim alive."""
    hold = _hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    now = timezone.now()
    claims.claim(hold, request.user, now, lasting=presence.live_window() if request.htmx else None)
    if not request.htmx:
        return redirect("hold", pk=hold.pk)
    return render(request, "holds/_presence.html", _presence_context(hold, request.user, now))


@reviewer_required
@require_POST
def leave_hold(request, pk):
    """The page closed (its ``pagehide`` beacon): the reviewer is no longer looking, nor deciding."""
    hold = _hold_or_404(request, pk)
    presence.leave(hold, request.user)
    claims.release(hold, request.user)
    return HttpResponse(status=204)


@reviewer_required
@require_POST
def hold_review(request, pk):
    """Check the submitted form; show the summary, or store the decision once confirmed."""
    hold = _hold_or_404(request, pk, decisions.with_latest_decision(Hold.objects.prefetch_related("items")))
    reviews, valid = review.read(hold, request.POST)
    if request.POST.get("back") == "yes":
        return render(request, "holds/hold.html", _hold_context(hold, reviews, viewer=request.viewer))
    if not valid:
        return render(request, "holds/hold.html", _hold_context(hold, reviews, viewer=request.viewer), status=422)
    if request.POST.get("confirm") != "yes":
        return _summary(request, hold, reviews)
    round_shown = readers.integer(request.POST.get("round", ""), "round", minimum=0, maximum=readers.ID_MAX)
    try:
        decision_shown = review.confirmed_decision(
            hold, request.user, reviews, request.POST.get("digest", ""), round_shown
        )
    except review.NotConfirmed as refused:
        return _summary(request, hold, reviews, refused.message, status=409)
    try:
        decisions.submit(
            hold, request.user, review.choices(reviews), round_shown=round_shown, decision_shown=decision_shown
        )
    except decisions.DecisionRefused as refused:
        return render(
            request, "holds/hold.html", _hold_context(hold, reviews, refused.message, viewer=request.viewer), status=409
        )
    return redirect("hold", pk=hold.pk)


def _summary(request, hold, reviews, message="", status=200):
    """The summary of a valid form, signed so that only what it shows can be confirmed, against the round of
    approvals it shows."""
    standing = rounds.standing(hold)
    round_shown = rounds.shown(standing.approvals)
    context = _presence_context(hold, request.user, timezone.now()) | {
        "reviews": reviews,
        "digest": review.summary_digest(hold, request.user, reviews, round_shown),
        "message": message,
        "on_summary": True,
        "standing": standing,
        "round_shown": round_shown,
    }
    return render(request, "holds/summary.html", context, status=status)


def _refused(request, hold, refused):
    """The hold page again, with why the reviewer's action was refused (409: the hold's state decided it)."""
    return render(
        request, "holds/hold.html", _hold_context(hold, error=refused.message, viewer=request.viewer), status=409
    )


@reviewer_required
@require_POST
def hold_approve(request, pk):
    """ "Approve as it is": give the open round's next approval to the decision the page showed."""
    hold = _hold_or_404(request, pk)
    shown = _posted_id(request, "approval", "say which approval you agree with")
    try:
        choices = [decisions.ItemChoice(**choice) for choice in approving.choices_to_approve(hold, shown)]
        decisions.submit(hold, request.user, choices, round_shown=shown)
    except (decisions.DecisionRefused, approving.NotCounted) as refused:
        return _refused(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_POST
def approval_undo(request, pk):
    """Take back one's own approval in its undo window: the round is one approval short again."""
    hold = _hold_or_404(request, pk)
    approval_id = _posted_id(request, "approval", "say which approval to take back")
    approval = get_object_or_404(Approval, pk=approval_id, hold=hold)
    try:
        decisions.withdraw_approval(approval.pk, request.user, timezone.now())
    except approving.NotCounted as refused:
        return _refused(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_POST
def hold_reject(request, pk):
    """Reject every item at once with one comment: what an earlier approver, who may not approve again, may still do."""
    hold = _hold_or_404(request, pk)
    comment = readers.text(request.POST.get("comment", "").replace("\r\n", "\n"), "comment", review.MAX_COMMENT)
    try:
        decisions.submit(hold, request.user, review.rejecting_all(hold, comment))
    except decisions.DecisionRefused as refused:
        return _refused(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_http_methods(["GET", "HEAD", "POST"])
def assign_hold(request, pk):
    """Choose a person or a group who can see the hold, with a note; the POST assigns it (or reassigns it).

    Only those ``assignments.choices`` offers are taken: anyone else posted is a 400, as an unknown value is.
    """
    hold = _hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
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
        return _refused(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_POST
def unassign_hold(request, pk):
    hold = _hold_or_404(request, pk)
    try:
        assignments.unassign(hold, request.user, assignments.read_note(request.POST.get("note", "")))
    except assignments.NotAssignable as refused:
        return _refused(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_POST
def add_note(request, pk):
    """Add a note to the hold's thread; an empty or too long one is shown again with why (422)."""
    hold = _hold_or_404(request, pk)
    try:
        text = notes.read_text(request.POST.get("text", ""))
    except readers.BadValue as bad:
        page, decision = _hold_for_page(request, pk)
        context = _hold_context(
            page,
            viewer=request.viewer,
            decision=decision,
            note_error=bad.problem,
            assignment=getattr(page, "page_assignment", None),
        )
        return render(request, "holds/hold.html", context | {"note_text": request.POST.get("text", "")}, status=422)
    notes.add_note(hold, request.user, text)
    return redirect(reverse("hold", args=[hold.pk]) + "#notes")


@reviewer_required
@require_safe
def decision_status(request, pk):
    hold = _hold_or_404(request, pk)
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


@reviewer_required
@require_POST
def decision_undo(request, pk):
    """Undo: withdraw the reviewer's decision in its window; nothing is sent and they may decide again."""
    hold = _hold_or_404(request, pk)
    decision_id = _posted_id(request, "decision", "say which decision to undo")
    decision = get_object_or_404(Decision, pk=decision_id, hold=hold)
    try:
        decisions.withdraw(decision.pk, request.user)
    except decisions.DecisionRefused as refused:
        return _refused(request, hold, refused)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_safe
def next_hold(request):
    """Open the next hold in queue order, or go back to the queue when none is left."""
    upcoming = holds_queue.next_for(request.viewer, timezone.now())
    return redirect("hold", pk=upcoming.pk) if upcoming else redirect("queue")


@reviewer_required
@require_http_methods(["GET", "HEAD", "POST"])
def take_over(request, pk):
    """Ask to confirm, then take the hold's claim from whoever holds it."""
    hold = _hold_or_404(request, pk, Hold.objects.select_related("claimed_by"))
    if request.method != "POST":
        return render(request, "holds/take_over.html", {"hold": hold, "claimant": hold.claimant(timezone.now())})
    claims.take_over(hold, request.user)
    return redirect("hold", pk=hold.pk)


@reviewer_required
@require_POST
def release(request, pk):
    hold = _hold_or_404(request, pk)
    claims.release(hold, request.user)
    return redirect("queue")


@reviewer_required
@require_safe
def run_context(request, pk):
    hold = _hold_or_404(request, pk)
    with platform.PlatformClient.from_settings() as client:
        run, error = runs.run_context(hold, client)
    context = {"hold": hold, "run": run, "error": error, "customer_message": runs.customer_message(run)}
    return render(request, "holds/_run.html", context)


@reviewer_required
@require_safe
def hold_file(request, pk, file_id):
    """Stream a hold's file through the app, so the API key stays on the server."""
    hold = _hold_or_404(request, pk)
    attached = next((file for file in hold.files if file.get("id") == file_id), None)
    if attached is None:
        raise Http404("No such file on this hold.")
    stack = contextlib.ExitStack()
    client = stack.enter_context(platform.PlatformClient.from_settings())
    try:
        download = stack.enter_context(client.stream_file(hold.env, hold.hold_id, file_id))
    except platform.NotFound:
        stack.close()
        raise Http404("The platform no longer has this file.") from None
    except platform.PlatformError:
        stack.close()
        return HttpResponse(
            "The platform is unreachable; try the file again later.", status=503, content_type="text/plain"
        )
    inline = request.GET.get("inline") == "1" and download.content_type in INLINE_IMAGE_TYPES
    response = StreamingHttpResponse(
        _closing(download.chunks, stack), content_type=download.content_type if inline else "application/octet-stream"
    )
    if download.content_length is not None:
        response["Content-Length"] = str(download.content_length)
    response["Content-Disposition"] = _disposition(
        "inline" if inline else "attachment", attached.get("name") or file_id
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response


def _closing(chunks, stack):
    with stack:
        yield from chunks


def _disposition(kind: str, name: str) -> str:
    ascii_name = "".join(ch if ch.isascii() and ch.isprintable() and ch not in '"\\;' else "_" for ch in name) or "file"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
