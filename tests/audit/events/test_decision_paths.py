"""A decision's code paths call ``audit.events`` themselves: submitted, approved short of its count, refused, undone,
and each delivery to the platform. Each test drives the real path and reads the trail."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from audit import describe
from audit.models import EventKind
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from tests.helpers.audit_trail import only, trail
from tests.helpers.duplicates import every_duplicate

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def test_a_submitted_decision_records_each_items_action_original_and_submitted_data_and_comment(samples, alice):
    hold = samples["h_13"]
    edited = {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}

    decision = decisions.submit(
        hold,
        alice,
        [
            ItemChoice("toolu_01A9xQ2mZ", "approve"),
            ItemChoice("toolu_01B7kR4pW", "edit", edited, "partial refund"),
        ],
        duplicates_checked=every_duplicate(hold),
    )

    event = only(EventKind.DECISION_SUBMITTED)
    assert (event.actor, event.decision, event.hold_id) == (alice, decision, "h_13")
    assert event.actions == "approve edit"
    first, second = event.payload["items"]
    assert first["id"] == "toolu_01A9xQ2mZ" and first["action"] == "approve"
    assert second["original_data"]["amount"] == "129.00" and second["data"] == edited
    assert second["comment"] == "partial refund"


def test_an_approval_short_of_its_policys_count_records_approval_given_and_sends_nothing(samples, alice):
    from approvals.models import ApprovalPolicy

    ApprovalPolicy.objects.create(name="Two for h_12", env_pattern="default", approvals_required=2)
    hold = samples["h_12"]

    approval = decisions.submit(
        hold, alice, [ItemChoice("A-1001", "approve", comment="fine")], duplicates_checked=every_duplicate(hold)
    )

    event = only(EventKind.APPROVAL_GIVEN)
    assert (event.actor, event.hold_id, event.decision, event.actions) == (alice, "h_12", None, "approve")
    assert event.payload | {"items": None} == {
        "approval": approval.pk,
        "policy": "Two for h_12",
        "round": 1,
        "position": 1,
        "required": 2,
        "restarted": False,
        "items": None,
        "channel": "page",
        "why": "policy “Two for h_12”",
        "duplicates_checked": {"holds": ["h_13", "h_14", "h_15"], "more": 0},
    }
    assert event.payload["items"][0]["id"] == "A-1001" and event.payload["items"][0]["comment"] == "fine"
    assert trail(EventKind.DECISION_SUBMITTED) == []


def test_a_refused_decision_records_nothing(samples, alice, bob):
    hold = samples["h_12"]
    decisions.submit(hold, alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(hold))

    with pytest.raises(decisions.AlreadyDecided):
        decisions.submit(hold, bob, [ItemChoice("A-1001", "reject")])

    assert only(EventKind.DECISION_SUBMITTED).actor == alice


def test_an_undone_decision_records_withdrawn_with_what_was_never_sent(samples, alice, settings):
    settings.UNDO_SECONDS = 10
    decision = decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )

    decisions.withdraw(decision.pk, alice)

    event = only(EventKind.WITHDRAWN, decision=decision)
    assert (event.actor, event.hold_id, event.actions) == (alice, "h_12", "approve")
    summary = describe.summary(event)
    assert summary.startswith("undone before sending, nothing reached the platform: ") and "A-1001" in summary


def test_an_applied_delivery_records_the_attempt_and_the_outcome(samples, alice, platform_client):
    decision = decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )

    delivery.deliver(decision.pk, platform_client)

    attempt = only(EventKind.DELIVERY_ATTEMPT, decision=decision)
    assert attempt.outcome == "applied" and attempt.actor is None
    assert only(EventKind.APPLIED, decision=decision).hold_id == "h_12"


def test_a_delivery_retried_then_applied_records_both_attempts(samples, alice, platform_client, platform_state):
    decision = decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )
    platform_state.push_faults([{"status": 503, "path_contains": "/decision"}])

    delay = delivery.deliver(decision.pk, platform_client)
    with time_machine.travel(timezone.now() + timedelta(seconds=delay)):
        delivery.deliver(decision.pk, platform_client)

    assert [event.outcome for event in trail(EventKind.DELIVERY_ATTEMPT, decision=decision)] == ["retry", "applied"]


def test_decided_elsewhere_records_not_applied_with_who_decided_instead(
    samples, alice, platform_client, platform_state
):
    decision = decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    delivery.deliver(decision.pk, platform_client)

    event = only(EventKind.NOT_APPLIED, decision=decision)
    assert event.outcome == "decided_elsewhere"
    assert "bob@example.com" in event.payload["message"]


def test_an_approval_taken_back_records_approval_withdrawn_without_a_decision(samples, alice, settings):
    from approvals.models import ApprovalPolicy

    settings.UNDO_SECONDS = 10
    ApprovalPolicy.objects.create(name="Two for h_12", env_pattern="default", approvals_required=2)
    approval = decisions.submit(
        samples["h_12"],
        alice,
        [ItemChoice("A-1001", "approve", comment="fine")],
        duplicates_checked=every_duplicate(samples["h_12"]),
    )

    decisions.withdraw_approval(approval.pk, alice, timezone.now())

    event = only(EventKind.APPROVAL_WITHDRAWN)
    assert (event.actor, event.hold_id, event.decision, event.actions) == (alice, "h_12", None, "approve")
    assert event.payload | {"items": None} == {
        "approval": approval.pk,
        "policy": "Two for h_12",
        "round": 1,
        "position": 1,
        "required": 2,
        "items": None,
    }
    assert describe.summary(event).startswith("alice took back approval 1 of 2 under “Two for h_12”")
    assert trail(EventKind.WITHDRAWN) == []


def test_a_policy_that_would_approve_a_possible_duplicate_records_held_for_people_once(samples):
    """The 0-people policy's sweep leaves a possible duplicate (the A-1001 refunds) to people, and says so once."""
    from decimal import Decimal

    from approvals.models import ApprovalPolicy
    from holds.deciding import by_policy

    ApprovalPolicy.objects.create(
        name="small",
        condition_key="amount",
        condition_operator="lte",
        condition_threshold=Decimal(50),
        approvals_required=0,
        auto_wait_minutes=0,
    )
    by_policy.approve_due(timezone.now() + timedelta(minutes=1))
    by_policy.approve_due(timezone.now() + timedelta(minutes=2))

    events = trail(EventKind.HELD_FOR_PEOPLE)
    assert sorted(event.hold_id for event in events) == ["h_12", "h_14", "h_15"]
    assert describe.summary(events[0]).startswith("‘small’ (0-people policy) left it to people: possible duplicate of")


