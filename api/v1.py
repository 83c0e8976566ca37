"""The API's first version, ``/api/v1/``: thin operations over the modules the pages use, written with django-ninja,
which makes the OpenAPI document (``/api/v1/openapi.json``) and its docs page (``/api/v1/docs``) from them.

Every request carries a token (``Authorization: Bearer rq_…``, ``api.tokens``) and acts as its user: the same team
scopes (a hold out of scope is a 404, as on the pages), roles, claims, four eyes and audit. Session cookies are not
read: a request without a token is a 401 whatever cookie it carries, so CSRF, which guards cookie requests, has
nothing to guard here. Every error is a problem document (``api.problems``).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlencode

from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone
from ninja import Header, Query, Schema, Status

from api import choices, idempotency, problems, schemas, shapes, tokens
from api.service import ERRORS, KEY, WRITE_ERRORS, api
from approvals import approving, badges
from approvals.models import Approval
from audit import describe, export, queries
from audit.models import EventKind
from holds.deciding import decisions
from holds.handover import assignments, notes
from holds.mirror import fresh, platform, runs
from holds.models import Decision, DecisionChannel, Hold
from holds.queue import listing
from teams import scopes

NOT_YOURS = "No hold with this id is open to you."  # the same words for a hold out of scope and one that is not


# Who may do what


def _caller(request, scope: str) -> tokens.Caller:
    caller: tokens.Caller = request.auth
    if scope not in caller.token.scopes:
        raise problems.forbidden(f"This token lacks the {scope} scope.", scope)
    if not caller.may(scope):
        role = "Auditors" if scope == tokens.AUDIT else "Reviewers"
        raise problems.forbidden(f"The token's user no longer has the {role} role.")
    return caller


def _hold(caller: tokens.Caller, pk: int, holds=Hold.objects) -> Hold:
    found = scopes.visible(holds.all(), caller.viewer).filter(pk=pk).first()
    if found is None:
        raise problems.not_found(NOT_YOURS)
    return found


def _decision(caller: tokens.Caller, pk: int) -> Decision:
    return _of_a_visible_hold(caller, Decision.objects.select_related("hold", "reviewer").filter(pk=pk), "decision")


def _of_a_visible_hold(caller: tokens.Caller, found, what: str):
    """The one row of ``found`` (a decision's or an approval's) if its hold is in the caller's scopes, else a 404."""
    visible = scopes.visible_holds_q(caller.viewer, "hold__")
    found = (found.filter(visible) if visible is not None else found).first()
    if found is None:
        raise problems.not_found(f"No {what} with this id is open to you.")
    return found


# Holds


class HoldFilters(Schema):
    """The queue page's filters."""

    agent: str = ""
    capability: str = ""
    env: str = ""
    hold_id: str = ""
    expiring: Literal["", "15m", "1h", "4h", "24h"] = ""
    claim: Literal["", "mine", "unclaimed"] = ""
    approval: Literal["", "mine"] = ""
    assigned: Literal["", "me"] = ""
    duplicates: Literal["", "possible"] = ""
    q: str = ""
    min_amount: str = ""
    max_amount: str = ""
    sort: Literal["expiry", "age", "amount"] = "expiry"
    after: str = ""


@api.get("/holds", response={200: schemas.HoldPage, **ERRORS}, tags=["holds"])
def list_holds(request, filters: Query[HoldFilters]):
    """The queue: open holds in the token's team scopes, in the queue's order, 50 a page."""
    caller = _caller(request, tokens.READ)
    now = timezone.now()
    query = filters.model_dump()
    chosen = listing.Filters.from_query(query)
    listed, after = listing.page(chosen, caller.viewer, now, query["after"])
    holds = Hold.objects.select_related("claimed_by").prefetch_related("items").in_bulk([row.pk for row in listed])
    found = badges.badges(listed)
    page = [shapes.summary(row, holds[row.pk], found.get(row.pk), now) for row in listed if row.pk in holds]
    next_page = None
    if after:
        next_page = f"{request.path}?{urlencode({**{k: v for k, v in query.items() if v}, 'after': after})}"
    return {"holds": page, "next": next_page}


