"""The API's answers built from the models, as plain dicts of ``api.schemas``' shapes.

Agent JSON (item data, the run, an edit's data, an audit payload) is shown ``nested_within`` the API's depth: a
stored value of any depth is answered, its deeper part replaced by a marker.
"""

from __future__ import annotations

from datetime import datetime

from django.urls import reverse

from approvals import chains, rounds
from approvals.models import Approval
from audit import describe, payloads
from holds.deciding import decidable
from holds.handover import assignments, notes
from holds.models import Decision, Hold
from holds.queue import display
from holds.related import duplicates, related
from people import naming
from reviewqueue.showing import nested_within
from reviewqueue.viewer import Viewer


def person(user) -> dict:
    return {"username": user.get_username(), "name": naming.name(user)}


def hold_url(pk: int) -> str:
    return reverse("api-v1:get_hold", kwargs={"pk": pk})


def decision_url(pk: int) -> str:
    return reverse("api-v1:get_decision", kwargs={"pk": pk})


def summary(listed, hold: Hold, badge, now: datetime) -> dict:
    """A queue row (``listing.Listed``) with its hold (items prefetched) and approval badge (``badges.Badge``)."""
    claim = None
    if listed.claimed_by_id and listed.claim_expires_at and listed.claim_expires_at > now:
        claim = {"by": person(hold.claimed_by), "until": listed.claim_expires_at}
    return {
        "id": listed.pk,
        "hold_id": listed.hold_id,
        "env": listed.env,
        "agent": listed.agent,
        "capability": listed.capability,
        "question": hold.question,
        "created_at": listed.created_at,
        "expires_at": listed.expires_at,
        "amount": None if listed.amount is None else f"{listed.amount.normalize():f}",
        "amounts": display.amounts(hold),
        "approvals": {
            "badge": badge.words if badge else "",
            "why": badge.why if badge else "",
            "given": listed.open_approvals,
        },
        "claim": claim,
        "assigned_to": listed.assigned_to or None,
        "url": hold_url(listed.pk),
    }


def detail(hold: Hold, viewer: Viewer, now: datetime, run: dict | None, run_error: str) -> dict:
    """Everything the hold page shows of ``hold`` (read ``decisions.with_latest_decision``, items prefetched), with
    its run as ``runs.run_context`` gave it."""
    decision = hold.latest_decision()
    closed = decidable.closed_reason(hold, now)
    can_decide = not closed and (decision is None or decision.state in Decision.NOT_LIVE)
    standing = rounds.standing(hold)
    claimant = hold.claimant(now)
    current = assignments.current(hold) if can_decide else None
    amount = hold.amount
    return {
        "id": hold.pk,
        "hold_id": hold.hold_id,
        "env": hold.env,
        "agent": hold.agent,
        "capability": hold.capability,
        "question": hold.question,
        "created_at": hold.created_at,
        "expires_at": hold.expires_at,
        "amount": None if amount is None else f"{amount.normalize():f}",
        "amounts": display.amounts(hold),
        "approvals": {"badge": standing.badge, "why": _why(standing), "given": len(standing.approvals)},
        "claim": {"by": person(claimant), "until": hold.claim_expires_at} if claimant else None,
        "assigned_to": assignments.label(current) if current else None,
        "url": hold_url(hold.pk),
        "status": hold.status,
        "run_id": hold.run_id,
        "intent": hold.intent,
        "details": hold.details,
        "actions": [action for action in hold.actions if isinstance(action, str)],
        "items": [
            {"id": item.item_id, "title": item.title, "data": nested_within(item.data)} for item in hold.items.all()
        ],
        "files": [_file(file) for file in hold.files if isinstance(file, dict)],
        "run": nested_within(run) if isinstance(run, dict) else None,
        "run_error": run_error,
        "closed_reason": closed,
        "standing": {
            "required": standing.required,
            "given": len(standing.approvals),
            "badge": standing.badge,
            "summary": standing.summary,
            "may_approve": not standing.refusal_for(viewer),
            "refusal": standing.refusal_for(viewer),
        },
        "stages": stages_shape(standing),
        "assignment": assignment(current) if current else None,
        "notes": [note_shape(note) for note in notes.thread(hold)],
        "decision": decision_shape(decision) if decision else None,
        "etag": etag(hold),
        **related_shapes(hold, viewer, now),
    }


