"""Who hears of an assignment, on each channel; how it ends with its hold; and the queue's filter, label and n."""

import json
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.urls import reverse

from holds.deciding import decisions
from holds.handover import assignments, notes
from holds.models import Hold
from holds.sweeps import expiry
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from tests.helpers.approvals_setup import signed_in
from tests.helpers.handoff import Channel, Event, approve_all, listed, queue_page, told
from tests.helpers.users import add_hold
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db


# Telling the assignee, by each channel


@pytest.mark.django_db(transaction=True)
def test_the_assignee_hears_of_it_in_the_bell_by_email_and_through_a_webhook(
    celery_processes,
    smtp_server,
    webhook_receiver,
    settings,
    alice,
    bob,
    billing,
):
    controller, inbox = smtp_server
    WebhookChannel.objects.create(name="chat", url=webhook_receiver.url, secret="s", events=["assigned"])
    celery_processes(
        "worker",
        EMAIL_BACKEND="smtp",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(controller.port),
        SITE_URL="https://review.example.com",
    )
    settings.SITE_URL = "https://review.example.com"

    assignments.assign(billing, bob, "Please check the customer's history", by=alice)

    wait_until(lambda: inbox and webhook_receiver.received)
    link = f"https://review.example.com/holds/{billing.pk}/"
    mail = inbox[0]
    text = (
        next(part for part in mail.walk() if part.get_content_type() == "text/plain").get_payload(decode=True).decode()
    )
    assert mail["To"] == "bob@example.com"
    assert " ".join(mail["Subject"].split()).startswith("[Review Queue] Assigned to bob by Alice Adams:")
    assert "Please check the customer's history" in text and f"Open the hold: {link}" in text
    webhook = json.loads(webhook_receiver.received[0][1])
    assert webhook["event"] == "assigned" and "Assigned to bob" in webhook["text"]
    assert "Notifications: 1 unread" in signed_in(bob).get(reverse("notification-bell")).content.decode()


def test_the_assignee_may_turn_the_email_off_in_their_preferences(alice, bob, billing):
    signed_in(bob).post(reverse("notification-preferences"), {"assigned": ["in_app"]})

    assignments.assign(billing, bob, "", by=alice)

    assert [n.channel for n in told(Event.ASSIGNED, bob)] == [Channel.IN_APP]


# The assignment ends with the hold


def test_a_decision_ends_the_assignment_and_resolves_its_messages_and_an_undo_brings_both_back(
    alice, bob, billing, settings
):
    settings.UNDO_SECONDS = 10
    assignments.assign(billing, bob, "", by=alice)
    notes.add_note(billing, alice, "@bob have a look")
    bob_client = signed_in(bob)

    decision = decisions.submit(billing, alice, approve_all(billing))

    assert billing.pk not in listed(bob_client, "?assigned=me")
    assert all(n.resolved_at for n in Notification.objects.filter(user=bob))
    assert "Notifications: 0 unread" in bob_client.get(reverse("notification-bell")).content.decode()
    decisions.withdraw(decision.pk, alice)
    assert listed(bob_client, "?assigned=me") == [billing.pk]
    assert not any(n.resolved_at for n in Notification.objects.filter(user=bob))


def test_the_holds_expiry_ends_the_assignment_and_resolves_its_message(alice, bob, billing):
    assignments.assign(billing, bob, "", by=alice)

    with time_machine.travel(billing.expires_at + timedelta(seconds=1)):
        expiry.sweep()
        assert listed(signed_in(bob), "?assigned=me") == []

    assert all(n.resolved_reason == "expired" for n in told(Event.ASSIGNED, bob))


# The queue: its filter, its label, and n


def test_assigned_to_me_lists_the_holds_assigned_to_me_or_to_my_groups(
    alice, bob, carol, billing, support, platform_state, platform_client
):
    third = add_hold(platform_state, platform_client, "billing-bot", capability="refund")
    assignments.assign(billing, bob, "", by=alice)
    assignments.assign(support, Group.objects.get(name=roles.REVIEWERS), "", by=alice)
    assignments.assign(third, alice, "", by=alice)

    assert sorted(listed(signed_in(bob), "?assigned=me")) == sorted([billing.pk, support.pk])
    assert listed(signed_in(carol), "?assigned=me") == []  # Carol is a reviewer, but Support's hold is out of scope


def test_an_unknown_assigned_filter_is_a_400(alice_client):
    assert alice_client.get(reverse("queue") + "?assigned=bob").status_code == 400


def test_the_row_says_whom_a_hold_is_assigned_to_and_follows_a_reassignment(alice_client, alice, bob, carol, billing):
    assert "assigned to" not in queue_page(alice_client)

    assignments.assign(billing, bob, "", by=alice)
    assert '<span class="badge assigned">assigned to bob</span>' in queue_page(alice_client)
    assignments.assign(billing, Group.objects.get(name="Billing"), "", by=alice)
    assert '<span class="badge assigned">assigned to Billing</span>' in queue_page(alice_client)
    assignments.unassign(billing, alice)
    assert "assigned to" not in queue_page(alice_client)


def test_n_opens_the_holds_assigned_to_me_first(alice, bob, billing, support):
    Hold.objects.filter(pk=billing.pk).update(expires_at=support.expires_at - timedelta(minutes=30))  # first in queue
    assignments.assign(support, bob, "", by=alice)

    assert signed_in(bob).get(reverse("next-hold")).url == reverse("hold", args=[support.pk])
    assert signed_in(alice).get(reverse("next-hold")).url == reverse("hold", args=[billing.pk])


def test_n_skips_a_hold_assigned_to_me_that_someone_else_is_deciding(alice, bob, billing, support):
    from holds import lifecycle

    Hold.objects.filter(pk=billing.pk).update(expires_at=support.expires_at - timedelta(minutes=30))
    assignments.assign(support, bob, "", by=alice)
    lifecycle.claim(support, alice)

    assert signed_in(bob).get(reverse("next-hold")).url == reverse("hold", args=[billing.pk])