def test_an_approval_completing_a_stage_of_a_chain_records_stage_completed(refund):
    from tests.helpers.chains import chain_policy, member

    chain_policy([("Support leads", 1, False), ("Finance", 1, False)])
    sam, fay = member("sam", "Support leads"), member("fay", "Finance")
    choices = [ItemChoice("call_1", "approve")]

    decisions.submit(refund, sam, choices, duplicates_checked=every_duplicate(refund))

    event = only(EventKind.STAGE_COMPLETED)
    assert (event.actor, event.hold_id, event.decision) == (sam, "h_big", None)
    assert event.payload | {"waited_seconds": None} == {
        "policy": "large refunds",
        "stage": 1,
        "stages": 2,
        "who": "Support leads",
        "needs": 1,
        "approvers": ["sam"],
        "round": 1,
        "waited_seconds": None,
    }
    assert 0 <= event.payload["waited_seconds"] < 60  # since the hold reached the queue, moments ago
    assert describe.summary(event) == "stage 1 of 2 (Support leads) complete: 1 of 1, by sam"
    given = only(EventKind.APPROVAL_GIVEN)
    assert given.payload["stage"] == "stage 1 of 2 (Support leads), 1 of 1"
    assert describe.summary(given).startswith("sam gave approval 1 of 2, stage 1 of 2 (Support leads), 1 of 1")
    assert fay.pk and trail(EventKind.DECISION_SUBMITTED) == []