def related_shapes(hold: Hold, viewer: Viewer, now: datetime) -> dict:
    """The holds related to ``hold`` that ``viewer`` may see (``holds.related.related.visible_related``), and the
    ids of the possible duplicates among them."""
    found = related.visible_related(hold, viewer, now=now)
    duplicate_of = [duplicate.hold.pk for duplicate in duplicates.duplicates_among(found)]
    return {
        "related": [
            {
                "id": other.hold.pk,
                "hold_id": other.hold.hold_id,
                "agent": other.hold.agent,
                "capability": other.hold.capability,
                "status": other.hold.status,
                "amount": None if other.amount is None else f"{other.amount.normalize():f}",
                "items": [{"id": item.item_id, "title": item.title} for item in other.hold.items.all()],
                "shares": [{"key": shared.key, "value": shared.shown} for shared in other.shared],
                "decided_by": other.decided_by,
                "decided_at": other.decided_at,
                "reported": other.reported,
                "possible_duplicate": other.hold.pk in duplicate_of,
                "url": hold_url(other.hold.pk),
            }
            for other in found
        ],
        "possible_duplicate_of": duplicate_of,
    }


def stages_shape(standing: rounds.Standing) -> list[dict]:
    """The hold's approval chain, stage by stage (``approvals.chains``), with its open round's approvals in each."""
    return [
        {
            "position": state.stage.position,
            "group": state.stage.group.name if state.stage.group is not None else None,
            "quorum": "all" if state.stage.approvals is None else state.stage.approvals,
            "needs": state.needs,
            "with_previous": state.stage.with_previous,
            "approvals": [{"by": one.approver.get_username(), "at": one.created_at} for one in state.approvals],
            "state": state.state,
        }
        for state in standing.states
    ]


def _why(standing: rounds.Standing) -> str:
    return standing.requirement.why if standing.requirement and standing.required > 1 else ""


def _file(file: dict) -> dict:
    return {key: file.get(key) if isinstance(file.get(key), str) else None for key in ("id", "name", "content_type")}


def etag(hold: Hold) -> str:
    """What names the hold as the reader saw it: its content (``payload_digest``) and its latest decision (the hold
    read ``decisions.with_latest_decision``)."""
    return f'"{hold.payload_digest[:16]}.{hold.latest_decision_id}"'


def decision_shape(decision: Decision) -> dict:
    return {
        "id": decision.pk,
        "hold": decision.hold_id,
        "state": decision.state,
        "outcome": decision.outcome,
        "outcome_message": decision.outcome_message,
        "decided_by": decision.reviewer.get_username() if decision.reviewer_id else decision.decided_by_policy,
        "created_at": decision.created_at,
        "undo_until": decision.undo_until,
        "undoable": decision.undoable,
        "attempts": decision.attempts,
        "finished_at": decision.finished_at,
        "items": [
            {"id": item.item_id, "action": item.action, "data": nested_within(item.data), "comment": item.comment}
            for item in decision.items.all()
        ],
        "url": decision_url(decision.pk),
    }


def waiting(approval: Approval, hold: Hold) -> dict:
    awaited = rounds.standing(hold).awaited
    return {
        "approval": approval.pk,
        "position": approval.position,
        "required": approval.approvals_required,
        "next_from": f"a member of {awaited}" if awaited and awaited != chains.ANY_REVIEWER else "another reviewer",
    }


def assignment(current) -> dict:
    return {
        "assignee": assignments.label(current),
        "kind": "person" if current.user_id else "group",
        "note": current.note,
        "assigned_by": current.assigned_by.get_username() if current.assigned_by else None,
        "assigned_at": current.assigned_at,
    }


def note_shape(note) -> dict:
    return {"id": note.pk, "author": note.author.get_username(), "text": note.text, "created_at": note.created_at}


def audit_event(event, names: dict[str, str]) -> dict:
    return {
        "sequence": event.sequence,
        "at": event.at,
        "kind": event.kind,
        "actor": event.actor_label,
        "env": event.env,
        "hold_id": event.hold_id,
        "run_id": event.run_id,
        "agent": event.agent,
        "decision_id": event.decision_id,
        "item_ids": [str(item) for item in event.item_ids],
        "actions": event.actions,
        "outcome": event.outcome,
        "summary": describe.summary(event, names),
        "channel": payloads.channel_of(event.payload or {}),
        "payload": nested_within(event.payload) if isinstance(event.payload, dict) else {},
        "hash": event.hash,
    }
