"""The events of deciding a hold: decisions submitted and withdrawn, approvals given and taken back, escalations,
and the delivery of a decision to the platform.

One keyword-only builder per kind, named as the kind; each returns the ``Entry`` that
``audit.events`` appends. ``channel`` is where a decision or an approval came from
(``holds.models.DecisionChannel``).
"""

from __future__ import annotations

from collections.abc import Iterable

from audit.events import Entry
from audit.models import EventKind
from audit.payloads import decision_items


def decision_submitted(
    *,
    actor,
    hold,
    decision,
    channel: str,
    target_minutes: int | None = None,
    approvals: Iterable = (),
    policy=None,
    duplicates_checked: dict | None = None,
) -> Entry:
    """``decision`` stored for ``hold``, with its items; the round of ``approvals`` that made it, if any; the hold's
    policy's target in minutes, when it has one; the deciding ``policy`` (``holds.deciding.decisions
    .PolicyDecider``) when a policy decided by itself, or a reviewer's remembered approval did; and, when it approves
    a possible duplicate, ``duplicates_checked``: the ids of the other holds the reviewer confirmed they checked
    (``holds``) and how many more, outside their teams, there were (``more``)."""
    payload = {"items": decision_items(decision), "channel": channel}
    if target_minutes:
        payload["target_minutes"] = target_minutes
    if approvals := list(approvals):
        payload["approvals"] = [
            {"approval": one.pk, "approver": one.approver.get_username(), "at": one.created_at.isoformat()}
            for one in approvals
        ]
    if policy:
        payload["policy"] = {"name": policy.name, "last_changed_by": policy.changed_by, "kind": policy.kind}
        if policy.remembered_by:
            payload["policy"]["remembered_by"] = policy.remembered_by
    if duplicates_checked is not None:
        payload["duplicates_checked"] = _checked(duplicates_checked)
    return Entry(EventKind.DECISION_SUBMITTED, actor=actor, hold=hold, decision=decision, payload=payload)


def held_for_people(*, hold, path: str, policy_name: str, reason: str, duplicates: Iterable[str]) -> Entry:
    """A path needing fewer people (``path``: a 0-people policy, a remembered approval, a default approve) that would
    have approved ``hold`` and left it to people instead, for ``reason`` (an ``approvals.policies.HeldBack``):
    ``duplicates``, the ids of the holds it may duplicate."""
    payload = {"path": path, "policy": policy_name, "reason": reason, "duplicates": list(duplicates)}
    return Entry(EventKind.HELD_FOR_PEOPLE, hold=hold, payload=payload)


def withdrawn(*, actor, hold, decision, approval_withdrawn=None) -> Entry:
    """``decision`` undone in its window, never sent; ``approval_withdrawn``: the approval the undo took back."""
    payload = {"items": decision_items(decision)}
    if approval_withdrawn is not None:
        payload["approval_withdrawn"] = approval_withdrawn.pk
    return Entry(EventKind.WITHDRAWN, actor=actor, hold=hold, decision=decision, payload=payload)


def approval_given(
    *,
    actor,
    hold,
    approval,
    required: int,
    restarted: bool,
    channel: str,
    why: str = "",
    duplicates_checked: dict | None = None,
    stage: str = "",
) -> Entry:
    """``approval`` counted towards ``required``; ``restarted``: it changed the earlier round's decision; ``why``: why
    the policy asks for ``required`` people ("refund on A-1001 total 109.90 in 30 days, over 100");
    ``duplicates_checked``: as ``decision_submitted``'s, when the approval approves a possible duplicate; ``stage``:
    where it counted in the policy's chain ("stage 2 of 3 (Finance), 1 of 2"), for a policy with stages."""
    payload = _approval(approval, approval.pk) | {"required": required, "restarted": restarted, "channel": channel}
    if why:
        payload["why"] = why
    if stage:
        payload["stage"] = stage
    if duplicates_checked is not None:
        payload["duplicates_checked"] = _checked(duplicates_checked)
    return Entry(EventKind.APPROVAL_GIVEN, actor=actor, hold=hold, payload=payload)


def stage_completed(*, actor, hold, state, stages: int, policy: str, waited) -> Entry:
    """A stage of the hold's chain (``approvals.chains.StageState``, one of ``stages``, of ``policy``) has its people:
    ``actor``'s approval completed it, ``waited`` (a timedelta) after the stage opened."""
    payload = {
        "policy": policy,
        "stage": state.stage.position,
        "stages": stages,
        "who": state.stage.who,
        "needs": state.needs,
        "approvers": [approval.approver.get_username() for approval in state.approvals],
        "round": state.approvals[-1].round,
        "waited_seconds": round(max(waited.total_seconds(), 0), 3),
    }
    return Entry(EventKind.STAGE_COMPLETED, actor=actor, hold=hold, payload=payload)


def approval_withdrawn(*, actor, hold, approval, approval_id: int) -> Entry:
    """``approval`` (deleted: ``approval_id`` was its pk) taken back by its approver before anyone built on it."""
    payload = _approval(approval, approval_id) | {"required": approval.approvals_required}
    return Entry(EventKind.APPROVAL_WITHDRAWN, actor=actor, hold=hold, payload=payload)


def _checked(duplicates_checked: dict) -> dict:
    return {"holds": list(duplicates_checked["holds"]), "more": duplicates_checked["more"]}


def _approval(approval, approval_id: int) -> dict:
    return {
        "approval": approval_id,
        "policy": approval.policy_name,
        "round": approval.round,
        "position": approval.position,
        "items": [_approval_item(item) for item in approval.items],
    }


def _approval_item(item: dict) -> dict:
    """An approval's item as ``decision_items`` shapes a decision's."""
    return {
        "id": item.get("item_id"),
        "action": item.get("action"),
        "original_data": item.get("original_data"),
        "data": item.get("data"),
        "comment": item.get("comment"),
    }


def escalated(*, escalation, told: Iterable) -> Entry:
    """``escalation`` made, and the members of its group who could see the hold and were ``told``."""
    payload = {
        "escalation": escalation.pk,
        "stage": escalation.stage,
        "policy": escalation.policy.name,
        "group": escalation.group_name,
        "reason": escalation.reason,
        "told": [person.get_username() for person in told],
    }
    return Entry(EventKind.ESCALATED, hold=escalation.hold, payload=payload)


def delivery_attempt(*, decision, attempt: int, outcome: str, message: str) -> Entry:
    """One attempt to deliver ``decision``: "retry", or the final outcome's code (``Decision.Outcome``)."""
    payload = {"attempt": attempt, "outcome": outcome, "message": message}
    return Entry(EventKind.DELIVERY_ATTEMPT, hold=decision.hold, decision=decision, payload=payload)


def applied(*, decision, outcome: str, message: str) -> Entry:
    """The platform applied ``decision``, saying ``message``."""
    return Entry(EventKind.APPLIED, hold=decision.hold, decision=decision, payload=_result(outcome, message))


def not_applied(*, decision, outcome: str, message: str) -> Entry:
    """``decision`` was not applied: the platform's ``message``, or who decided instead."""
    return Entry(EventKind.NOT_APPLIED, hold=decision.hold, decision=decision, payload=_result(outcome, message))


def _result(outcome: str, message: str) -> dict:
    return {"outcome": outcome, "message": message}
