"""Escalation: a hold left waiting too long under its policy reaches the policy's escalation group, once.

And a hold that expires while waiting for its next approval tells the approvers who gave theirs.
"""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from approvals import escalation
from approvals.models import Approval, Escalation
from audit import describe
from audit.models import AuditEvent
from holds import lifecycle
from holds.models import Hold, PeriodicRun
from holds.sweeps import expiry
from notifications import subscriptions
from notifications.models import Notification, WebhookChannel
from people.models import Preference
from teams.models import TeamScope
from teams.scopes import viewer_of
from tests.helpers.concurrently import at_once
from tests.helpers.escalation import FINANCE_LEADS, add_refund, policy, sweep_at
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def refund(platform_client, platform_state, db):
    """A refund of 1,200.00 asked now, expiring in an hour, mirrored (first seen) now."""
    return add_refund(platform_client, platform_state, "h_big")


def escalated_notifications(hold):
    return Notification.objects.filter(event="escalated", hold=hold)


# Minutes without a claim


def test_an_unclaimed_hold_escalates_once_after_the_policys_minutes(refund, fiona):
    policy()

    too_early = sweep_at(refund.first_seen_at + timedelta(minutes=29))
    made = sweep_at(refund.first_seen_at + timedelta(minutes=30, seconds=1))
    again = sweep_at(refund.first_seen_at + timedelta(minutes=45))

    assert too_early == [] and again == []
    assert [e.hold for e in made] == [refund]
    escalated = Escalation.objects.get(hold=refund)
    assert escalated.group_name == FINANCE_LEADS and escalated.reason == "not claimed for 30 minutes"
    sent = escalated_notifications(refund)
    assert sorted(sent.values_list("channel", flat=True)) == ["email", "in_app"]
    assert set(sent.values_list("user", flat=True)) == {fiona.pk}
    assert sent.first().title == "Escalated to Finance leads: Approve this request?"
    event = AuditEvent.objects.get(kind="escalated")
    assert event.hold_record == refund and event.payload["group"] == FINANCE_LEADS


def test_a_hold_no_policy_matches_never_escalates(refund, fiona):
    policy(agent_pattern="billing-*", escalate_at_percent=50)

    assert sweep_at(refund.first_seen_at + timedelta(minutes=59)) == []
    assert not Escalation.objects.exists() and not escalated_notifications(refund).exists()


def test_a_more_specific_policy_without_escalation_wins_over_one_with_it(refund, fiona):
    policy()
    policy(
        name="Support refunds", agent_pattern="llamaindex-support", escalate_after_minutes=None, escalation_group=None
    )

    assert sweep_at(refund.first_seen_at + timedelta(minutes=40)) == []


def test_the_minutes_count_again_from_when_a_lapsed_claim_ended(refund, fiona, alice, settings):
    settings.CLAIM_MINUTES = 10
    policy(escalate_after_minutes=20)
    with time_machine.travel(refund.first_seen_at + timedelta(minutes=5), tick=False):
        lifecycle.claim(refund, alice)  # lapses at minute 15

    while_claimed = sweep_at(refund.first_seen_at + timedelta(minutes=14))
    past_arrival_plus_20 = sweep_at(refund.first_seen_at + timedelta(minutes=21))
    twenty_minutes_after_the_lapse = sweep_at(refund.first_seen_at + timedelta(minutes=35, seconds=1))

    assert while_claimed == [] and past_arrival_plus_20 == []
    assert [e.hold for e in twenty_minutes_after_the_lapse] == [refund]