@api.get("/holds/{int:pk}", response={200: schemas.HoldDetail, **ERRORS}, tags=["holds"])
def get_hold(request, pk: int):
    """One hold: its items with their data, the details, the run behind it, its approvals, assignment, notes and
    latest decision."""
    caller = _caller(request, tokens.READ)
    hold = _hold(caller, pk, decisions.with_latest_decision(Hold.objects.prefetch_related("items")))
    with platform.PlatformClient.from_settings() as client:
        run, run_error = runs.run_context(hold, client)
    shaped = schemas.HoldDetail.model_validate(shapes.detail(hold, caller.viewer, timezone.now(), run, run_error))
    response = api.create_response(request, shaped.model_dump(mode="json"), status=200)
    response["ETag"] = shapes.etag(hold)
    return response


@api.post(
    "/holds/{int:pk}/decision",
    response={201: schemas.DecisionAnswer, 202: schemas.DecisionAnswer, **WRITE_ERRORS},
    tags=["decisions"],
)
def decide(
    request,
    pk: int,
    payload: schemas.DecisionIn,
    idempotency_key: str | None = KEY,
    if_match: str | None = Header(
        None, alias="If-Match", description="The hold's etag as read: 409 if it was changed or decided since."
    ),
):
    """Decide the hold: one choice per item. Goes the hold page's way: the hold read afresh from the platform (409 if
    it was decided there), claims, edit rules, four eyes, the undo window, then delivery to the platform. 201:
    stored, to be delivered; 202: an approval was recorded and more are needed, nothing was sent. 409
    `possible-duplicate`: the approval of a possible duplicate of other holds, whose ids (those the token's user may
    see; `more_duplicates` counts the rest) the request must list in `duplicates_checked` once checked."""
    caller = _caller(request, tokens.DECIDE)
    body = payload.model_dump(mode="json")
    key = idempotency.read_key(idempotency_key)

    def work() -> HttpResponse:
        holds = decisions.with_latest_decision(Hold.objects.prefetch_related("items"))
        hold = _hold(caller, pk, holds)
        if fresh.refresh(hold):  # as the hold page's confirm: a hold decided or changed elsewhere is refused now
            hold = _hold(caller, pk, holds)
        decision_shown = None
        if if_match is not None:
            if if_match.strip() != shapes.etag(hold):
                raise problems.conflict(
                    "The hold changed or was decided since you read it; read it again.", "changed-meanwhile"
                )
            decision_shown = hold.latest_decision_id
        made = _submit(caller, hold, choices.read(hold, payload.items), decision_shown, payload.duplicates_checked)
        if isinstance(made, Approval):
            answer = {"state": "waiting", "decision": None, "waiting": shapes.waiting(made, hold), "links": {}}
            return api.create_response(request, _answer(answer), status=202)
        made = Decision.objects.select_related("reviewer").get(pk=made.pk)
        answer = {"state": "stored", "decision": shapes.decision_shape(made), "waiting": None}
        response = api.create_response(
            request, _answer(answer | {"links": {"decision": shapes.decision_url(made.pk)}}), status=201
        )
        response["Location"] = shapes.decision_url(made.pk)
        return response

    return idempotency.answer(request, caller.user, key, body, work)


def _answer(answer: dict) -> dict:
    return schemas.DecisionAnswer.model_validate(answer).model_dump(mode="json")


def _submit(caller: tokens.Caller, hold: Hold, chosen, decision_shown, duplicates_checked=None):
    try:
        return decisions.submit(
            hold,
            caller.user,
            chosen,
            decision_shown=decision_shown,
            channel=DecisionChannel.API,
            duplicates_checked=duplicates_checked,
        )
    except decisions.AlreadyDecided as decided:
        raise problems.conflict(
            decided.message, "already-decided", decision=shapes.decision_url(decided.decision.pk)
        ) from None
    except decisions.DecidedSince as since:
        raise problems.conflict(since.message, "changed-meanwhile") from None
    except decisions.PossibleDuplicate as duplicate:
        raise problems.conflict(
            duplicate.message,
            "possible-duplicate",
            duplicates=list(duplicate.seen.named),
            more_duplicates=duplicate.seen.more,
        ) from None
    except decisions.DecisionRefused as refused:
        raise problems.conflict(refused.message, "refused") from None


