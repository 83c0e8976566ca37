"""Messages fail closed too (issue 32, Low): mentions are limited per author and not crowded out by unknown names,
someone who can see the hold always hears of it, and a webhook is never sent twice after a deadlock's retry."""

from datetime import timedelta

import pytest
import time_machine
from django.db import OperationalError
from django.utils import timezone

from holds.handover import assignments, notes
from notifications import away, ending, notify, sending
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from tests.helpers.escalation import add_refund
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


def in_app(event: str, user) -> list[Notification]:
    return list(Notification.objects.filter(event=event, user=user, channel="in_app"))


def test_an_author_tells_at_most_20_people_a_minute_however_many_notes_they_write(
    platform_client, platform_state, alice, bob
):
    hold = add_refund(platform_client, platform_state, "h_flood")
    now = timezone.now()

    with time_machine.travel(now, tick=False):
        told = [notes.add_note(hold, alice, f"@bob look ({n})")[1] for n in range(30)]
    with time_machine.travel(now + timedelta(minutes=1, seconds=1), tick=False):
        later = notes.add_note(hold, alice, "@bob and now?")[1]

    assert sum(len(people) for people in told) == notes.MENTIONS_PER_MINUTE == 20
    assert told[20:] == [[]] * 10
    assert later == [bob] and len(in_app("mentioned", bob)) == 21


def test_unknown_names_do_not_use_up_the_cap_of_mentions(platform_client, platform_state, alice, bob):
    hold = add_refund(platform_client, platform_state, "h_bogus")
    bogus = " ".join(f"@nobody{n}" for n in range(40))

    _, told = notes.add_note(hold, alice, f"{bogus} and @bob")

    assert told == [bob] and len(in_app("mentioned", bob)) == 1


@pytest.fixture
def delegate_lost_sight(platform_client, platform_state, alice):
    """alice away with carol standing in, since when carol's scopes narrowed to billing agents; a support hold."""
    carol = make_user("carol", roles.REVIEWERS)
    away.save(alice, timezone.now() + timedelta(days=1), carol, by=alice)
    carol.groups.add(scoped_group("Billing", agent="billing-*"))
    return add_refund(platform_client, platform_state, "h_support", agent="support-bot"), carol


def test_a_mention_an_assignment_and_a_reminder_reach_the_person_away_when_the_delegate_cannot_see_the_hold(
    delegate_lost_sight, alice, bob
):
    hold, carol = delegate_lost_sight
    now = timezone.now()

    notes.add_note(hold, bob, "@alice please check")
    assignments.assign(hold, alice, "yours", by=bob)
    hold.claimed_by, hold.claim_expires_at = alice, now + timedelta(minutes=10)
    hold.save(update_fields=["claimed_by", "claim_expires_at"])
    notify.expiring_soon([hold], now)

    assert (
        len(in_app("mentioned", alice)) == 1
        and len(in_app("assigned", alice)) == 1
        and len(in_app("expiring_soon", alice)) == 1
    )
    assert Notification.objects.filter(user=carol).count() == 0


def test_a_delegate_who_can_see_the_hold_still_stands_in(
    platform_client, platform_state, delegate_lost_sight, alice, bob
):
    _, carol = delegate_lost_sight
    billing = add_refund(platform_client, platform_state, "h_billing", agent="billing-bot")

    notes.add_note(billing, bob, "@alice please check")

    assert [n.user for n in Notification.objects.filter(event="mentioned", hold=billing, channel="in_app")] == [carol]


def test_a_webhook_sent_whose_record_lost_a_deadlock_is_recorded_on_the_retry_and_never_sent_again(
    platform_client, platform_state, alice, bob, webhook_receiver, monkeypatch
):
    WebhookChannel.objects.create(name="chat", url=webhook_receiver.url, secret="s", events=["assigned"])
    hold = add_refund(platform_client, platform_state, "h_hooked")
    assignments.assign(hold, bob, "yours", by=alice)
    webhook = Notification.objects.get(channel="webhook")
    recorded = ending.audit_events.record_many
    losses = ["deadlock detected"]

    def loses_a_deadlock_once(*args, **kwargs):
        if losses:
            raise OperationalError(losses.pop())
        return recorded(*args, **kwargs)

    monkeypatch.setattr(ending.audit_events, "record_many", loses_a_deadlock_once)
    sending.send(webhook.pk)
    with time_machine.travel(timezone.now() + ending.LEASE + timedelta(minutes=5), tick=False):
        requeued = sending.due_for_requeue()
        sending.send(webhook.pk)

    webhook.refresh_from_db()
    assert webhook.status == Notification.Status.SENT and webhook.attempts == 1
    assert webhook.pk not in requeued and len(webhook_receiver.received) == 1