def test_a_hold_claimed_for_19_minutes_then_released_waits_the_whole_minutes_again(refund, fiona, alice):
    policy(escalate_after_minutes=20)
    with time_machine.travel(refund.first_seen_at + timedelta(minutes=1), tick=False):
        lifecycle.claim(refund, alice, lasting=timedelta(hours=1))
    with time_machine.travel(refund.first_seen_at + timedelta(minutes=20), tick=False):
        lifecycle.release_claim(refund, alice)

    right_after = sweep_at(refund.first_seen_at + timedelta(minutes=21))
    twenty_minutes_after_the_release = sweep_at(refund.first_seen_at + timedelta(minutes=40, seconds=1))

    assert right_after == []
    assert [e.hold for e in twenty_minutes_after_the_release] == [refund]
    assert Escalation.objects.get(hold=refund).reason == "not claimed for 20 minutes"


def test_a_hold_decided_here_does_not_escalate(refund, fiona, alice):
    from holds.deciding import decisions
    from holds.deciding.decisions import ItemChoice

    policy(approvals_required=1)
    decisions.submit(refund, alice, [ItemChoice(item_id="A-1", action="approve", comment="")])

    assert sweep_at(refund.first_seen_at + timedelta(minutes=40)) == []


# A share of the hold's lifetime


def test_the_percent_rule_escalates_even_a_claimed_hold_once_that_share_of_its_lifetime_is_gone(refund, fiona, alice):
    policy(escalate_after_minutes=None, escalate_at_percent=75)
    lifetime = refund.expires_at - refund.created_at
    with time_machine.travel(refund.created_at + lifetime * 0.7, tick=False):
        lifecycle.claim(refund, alice, lasting=timedelta(hours=2))

    too_early = sweep_at(refund.created_at + lifetime * 0.74)
    made = sweep_at(refund.created_at + lifetime * 0.76)

    assert too_early == []
    assert [e.hold for e in made] == [refund]
    assert Escalation.objects.get(hold=refund).reason == "75 % of its time before expiry gone"


def test_a_hold_that_never_expires_has_no_lifetime_to_use_up(platform_client, platform_state, fiona):
    forever = add_refund(platform_client, platform_state, "h_forever", expires_at=None)
    policy(escalate_after_minutes=None, escalate_at_percent=75)

    assert sweep_at(forever.first_seen_at + timedelta(days=30)) == []


def test_each_policy_uses_its_own_threshold_not_the_earliest_one(platform_client, platform_state, fiona):
    """The sweep reads the holds past the earliest threshold of all policies, then holds each to its own."""
    policy(escalate_after_minutes=10, agent_pattern="quick-*")
    slow = policy(name="Slow", escalate_after_minutes=45, agent_pattern="llamaindex-*")
    hold = add_refund(platform_client, platform_state, "h_slow")

    assert sweep_at(hold.first_seen_at + timedelta(minutes=30)) == []
    assert [e.policy for e in sweep_at(hold.first_seen_at + timedelta(minutes=46))] == [slow]


def test_the_sweep_reads_no_hold_before_the_earliest_threshold(refund, fiona):
    escalating = [policy()]

    assert list(escalation.candidates(escalating, refund.first_seen_at + timedelta(minutes=29))) == []
    assert list(escalation.candidates(escalating, refund.first_seen_at + timedelta(minutes=31))) == [refund]


# Who hears of it, and how


def test_escalation_follows_each_members_preferences_and_the_webhooks_that_want_it(refund, fiona, gus, bob, client):
    policy()
    subscriptions.save_preferences(viewer_of(fiona), {"escalated": ["email"]})
    hook = WebhookChannel.objects.create(name="finance", url="http://127.0.0.1:9/", secret="s", events=["escalated"])
    WebhookChannel.objects.create(name="ops", url="http://127.0.0.1:9/", secret="s", events=["expired"])

    sweep_at(refund.first_seen_at + timedelta(minutes=31))

    sent = escalated_notifications(refund)
    assert sorted(sent.filter(user=fiona).values_list("channel", flat=True)) == ["email"]
    assert sorted(sent.filter(user=gus).values_list("channel", flat=True)) == ["email", "in_app"]
    assert not sent.filter(user=bob).exists()  # a reviewer outside the escalation group
    assert list(sent.filter(channel="webhook").values_list("webhook", flat=True)) == [hook.pk]
    client.force_login(gus)  # fiona, with no role, opens no notification page at all
    assert "Escalated" in client.get(reverse("notification-preferences")).content.decode()
    client.force_login(bob)
    assert "Escalated" not in client.get(reverse("notification-preferences")).content.decode()