@api.get("/decisions/{int:pk}", response={200: schemas.DecisionOut, **ERRORS}, tags=["decisions"])
def get_decision(request, pk: int):
    """A decision and where its delivery stands: sending, applied, not applied (with the platform's reason), or
    withdrawn."""
    caller = _caller(request, tokens.READ)
    return shapes.decision_shape(_decision(caller, pk))


@api.post("/decisions/{int:pk}/undo", response={200: schemas.DecisionOut, **WRITE_ERRORS}, tags=["decisions"])
def undo_decision(request, pk: int, idempotency_key: str | None = KEY):
    """Withdraw one's own decision in its undo window: it is never sent, and the hold may be decided again."""
    caller = _caller(request, tokens.DECIDE)
    key = idempotency.read_key(idempotency_key)

    def work() -> HttpResponse:
        decision = _decision(caller, pk)
        try:
            withdrawn = decisions.withdraw(decision.pk, caller.user)
        except decisions.TooLateToUndo as late:
            raise problems.conflict(late.message, "too-late") from None
        except decisions.DecisionRefused as refused:
            raise problems.forbidden(refused.message) from None
        return api.create_response(request, _decision_json(withdrawn), status=200)

    return idempotency.answer(request, caller.user, key, {}, work)


@api.post("/approvals/{int:pk}/undo", response={200: schemas.ApprovalWithdrawn, **WRITE_ERRORS}, tags=["decisions"])
def undo_approval(request, pk: int, idempotency_key: str | None = KEY):
    """Take back one's own approval (the `approval` of a 202 answer) in its undo window, while no later approval or
    decision built on it: the round is one approval short again. Nothing had been sent for it."""
    caller = _caller(request, tokens.DECIDE)
    key = idempotency.read_key(idempotency_key)

    def work() -> HttpResponse:
        approval = _of_a_visible_hold(caller, Approval.objects.filter(pk=pk), "approval")
        if approval.approver_id != caller.user.pk:
            raise problems.forbidden("Only the person who gave an approval can take it back.")
        try:
            decisions.withdraw_approval(approval.pk, caller.user, timezone.now())
        except approving.NotCounted as late:
            raise problems.conflict(late.message, "too-late") from None
        answer = schemas.ApprovalWithdrawn(approval=approval.pk, hold=approval.hold_id).model_dump(mode="json")
        return api.create_response(request, answer, status=200)

    return idempotency.answer(request, caller.user, key, {}, work)


def _decision_json(decision: Decision) -> dict:
    decision = Decision.objects.select_related("reviewer").get(pk=decision.pk)
    return schemas.DecisionOut.model_validate(shapes.decision_shape(decision)).model_dump(mode="json")


# Assignment and notes


@api.get("/holds/{int:pk}/assignees", response={200: list[schemas.Assignee], **ERRORS}, tags=["assignment"])
def list_assignees(request, pk: int):
    """Who the hold may be assigned to: people and groups who can see it."""
    caller = _caller(request, tokens.READ)
    hold = _hold(caller, pk)
    return [
        {"kind": "group" if choice.is_group else "person", "name": choice.label}
        for choice in assignments.choices([hold], caller.viewer)
    ]


@api.post("/holds/{int:pk}/assignment", response={200: schemas.Assignment, **WRITE_ERRORS}, tags=["assignment"])
def assign(request, pk: int, payload: schemas.AssignIn, idempotency_key: str | None = KEY):
    """Assign the hold to a person (``user``) or a group (``group``) who can see it, with a note; reassigns it if it
    was assigned."""
    caller = _caller(request, tokens.DECIDE)
    key = idempotency.read_key(idempotency_key)

    def work() -> HttpResponse:
        hold = _hold(caller, pk, Hold.objects.select_related("claimed_by"))
        if (payload.user is None) == (payload.group is None):
            raise problems.bad_input([problems.field_error("user", "name either a user or a group")], status=422)
        field, name = ("user", payload.user) if payload.user is not None else ("group", payload.group)
        offered = assignments.choices([hold], caller.viewer)
        chosen = next((c for c in offered if c.label == name and c.is_group == (field == "group")), None)
        if chosen is None:
            raise problems.bad_input(
                [problems.field_error(field, "choose a person or a group who can see this hold")], status=422
            )
        try:
            made = assignments.assign(hold, chosen.assignee, assignments.read_note(payload.note), by=caller.user)
        except assignments.NotAssignable as refused:
            raise problems.conflict(refused.message, "refused") from None
        made = assignments.current(hold) or made
        return api.create_response(request, _assignment_json(made), status=200)

    return idempotency.answer(request, caller.user, key, payload.model_dump(mode="json"), work)


