"""Policies that decide by themselves: a policy needing 0 people approves the obvious, once, and names itself;
a default outcome reaches the platform before the expiry, once."""

import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from approvals.models import Approval, ApprovalPolicy, PolicyDecision
from audit.models import AuditEvent
from holds import lifecycle
from holds.deciding import by_policy, decisions, delivery
from holds.models import Decision, Hold
from notifications.models import Notification
from people.models import Preference
from reviewqueue import roles
from tests.helpers.approvals_setup import add_refund, decision_posts, signed_in
from tests.helpers.concurrently import at_once
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import make_user
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_user(db):
    return make_user("root", is_staff=True, is_superuser=True)


def small_refunds(**fields) -> ApprovalPolicy:
    """Refunds of at most 50 need nobody (by default, at once)."""
    defaults = {
        "name": "small refunds",
        "capability_pattern": "refund",
        "condition_key": "amount",
        "condition_operator": "lte",
        "condition_threshold": Decimal(50),
        "approvals_required": 0,
    }
    return ApprovalPolicy.objects.create(**(defaults | fields))


@pytest.fixture
def refund(platform_client, platform_state, db):
    return add_refund(platform_client, platform_state, "h_small", "20.00")


def admin_form(policy) -> dict:
    """The policy's admin form as saved, every field filled in as the page would post it."""
    fields = {
        "name": policy.name,
        "env_pattern": policy.env_pattern,
        "agent_pattern": policy.agent_pattern,
        "capability_pattern": policy.capability_pattern,
        "condition_key": policy.condition_key,
        "condition_operator": policy.condition_operator,
        "condition_threshold": policy.condition_threshold or "",
        "approvals_required": policy.approvals_required,
        "auto_wait_minutes": policy.auto_wait_minutes,
        "expiry_outcome": policy.expiry_outcome,
        "expiry_outcome_minutes": policy.expiry_outcome_minutes or "",
        "expiry_outcome_comment": policy.expiry_outcome_comment,
    }
    if policy.enabled:
        fields["enabled"] = "on"
    return fields


def approve_at(moment):
    with time_machine.travel(moment, tick=False):
        return by_policy.approve_due()


def defaults_at(moment):
    with time_machine.travel(moment, tick=False):
        return by_policy.send_default_outcomes()


# A policy that needs 0 people


def test_a_0_people_policy_approves_a_matching_hold_exactly_once_and_names_itself(
    refund, admin_user, platform_client, platform_state, client
):
    policy = small_refunds(approvals_required=1)
    client.force_login(admin_user)
    form = {field: value for field, value in admin_form(policy).items()} | {"approvals_required": "0"}
    assert client.post(reverse("admin:approvals_approvalpolicy_change", args=[policy.pk]), form).status_code == 302

    made = approve_at(refund.first_seen_at + timedelta(seconds=1))
    again = approve_at(refund.first_seen_at + timedelta(minutes=5))
    delivery.deliver(made[0].pk, platform_client)

    assert again == []
    decision = Decision.objects.get(hold=refund)
    assert [decision] == made
    assert decision.decided_by_policy == "small refunds" and decision.reviewer is None
    assert decision.state == "applied" and decision.undo_until is None
    assert [post["body"] for post in decision_posts(platform_state)] == [
        {"items": [{"id": "A-h_small", "action": "approve"}], "decided_by": "policy: small refunds"}
    ]
    submitted = AuditEvent.objects.get(kind="decision_submitted", decision=decision)
    assert submitted.actor is None
    assert submitted.payload["policy"] == {"name": "small refunds", "last_changed_by": "root", "kind": "approved"}
    assert submitted.actor_label == "policy ‘small refunds’, last changed by root"


def test_the_policy_waits_its_minutes_first(refund):
    small_refunds(auto_wait_minutes=10)

    too_early = approve_at(refund.first_seen_at + timedelta(minutes=9, seconds=59))
    after_the_wait = approve_at(refund.first_seen_at + timedelta(minutes=10))

    assert too_early == []
    assert [decision.hold for decision in after_the_wait] == [refund]