def test_the_hold_page_says_when_and_to_whom_it_escalated_in_the_viewers_zone(refund, alice, client):
    Preference.objects.create(user=alice, time_zone="Europe/Paris")
    Escalation.objects.create(
        hold=refund,
        policy=policy(),
        group_name=FINANCE_LEADS,
        reason="not claimed for 30 minutes",
        at=datetime(2026, 11, 30, 13, 2, tzinfo=UTC),
    )
    client.force_login(alice)

    page = client.get(reverse("hold", args=[refund.pk])).content.decode()

    assert "Escalated to <strong>Finance leads</strong> at <time" in page
    assert '>14:02 CET</time> <span class="muted">(not claimed for 30 minutes)</span>' in page


def test_a_hold_not_escalated_says_nothing_of_it(refund, alice_client):
    page = alice_client.get(reverse("hold", args=[refund.pk])).content.decode()

    assert 'id="escalation"' not in page


# Once, whatever the number of beats


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_escalate_each_hold_once_and_tell_each_member_once(
    platform_client, platform_state, fiona, gus
):
    holds = [add_refund(platform_client, platform_state, f"h_{n}") for n in range(5)]
    policy()
    Hold.objects.update(first_seen_at=timezone.now() - timedelta(hours=1))
    made = [escalated for run in at_once(escalation.sweep, escalation.sweep) for escalated in run]

    assert sorted(e.hold_id for e in made) == sorted(hold.pk for hold in holds)
    assert Escalation.objects.count() == len(holds)
    assert AuditEvent.objects.filter(kind="escalated").count() == len(holds)
    in_app = Notification.objects.filter(event="escalated", channel="in_app")
    assert sorted(in_app.values_list("user", flat=True)) == sorted([fiona.pk, gus.pk] * len(holds))


@pytest.mark.django_db(transaction=True)
def test_beat_runs_the_sweep_on_a_real_worker(celery_processes, platform_client, platform_state, fiona):
    hold = add_refund(platform_client, platform_state, "h_waiting")
    policy()
    Hold.objects.filter(pk=hold.pk).update(first_seen_at=timezone.now() - timedelta(hours=1))
    celery_processes("worker")
    celery_processes("beat", ESCALATION_SWEEP_SECONDS="1")

    wait_until(lambda: Escalation.objects.filter(hold=hold).exists())
    assert PeriodicRun.objects.filter(task="approvals.tasks.escalate_waiting_holds").exists()
    assert wait_until(
        lambda: Notification.objects.filter(event="escalated", user=fiona, channel="email", status="sent").exists()
    )


# Expiring while waiting for the next approval


def test_a_hold_expiring_while_waiting_for_approval_tells_its_approvers_and_the_auditors(refund, alice, bob, audrey):
    waiting_policy = policy()
    Approval.objects.create(
        hold=refund,
        policy=waiting_policy,
        policy_name=waiting_policy.name,
        approvals_required=2,
        approver=alice,
        payload_digest=refund.payload_digest,
        round=1,
        position=1,
        created_at=refund.first_seen_at + timedelta(minutes=5),
        items=[
            {
                "item_id": "A-1",
                "action": "edit",
                "original_data": {"order_id": "A-1", "amount": "1200.00"},
                "data": {"order_id": "A-1", "amount": "1000.00"},
                "comment": "",
            }
        ],
    )

    with time_machine.travel(refund.expires_at + timedelta(seconds=1), tick=False):
        expiry.sweep()

    told = Notification.objects.filter(event="expired", hold=refund, channel="in_app")
    assert set(told.values_list("user", flat=True)) == {alice.pk, audrey.pk}  # bob gave no approval
    message = told.get(user=alice)
    assert message.title == "Expired waiting for approval: Approve this request?"
    assert "It was waiting for its next approval: alice approved 1,200.00 → 1,000.00 at " in message.body