def _assignment_json(made) -> dict:
    return schemas.Assignment.model_validate(shapes.assignment(made)).model_dump(mode="json")


@api.delete("/holds/{int:pk}/assignment", response={204: None, **WRITE_ERRORS}, tags=["assignment"])
def unassign(request, pk: int, note: str = ""):
    """End the hold's assignment, with an optional note; nothing happens to a hold not assigned."""
    caller = _caller(request, tokens.DECIDE)
    hold = _hold(caller, pk)
    try:
        assignments.unassign(hold, caller.user, assignments.read_note(note))
    except assignments.NotAssignable as refused:
        raise problems.conflict(refused.message, "refused") from None
    return Status(204, None)


@api.post("/holds/{int:pk}/notes", response={201: schemas.Note, **WRITE_ERRORS}, tags=["notes"])
def add_note(request, pk: int, payload: schemas.NoteIn, idempotency_key: str | None = KEY):
    """Add a note to the hold's thread; @username tells that person, if they can see the hold."""
    caller = _caller(request, tokens.DECIDE)
    key = idempotency.read_key(idempotency_key)

    def work() -> HttpResponse:
        hold = _hold(caller, pk)
        note, _ = notes.add_note(hold, caller.user, notes.read_text(payload.text))
        shaped = schemas.Note.model_validate(shapes.note_shape(note)).model_dump(mode="json")
        return api.create_response(request, shaped, status=201)

    return idempotency.answer(request, caller.user, key, payload.model_dump(mode="json"), work)


# The audit


class AuditFilters(Schema):
    """The audit list's filters."""

    view: Literal["", "decisions", "all"] = ""
    since: str = ""
    until: str = ""
    kind: Literal[("",) + tuple(EventKind.values)] = ""  # type: ignore[valid-type]
    reviewer: str = ""
    agent: str = ""
    action: Literal["", "approve", "edit", "reject"] = ""
    outcome: str = ""
    hold: str = ""
    run: str = ""
    item: str = ""
    q: str = ""
    quick: Literal["", "1"] = ""
    after: str = ""


@api.get("/audit/events", response={200: schemas.AuditPage, **ERRORS}, tags=["audit"])
def list_audit_events(request, filters: Query[AuditFilters]):
    """The audit trail, newest first, 50 a page, with the audit list's filters (decisions only unless view=all)."""
    _caller(request, tokens.AUDIT)
    query = filters.model_dump()
    chosen = queries.Filters.from_query(query)
    events, after = queries.page(queries.filtered(chosen).select_related("actor"), query["after"])
    names = describe.recipient_names(events)
    next_page = None
    if after:
        next_page = f"{request.path}?{urlencode({**{k: v for k, v in query.items() if v}, 'after': after})}"
    return {"events": [shapes.audit_event(event, names) for event in events], "next": next_page}


@api.get(
    "/audit/events.csv",
    response=ERRORS,
    tags=["audit"],
    openapi_extra={"responses": {"200": {"description": "The events as CSV", "content": {"text/csv": {}}}}},
)
def export_audit_events(request, filters: Query[AuditFilters]):
    """The audit export as CSV, every event unless view=decisions, with the audit list's filters."""
    _caller(request, tokens.AUDIT)
    query = filters.model_dump()
    chosen = queries.Filters.from_query(query, default_view=queries.ALL_EVENTS)
    response = StreamingHttpResponse(export.lines(chosen), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="audit-{timezone.localtime():%Y%m%d-%H%M%S}.csv"'
    return response