def test_a_hold_above_the_condition_waits_for_people(platform_client, platform_state):
    small_refunds()
    large = add_refund(platform_client, platform_state, "h_large", "80.00")

    assert approve_at(large.first_seen_at + timedelta(minutes=1)) == []


@pytest.mark.parametrize("amount", ["2O.00", "1,500", "1.500"])
def test_an_amount_not_read_for_certain_never_approves_itself(platform_client, platform_state, alice, amount):
    # "2O.00" cannot be read, "1,500" and "1.500" could be 1.5 or 1500: the condition holds, failing closed, but a
    # policy needing nobody must not approve what nobody could read.
    small_refunds()
    doubtful = add_refund(platform_client, platform_state, "h_doubtful", amount)

    assert approve_at(doubtful.first_seen_at + timedelta(minutes=5)) == []
    assert (
        "‘small refunds’ leaves it to people, as amount"
        in signed_in(alice).get(reverse("hold", args=[doubtful.pk])).content.decode()
    )


def test_it_stops_at_its_daily_count_cap(platform_client, platform_state):
    small_refunds(daily_cap_count=2)
    holds = [add_refund(platform_client, platform_state, f"h_{n}", "10.00", expires_at=None) for n in range(3)]

    made = approve_at(holds[-1].first_seen_at + timedelta(seconds=1))
    next_day = approve_at(holds[-1].first_seen_at + timedelta(days=1))

    assert [decision.hold for decision in made] == holds[:2]
    assert [decision.hold for decision in next_day] == holds[2:]


def test_it_stops_at_its_daily_sum_cap(platform_client, platform_state):
    small_refunds(daily_cap_amount=Decimal("50.00"))
    holds = [
        add_refund(platform_client, platform_state, f"h_{n}", amount) for n, amount in enumerate(("30", "30", "20"))
    ]

    made = approve_at(holds[-1].first_seen_at + timedelta(seconds=1))

    assert [decision.hold for decision in made] == [holds[0], holds[2]]  # 30 + 20: the second 30 would pass 50
    assert PolicyDecision.objects.filter(kind="approved").count() == 2


def test_it_stops_at_valid_until(refund):
    small_refunds(auto_wait_minutes=10, valid_until=refund.first_seen_at + timedelta(minutes=5))

    assert approve_at(refund.first_seen_at + timedelta(minutes=11)) == []
    assert approve_at(refund.first_seen_at + timedelta(minutes=4)) == []


def test_a_disabled_policy_approves_nothing(refund):
    small_refunds(enabled=False)

    assert approve_at(refund.first_seen_at + timedelta(minutes=1)) == []


def test_a_reviewer_claiming_the_hold_during_the_wait_stops_it(refund, alice):
    small_refunds(auto_wait_minutes=10)
    with time_machine.travel(refund.first_seen_at + timedelta(minutes=2), tick=False):
        lifecycle.claim(refund, alice)
    with time_machine.travel(refund.first_seen_at + timedelta(minutes=3), tick=False):
        lifecycle.release_claim(refund, alice)

    assert approve_at(refund.first_seen_at + timedelta(minutes=11)) == []
    assert not Decision.objects.filter(hold=refund).exists()


def test_a_more_specific_four_eyes_policy_keeps_its_holds_with_people(platform_client, platform_state):
    small_refunds(condition_key="", condition_operator="", condition_threshold=None)  # every refund …
    ApprovalPolicy.objects.create(  # … but those over 100 need two people
        name="large refunds",
        capability_pattern="refund",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal(100),
        approvals_required=2,
    )
    small = add_refund(platform_client, platform_state, "h_small", "20.00")
    large = add_refund(platform_client, platform_state, "h_large", "1200.00")

    made = approve_at(large.first_seen_at + timedelta(seconds=1))

    assert [decision.hold for decision in made] == [small]


@pytest.mark.django_db(transaction=True)
def test_a_policy_approval_racing_a_reviewers_decision_ends_with_exactly_one_decision(
    platform_client, platform_state, alice
):
    small_refunds()
    refund = add_refund(platform_client, platform_state, "h_small", "20.00")

    def reviewer_rejects():
        try:
            return decisions.submit(refund, alice, [decisions.ItemChoice("A-h_small", "reject")])
        except decisions.AlreadyDecided:
            return None

    results = at_once(reviewer_rejects, by_policy.approve_due)

    live = list(Decision.objects.filter(hold=refund))
    assert len(live) == 1
    by_reviewer, by_the_policy = results[0], results[1]
    assert (by_reviewer is None) != (by_the_policy == [])
    assert AuditEvent.objects.filter(kind="decision_submitted", hold_record=refund).count() == 1