def test_an_approver_waiting_on_an_open_hold_can_turn_off_its_expiry_and_then_hears_nothing(refund, alice, bob, client):
    waiting_policy = policy()
    Approval.objects.create(
        hold=refund,
        policy=waiting_policy,
        policy_name=waiting_policy.name,
        approvals_required=2,
        approver=alice,
        payload_digest=refund.payload_digest,
        round=1,
        position=1,
        created_at=refund.first_seen_at,
        items=[],
    )
    client.force_login(bob)
    assert "Expired undecided" not in client.get(reverse("notification-preferences")).content.decode()
    client.force_login(alice)
    assert "Expired undecided" in client.get(reverse("notification-preferences")).content.decode()

    client.post(reverse("notification-preferences"), {"expiring_soon": ["in_app"]})
    with time_machine.travel(refund.expires_at + timedelta(seconds=1), tick=False):
        expiry.sweep()

    assert not Notification.objects.filter(event="expired", hold=refund, user=alice).exists()


def test_a_hold_expiring_without_approvals_tells_the_auditors_as_before(refund, alice, audrey):
    with time_machine.travel(refund.expires_at + timedelta(seconds=1), tick=False):
        expiry.sweep()

    told = Notification.objects.filter(event="expired", hold=refund, channel="in_app")
    assert list(told.values_list("user", flat=True)) == [audrey.pk]
    assert told.get().title == "Expired undecided: Approve this request?"


# What the sweep reads, and how much a run does


def test_the_sweep_reads_only_the_holds_an_escalating_policys_globs_match(platform_client, platform_state, fiona):
    billing = [add_refund(platform_client, platform_state, f"h_billing_{n}", agent="billing-bot") for n in range(3)]
    for n in range(5):
        add_refund(platform_client, platform_state, f"h_support_{n}")
    escalating = [policy(agent_pattern="billing-*")]
    later = timezone.now() + timedelta(minutes=31)

    read = list(escalation.candidates(escalating, later))

    assert read == billing
    assert [e.hold for e in sweep_at(later)] == billing


def test_a_run_escalates_at_most_a_batch_oldest_first_and_the_next_run_the_rest(
    platform_client, platform_state, fiona, monkeypatch
):
    monkeypatch.setattr(escalation, "BATCH", 2)
    holds = [add_refund(platform_client, platform_state, f"h_{n}") for n in range(3)]
    policy()
    later = holds[-1].first_seen_at + timedelta(minutes=31)

    first_run, second_run = sweep_at(later), sweep_at(later)

    assert [e.hold for e in first_run] == holds[:2] and [e.hold for e in second_run] == holds[2:]


# Who could be told


def test_the_escalation_and_its_audit_name_the_members_told(refund, fiona, gus):
    policy()

    sweep_at(refund.first_seen_at + timedelta(minutes=31))

    assert Escalation.objects.get(hold=refund).told == 2
    event = AuditEvent.objects.get(kind="escalated")
    assert event.payload["told"] == ["fiona", "gus"]


def test_an_escalation_nobody_in_the_group_can_see_says_so_on_the_hold_and_in_the_audit(refund, fiona, alice_client):
    TeamScope.objects.create(group=Group.objects.get(name=FINANCE_LEADS), env_patterns="prod-*")
    policy()

    [made] = sweep_at(refund.first_seen_at + timedelta(minutes=31))

    assert made.told == 0 and not escalated_notifications(refund).filter(user=fiona).exists()
    event = AuditEvent.objects.get(kind="escalated")
    assert event.payload["told"] == [] and describe.summary(event).endswith("nobody in that group can see this hold")
    page = alice_client.get(reverse("hold", args=[refund.pk])).content.decode()
    assert "— nobody in that group can see this hold" in page
