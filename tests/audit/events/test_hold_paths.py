"""A hold's code paths call ``audit.events`` themselves: sync, claims, assignments and notes, expiry, escalation and
notifications. Each test drives the real path and reads the trail."""

import socket
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds import lifecycle
from holds.handover import assignments, notes
from holds.mirror import sync
from holds.models import Hold
from holds.sweeps import expiry
from notifications import sending
from notifications.models import Notification, WebhookChannel
from tests.helpers.audit_trail import only, trail
from tests.helpers.users import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def test_sync_records_each_new_hold_once_with_its_items(samples):
    hold = samples["h_13"]
    events = trail(EventKind.HOLD_SEEN)

    assert len(events) == len(samples)
    event = only(EventKind.HOLD_SEEN, hold_id="h_13")
    assert (event.env, event.run_id, event.agent, event.actor) == ("default", hold.run_id, hold.agent, None)
    assert event.item_ids == ["toolu_01A9xQ2mZ", "toolu_01B7kR4pW"]


def test_a_second_sync_records_no_hold_again(samples, platform_client):
    sync.sync_env(platform_client, "default")

    assert len(trail(EventKind.HOLD_SEEN)) == len(samples)


def test_claiming_taking_over_and_releasing_are_recorded(samples, alice, bob):
    hold = samples["h_12"]

    lifecycle.claim(hold, alice)
    lifecycle.take_over(hold, bob)
    lifecycle.release_claim(hold, bob)

    assert [
        (e.kind, e.actor_name)
        for e in AuditEvent.objects.filter(hold_id="h_12").exclude(kind="hold_seen").order_by("sequence")
    ] == [
        ("claimed", "alice"),
        ("taken_over", "bob"),
        ("released", "bob"),
    ]


def test_assigning_reassigning_unassigning_and_each_note_are_recorded_with_their_text(samples, alice, bob):
    hold = samples["h_12"]
    assignments.assign(hold, bob, "Check the order", by=alice)
    assignments.assign(hold, alice, "", by=bob)
    assignments.unassign(hold, alice, "Done")
    notes.add_note(hold, alice, "@bob the refund is fine")

    assert only(EventKind.ASSIGNED).payload == {"assignee": "bob", "assignee_kind": "person", "note": "Check the order"}
    assert only(EventKind.REASSIGNED).payload == {
        "assignee": "alice",
        "assignee_kind": "person",
        "note": "",
        "from": "bob",
    }
    assert (only(EventKind.UNASSIGNED).actor, only(EventKind.UNASSIGNED).payload) == (
        alice,
        {"from": "alice", "note": "Done"},
    )
    assert only(EventKind.NOTE_ADDED).payload["text"] == "@bob the refund is fine"
    assert only(EventKind.NOTE_ADDED).payload["told"] == ["bob"]


def test_sync_records_a_hold_decided_elsewhere(samples, platform_client, platform_state):
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    sync.sync_env(platform_client, "default")

    event = only(EventKind.DECIDED_ELSEWHERE, hold_id="h_12")
    assert "bob@example.com" in str(event.payload)


def test_sync_records_a_hold_the_platform_expired(samples, platform_client, platform_state):
    platform_state.expire("default", "h_12")

    sync.sync_env(platform_client, "default")

    assert only(EventKind.EXPIRED, hold_id="h_12").actor is None


def test_the_expiry_sweep_records_each_hold_it_expires(samples):
    hold = samples["h_12"]

    expire_undecided(hold)
    expiry.sweep()

    assert only(EventKind.EXPIRED, hold_id="h_12").hold_record_id == hold.pk


def expire_undecided(hold) -> None:
    """Let the expiry sweep close ``hold``: it tells the auditors (and subscribed webhooks) it expired undecided."""
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() + timedelta(minutes=1))
    with time_machine.travel(timezone.now() + timedelta(minutes=2)):
        expiry.sweep()


def test_a_sent_notification_is_recorded(samples, audrey, mailoutbox):
    expire_undecided(samples["h_12"])
    email = Notification.objects.get(event="expired", hold=samples["h_12"], channel=Notification.Channel.EMAIL)

    sending.send(email.pk)

    assert Notification.objects.get(pk=email.pk).status == Notification.Status.SENT
    assert only(EventKind.NOTIFICATION_SENT).hold_id == "h_12"


def test_a_failed_notification_is_recorded_with_the_error(samples, settings):
    settings.NOTIFY_RETRY_LIMIT = 1
    with socket.socket() as probe:  # a port nothing listens on: the webhook cannot be reached
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    WebhookChannel.objects.create(name="ops", url=f"http://127.0.0.1:{closed}/hook", secret="x", events=["expired"])
    expire_undecided(samples["h_12"])
    webhook = Notification.objects.get(event="expired", hold=samples["h_12"], channel=Notification.Channel.WEBHOOK)

    sending.send(webhook.pk)

    assert Notification.objects.get(pk=webhook.pk).status == Notification.Status.FAILED
    assert only(EventKind.NOTIFICATION_FAILED).hold_id == "h_12"


def test_the_escalation_sweep_records_each_escalation_with_its_policy_group_reason_and_who_was_told(samples):
    from approvals import escalation
    from approvals.models import ApprovalPolicy

    leads = Group.objects.create(name="Finance leads")
    make_user("fiona", "Finance leads")
    ApprovalPolicy.objects.create(
        name="Waiting h_12",
        env_pattern="default",
        agent_pattern=samples["h_12"].agent,
        approvals_required=2,
        escalate_after_minutes=30,
        escalation_group=leads,
    )
    Hold.objects.exclude(pk=samples["h_12"].pk).update(status=Hold.Status.DECIDED)

    with time_machine.travel(samples["h_12"].first_seen_at + timedelta(minutes=31), tick=False):
        [made] = escalation.sweep()

    event = only(EventKind.ESCALATED)
    assert (event.actor, event.hold_id, event.decision) == (None, "h_12", None)
    assert event.payload == {
        "escalation": made.pk,
        "stage": 1,
        "policy": "Waiting h_12",
        "group": "Finance leads",
        "reason": "not claimed for 30 minutes",
        "told": ["fiona"],
    }