# A default outcome before expiry


def default_reject(**fields) -> ApprovalPolicy:
    defaults = {
        "name": "refunds",
        "capability_pattern": "refund",
        "approvals_required": 2,
        "expiry_outcome": "reject",
        "expiry_outcome_minutes": 10,
        "expiry_outcome_comment": "Nobody could check this refund in time; please call us.",
    }
    return ApprovalPolicy.objects.create(**(defaults | fields))


@pytest.mark.django_db(transaction=True)
def test_the_default_outcome_reaches_the_platform_before_the_expiry_once_even_with_two_beats(
    platform_client, platform_state, alice, audrey
):
    default_reject()
    expires_at = timezone.now().replace(microsecond=0) + timedelta(hours=1)
    refund = add_refund(platform_client, platform_state, "h_r", "20.00", expires_at=expires_at.isoformat())
    decisions.submit(
        refund, alice, [decisions.ItemChoice("A-h_r", "approve")], duplicates_checked=every_duplicate(refund)
    )  # 1 of 2 approvals
    due = expires_at - timedelta(minutes=10)

    too_early = defaults_at(due - timedelta(seconds=1))
    with time_machine.travel(due + timedelta(seconds=5), tick=False):
        beats = at_once(by_policy.send_default_outcomes, by_policy.send_default_outcomes)
        decision = Decision.objects.get(hold=refund)
        delivery.deliver(decision.pk, platform_client)
    later = defaults_at(due + timedelta(minutes=1))

    assert too_early == [] and later == []
    assert sorted(len(made) for made in beats) == [0, 1]
    assert [post["body"] for post in decision_posts(platform_state)] == [
        {
            "items": [
                {
                    "id": "A-h_r",
                    "action": "reject",
                    "comment": "Nobody could check this refund in time; please call us.",
                }
            ],
            "decided_by": "policy: refunds",
        }
    ]
    decision.refresh_from_db()
    assert decision.state == "applied" and decision.finished_at < expires_at
    assert platform_state.get_hold("default", "h_r")["status"] == "decided"
    approval = Approval.objects.get(hold=refund)
    assert approval.decision == decision  # alice's approval is kept, and ended by the decision
    assert AuditEvent.objects.filter(kind="approval_given", hold_record=refund).count() == 1
    told = Notification.objects.filter(event="default_outcome", channel="in_app")
    assert set(told.values_list("user__username", flat=True)) == {"alice", "audrey"}
    assert told.first().title.startswith("Rejected by policy ‘refunds’ before expiry")


def test_a_hold_decided_in_time_gets_no_default_outcome(platform_client, platform_state, alice):
    default_reject(approvals_required=1)
    refund = add_refund(platform_client, platform_state, "h_r", "20.00")
    decisions.submit(
        refund, alice, [decisions.ItemChoice("A-h_r", "approve")], duplicates_checked=every_duplicate(refund)
    )

    assert defaults_at(refund.expires_at - timedelta(minutes=5)) == []


def test_a_default_approve_sends_no_comment(platform_client, platform_state):
    default_reject(approvals_required=1, expiry_outcome="approve")
    refund = add_refund(platform_client, platform_state, "h_r", "20.00")

    made = defaults_at(refund.expires_at - timedelta(minutes=9))

    assert [item.action for item in made[0].items.all()] == ["approve"]
    assert [item.comment for item in made[0].items.all()] == [""]


def test_a_hold_that_never_expires_gets_no_default_outcome(platform_client, platform_state):
    default_reject()
    refund = add_refund(platform_client, platform_state, "h_r", "20.00", expires_at=None)

    assert defaults_at(refund.first_seen_at + timedelta(days=30)) == []


