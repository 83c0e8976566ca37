"""Remembered approvals stop at their caps: a count and an amount a day, the remembered hold's total, the
strictest of the allowances that admit it."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from approvals import alone, policies
from approvals.models import ApprovalPolicy, PolicyDecision, RememberAllowance
from approvals.remembering import Offer
from audit.models import AuditEvent
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.approvals_setup import signed_in
from tests.helpers.remembered import add_refund, approve_due_at, remembered
from tests.helpers.reviewing import review_form
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


# Where it stops


def test_it_stops_at_its_daily_cap(alice, first, allowed, platform_client, platform_state):
    remembered(alice, first, allowed)
    like = [add_refund(platform_client, platform_state, f"h_{n}", "5.00", expires_at=None) for n in range(4)]

    made = approve_due_at(like[-1].first_seen_at + timedelta(seconds=1))

    assert [decision.hold for decision in made] == like[:3]


def test_it_bounds_the_holds_total_at_the_remembered_holds_not_only_each_item(
    alice, first, allowed, platform_client, platform_state
):
    """A remembered approval of 12.00 approved a hold of 8 × 12.00 = 96.00 (issue 45, Low)."""
    policy = remembered(alice, first, allowed)
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_eight",
            "agent": "refund-bot",
            "capability": "refund",
            "items": [
                {"id": f"A-{n}", "title": "refund", "data": {"order_id": f"A-{n}", "amount": "12.00"}} for n in range(8)
            ],
        },
    )
    sync.sync_env(platform_client, "default")
    eight = Hold.objects.get(hold_id="h_eight")
    smaller = add_refund(platform_client, platform_state, "h_smaller", "11.00")

    made = approve_due_at(smaller.first_seen_at + timedelta(seconds=1))

    assert [decision.hold for decision in made] == [smaller]
    assert not Decision.objects.filter(hold=eight).exists()
    assert policy.total_at_most == Decimal("12.00")
    assert "each amount at most 12.00, all together at most 12.00" in Offer(policy, []).words


def test_a_policy_and_a_remembered_approval_of_the_same_pk_count_their_days_apart(alice, first, allowed):
    made = remembered(alice, first, allowed)
    policy = ApprovalPolicy.objects.create(
        pk=made.pk, name="refunds alone", capability_pattern="other", approvals_required=0
    )
    PolicyDecision.objects.create(
        hold=first,
        policy=policy,
        policy_name=policy.name,
        kind="approved",
        at=timezone.now(),
        day=policies.cap_day(timezone.now()),
        amount=Decimal(7),
    )

    tallies = alone.tallies_today([policy, made], timezone.now())

    assert tallies == {policies.key(policy): policies.DayTally(1, Decimal(7))}
    assert alone.day_tally(made, policies.cap_day(timezone.now())) == policies.DayTally()


def test_its_daily_cap_may_be_an_amount_set_by_the_admin_shown_audited_and_enforced(
    alice, first, allowed, platform_client, platform_state
):
    allowed.daily_cap_amount = Decimal("25.00")
    allowed.daily_cap_count = 10
    allowed.save()
    page = signed_in(alice).post(reverse("hold-review", args=[first.pk]), review_form(first)).content.decode()
    policy = remembered(alice, first, allowed)
    like = [add_refund(platform_client, platform_state, f"h_{n}", "10.00", expires_at=None) for n in range(3)]

    made = approve_due_at(like[-1].first_seen_at + timedelta(seconds=1))

    assert "at most 10 a day, their amounts at most 25.00 a day in all." in page
    assert policy.daily_cap_amount == Decimal("25.00") and policy.daily_cap_count == 10
    made_event = AuditEvent.objects.get(kind="setting_changed", payload__object_id=str(policy.pk))
    assert made_event.payload["remembered"]["daily_cap_amount"] == "25.0000"
    assert made_event.payload["remembered"]["total_at_most"] == "12.00"
    assert [decision.hold for decision in made] == like[:2]  # 10 + 10; a third would make 30.00
    listed = signed_in(alice).get(reverse("remembered")).content.decode()
    assert "their amounts at most 25.00 a day in all" in listed


def test_of_several_allowances_admitting_a_hold_the_strictest_caps_apply(alice, first, allowed):
    RememberAllowance.objects.create(capability_pattern="refund", daily_cap_count=50, daily_cap_amount=Decimal(100))
    RememberAllowance.objects.create(agent_pattern="refund-*", daily_cap_count=2)

    policy = remembered(alice, first, allowed)

    assert (policy.daily_cap_count, policy.daily_cap_amount) == (2, Decimal(100))


def test_the_admin_sets_an_allowances_amount_cap_and_the_change_is_audited(client, platform_client, platform_state):
    admin = make_user("root", is_staff=True, is_superuser=True)
    allowance = RememberAllowance.objects.create(capability_pattern="refund", daily_cap_count=5)
    client.force_login(admin)
    change = reverse("admin:approvals_rememberallowance_change", args=[allowance.pk])
    form = {"env_pattern": "", "agent_pattern": "", "capability_pattern": "refund", "daily_cap_count": "5"}

    refused = client.post(change, form | {"daily_cap_amount": "-1"})
    saved = client.post(change, form | {"daily_cap_amount": "250.00"})

    assert refused.status_code == 200 and "greater than or equal to 0" in refused.content.decode()
    assert saved.status_code == 302
    allowance.refresh_from_db()
    assert allowance.daily_cap_amount == Decimal("250.00")
    changed = AuditEvent.objects.filter(
        Q(payload__object_id=allowance.pk) | Q(payload__object_id=str(allowance.pk)), kind="setting_changed"
    ).get()
    assert changed.payload["message"] == "Changed Daily cap amount."  # as a change of its count cap is
    assert "250.00" in client.get(reverse("admin:approvals_rememberallowance_changelist")).content.decode()


def test_allowremembering_sets_the_amount_cap_too_and_refuses_one_it_cannot_read(db):
    from django.core.management import CommandError, call_command

    call_command("allowremembering", "--agent", "refund-bot", "--daily-cap", "5", "--daily-cap-amount", "250.00")
    with pytest.raises(CommandError, match="daily-cap-amount"):
        call_command("allowremembering", "--agent", "refund-bot", "--daily-cap-amount", "1,5OO")

    allowance = RememberAllowance.objects.get(agent_pattern="refund-bot")
    assert (allowance.daily_cap_count, allowance.daily_cap_amount) == (5, Decimal("250.00"))
    audited = AuditEvent.objects.get(kind="setting_changed")
    assert audited.payload["message"].endswith("at most 5 a day, their amounts at most 250.00 a day in all")
