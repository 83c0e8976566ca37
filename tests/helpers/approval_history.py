"""Approvals and decisions written as the approval flow writes them, so audit and statistics tests read a history."""

from approvals.models import Approval
from audit import events
from audit.models import EventKind
from holds.mirror import sync
from holds.models import Decision, DecisionItem, Hold

ASKED = {"order_id": "A-1", "amount": "1200.00"}


def add_refunds(platform_client, platform_state, hold_ids) -> list[Hold]:
    for hold_id in hold_ids:
        platform_state.add_hold(
            "default",
            {
                "hold_id": hold_id,
                "items": [{"id": "A-1", "title": "refund", "data": dict(ASKED)}],
            },
        )
    sync.sync_env(platform_client, "default")
    return [Hold.objects.get(hold_id=hold_id) for hold_id in hold_ids]


def edit_to(amount: str) -> list[dict]:
    return [
        {"item_id": "A-1", "action": "edit", "original_data": ASKED, "data": {**ASKED, "amount": amount}, "comment": ""}
    ]


def rejected() -> list[dict]:
    return [{"item_id": "A-1", "action": "reject", "original_data": ASKED, "data": None, "comment": "too much"}]


def approve(hold, policy, approver, at, items, round=1, position=1, decision=None) -> Approval:
    """An approval as the flow stores it, with its audit event."""
    approval = Approval.objects.create(
        hold=hold,
        policy=policy,
        policy_name=policy.name,
        approvals_required=policy.approvals_required,
        approver=approver,
        round=round,
        position=position,
        created_at=at,
        items=items,
        decision=decision,
    )
    events.record(
        EventKind.APPROVAL_GIVEN,
        actor=approver,
        hold=hold,
        payload={
            "approval": approval.pk,
            "policy": policy.name,
            "round": round,
            "position": position,
            "required": policy.approvals_required,
            "restarted": round > 1 and position == 1,
            "items": [{"id": item["item_id"], **{k: v for k, v in item.items() if k != "item_id"}} for item in items],
        },
    )
    return approval


def decide(hold, reviewer, at, items) -> Decision:
    """The decision a round led to (or a later approver's rejection), applied by the platform."""
    decision = Decision.objects.create(
        hold=hold,
        reviewer=reviewer,
        created_at=at,
        next_attempt_at=at,
        state="applied",
        outcome="applied",
        finished_at=at,
    )
    for position, item in enumerate(items):
        DecisionItem.objects.create(
            decision=decision,
            position=position,
            item_id=item["item_id"],
            action=item["action"],
            original_data=item["original_data"],
            data=item["data"],
            comment=item["comment"],
        )
    events.record(EventKind.DECISION_SUBMITTED, actor=reviewer, hold=hold, decision=decision, payload={"items": []})
    return decision


def link(decision, *approvals):
    Approval.objects.filter(pk__in=[approval.pk for approval in approvals]).update(decision=decision)


def raise_on_the_platform(platform_state, platform_client, hold, amount):
    """The agent asks again with another amount: the platform changes the hold, and sync mirrors it."""
    changed = platform_state.get_hold("default", hold.hold_id)
    changed["items"] = [{**changed["items"][0], "data": {"order_id": "A-9001", "amount": amount}}]
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(pk=hold.pk)


def mirrored(platform_state, platform_client, hold_id: str, **data) -> Hold:
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "question": "Refund?",
            "items": [{"id": "call_1", "title": "Refund A-1", "data": {"order_id": "A-1", **data}}],
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id=hold_id)