def test_no_reviewer_role_is_needed_for_the_auditors_to_hear(platform_client, platform_state):
    make_user("ann", roles.AUDITORS)
    default_reject()
    refund = add_refund(platform_client, platform_state, "h_r", "20.00")

    defaults_at(refund.expires_at - timedelta(minutes=9))

    assert list(
        Notification.objects.filter(event="default_outcome", channel="in_app").values_list("user__username", flat=True)
    ) == ["ann"]


# What people see


def test_the_queue_and_the_hold_page_say_when_the_policy_approves_in_the_viewers_zone(refund, alice):
    Preference.objects.create(user=alice, time_zone="Europe/Paris")
    small_refunds(auto_wait_minutes=10)
    Hold.objects.filter(pk=refund.pk).update(first_seen_at=datetime(2026, 11, 30, 12, 52, tzinfo=UTC))
    client = signed_in(alice)

    with time_machine.travel(datetime(2026, 11, 30, 12, 55, tzinfo=UTC), tick=False):
        queue = client.get(reverse("queue")).content.decode()
        page = client.get(reverse("hold", args=[refund.pk])).content.decode()

    assert "Approves itself at 14:02 under ‘small refunds’" in queue
    assert "Approves itself at 14:02 under ‘small refunds’" in page


def test_the_queue_says_why_a_hold_over_the_cap_waits_for_people(platform_client, platform_state, alice):
    small_refunds(daily_cap_count=1)
    first = add_refund(platform_client, platform_state, "h_1", "10.00")
    second = add_refund(platform_client, platform_state, "h_2", "10.00")
    approve_at(timezone.now())  # the first is approved; the cap leaves the second to people
    queue = signed_in(alice).get(reverse("queue")).content.decode()

    assert Decision.objects.filter(hold=first).exists() and not Decision.objects.filter(hold=second).exists()
    assert "Over today&#x27;s cap of ‘small refunds’" in queue


def test_a_policys_decision_shows_as_approved_by_policy_on_the_hold_page_the_audit_the_statistics_and_metrics(
    refund, platform_client, alice, audrey, client, settings
):
    small_refunds()
    [decision] = approve_at(timezone.now())
    delivery.deliver(decision.pk, platform_client)
    settings.METRICS_TOKEN = "scrape-token-0123456789abcdef"
    people = signed_in(audrey)

    hold_page = signed_in(alice).get(reverse("hold", args=[refund.pk])).content.decode()
    audit_page = people.get(reverse("audit:decision", args=[decision.pk])).content.decode()
    stats = people.get(reverse("audit:stats"))
    metrics = client.get("/metrics", headers={"Authorization": "Bearer scrape-token-0123456789abcdef"}).content.decode()

    assert "Approved by policy ‘small refunds’" in hold_page
    assert "Approved by policy ‘small refunds’" in audit_page
    assert [row.label for row in stats.context["stats"].reviewers] == ["Decided by policy ‘small refunds’"]
    assert stats.context["stats"].people == [] and stats.context["stats"].team_approval_rate is None  # not a person's
    assert "No reviewer decided in this period." in stats.content.decode()
    assert 'reviewqueue_policy_decisions_total{kind="approved",policy="small refunds"} 1.0' in metrics
    assert 'reviewqueue_decisions_total{outcome="applied"} 1.0' in metrics


@pytest.mark.django_db(transaction=True)
def test_two_real_beats_and_a_worker_send_the_default_outcome_once_before_the_expiry(
    celery_processes, platform_client, platform_state
):
    default_reject(expiry_outcome_minutes=1)
    expires_at = timezone.now() + timedelta(seconds=65)  # due in about 5 s
    refund = add_refund(platform_client, platform_state, "h_r", "20.00", expires_at=expires_at.isoformat())
    celery_processes("worker", UNDO_SECONDS="0")
    for _ in range(2):
        celery_processes("beat", POLICY_SWEEP_SECONDS="1")

    decision = wait_until(lambda: Decision.objects.filter(hold=refund, state="applied").first(), timeout=40)
    wait_until(lambda: PolicyDecision.objects.filter(hold=refund).exists())
    time.sleep(3)  # more beats: none may decide again

    assert Decision.objects.filter(hold=refund).count() == 1
    assert decision.decided_by_policy == "refunds" and decision.finished_at < expires_at
    assert len(decision_posts(platform_state)) == 1
