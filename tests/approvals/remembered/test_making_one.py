"""Remembered approvals: a reviewer's "and the same again" approves like holds by itself, in their name, and nothing
wider; never offered under four eyes or where it cannot be bounded, and refused when forged."""

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from approvals.models import ApprovalPolicy, PolicyDecision, RememberAllowance, RememberedApproval
from audit.models import AuditEvent
from holds.deciding import delivery
from holds.models import Decision
from tests.helpers.approvals_setup import decision_posts, signed_in
from tests.helpers.forms import fields_of
from tests.helpers.remembered import add_refund, approve_due_at, remember_through_summary, remembered
from tests.helpers.reviewing import review_form, send, summary_of

pytestmark = pytest.mark.django_db


# Making one


def test_the_summary_says_what_it_will_approve_and_replays_the_last_30_days(alice, first, allowed):
    page = signed_in(alice).post(reverse("hold-review", args=[first.pk]), review_form(first)).content.decode()

    assert 'id="remember"' in page
    assert "Holds of agent refund-bot, capability refund in env default, each amount at most 12.00" in page
    assert "In the last 30 days 0 holds like it" in page
    for choice in ("for 1 hour", "until the end of the day", "for 7 days"):
        assert choice in page


def test_remembering_makes_a_standing_approval_owned_by_the_reviewer_and_audits_it(alice, first, allowed):
    before = timezone.now()
    policy = remembered(alice, first, allowed)

    assert policy.approvals_required == 0 and policy.auto_wait_minutes == 0
    assert (policy.env, policy.agent, policy.capability, policy.source_hold) == (
        "default",
        "refund-bot",
        "refund",
        first,
    )
    assert policy.amount_at_most == Decimal("12.00") and policy.currency == ""
    assert policy.daily_cap_count == 3
    assert before + timedelta(hours=1) <= policy.valid_until <= timezone.now() + timedelta(hours=1)
    assert Decision.objects.get(hold=first).reviewer == alice  # the decision itself went as always
    made = AuditEvent.objects.get(kind="setting_changed", payload__object_id=str(policy.pk))
    assert made.actor == alice and made.payload["remembered"]["agent"] == "refund-bot"
    assert made.payload["model"] == "approvals.rememberedapproval" and not ApprovalPolicy.objects.exists()


def test_a_like_hold_is_approved_once_by_itself_named_for_its_owner(
    alice, first, allowed, platform_client, platform_state
):
    policy = remembered(alice, first, allowed)
    like = add_refund(platform_client, platform_state, "h_like", "9.50")
    with time_machine.travel(like.first_seen_at, tick=False):
        queue = signed_in(alice).get(reverse("queue")).content.decode()

    made = approve_due_at(like.first_seen_at + timedelta(seconds=1))
    again = approve_due_at(like.first_seen_at + timedelta(seconds=20))
    delivery.deliver(made[0].pk, platform_client)

    assert [decision.hold for decision in made] == [like] and again == []
    decision = Decision.objects.get(hold=like)
    assert decision.decided_by_policy == "remembered by alice"
    assert decision_posts(platform_state)[-1]["body"]["decided_by"] == "policy: remembered by alice"
    submitted = AuditEvent.objects.get(kind="decision_submitted", decision=decision)
    assert submitted.payload["channel"] == "remembered"
    assert submitted.payload["policy"]["remembered_by"] == "alice"
    assert submitted.actor_label == "policy ‘remembered by alice’, owned by alice"
    page = signed_in(alice).get(reverse("hold", args=[like.pk])).content.decode()
    until = timezone.localtime(policy.valid_until)  # its time, with its date once it is not today's
    until = until.strftime("%H:%M" if until.date() == timezone.localdate() else "%Y-%m-%d %H:%M")
    assert f"Approved by Alice Adams&#x27;s remembered approval (until {until})" in page
    assert f"under Alice Adams&#x27;s remembered approval (until {until})" in queue
    assert PolicyDecision.objects.get(hold=like).remembered == policy


@pytest.mark.parametrize(
    ("amount", "agent", "env"),
    [("20.00", "refund-bot", "default"), ("9.50", "other-bot", "default"), ("9.50", "refund-bot", "staging")],
    ids=["larger", "another agent", "another env"],
)
def test_a_larger_hold_another_agents_or_another_envs_waits_for_people(
    alice, first, allowed, platform_client, platform_state, settings, amount, agent, env
):
    settings.AGENTOS_ENVS = ["default", "staging"]
    remembered(alice, first, allowed)
    unlike = add_refund(platform_client, platform_state, "h_unlike", amount, agent=agent, env=env)

    assert approve_due_at(unlike.first_seen_at + timedelta(seconds=1)) == []


@pytest.mark.parametrize("amount", ["9,50O", "1,500", "-5.00"])
def test_a_hold_whose_amount_is_not_read_for_certain_waits_for_people(
    alice, first, allowed, platform_client, platform_state, amount
):
    remembered(alice, first, allowed)
    doubtful = add_refund(platform_client, platform_state, "h_doubtful", amount)

    assert approve_due_at(doubtful.first_seen_at + timedelta(seconds=1)) == []


def test_another_currency_waits_for_people(alice, allowed, platform_client, platform_state):
    usd = add_refund(platform_client, platform_state, "h_usd", "12.00 USD")
    remembered(alice, usd, allowed)
    eur = add_refund(platform_client, platform_state, "h_eur", "9.50 EUR")
    also_usd = add_refund(platform_client, platform_state, "h_usd_2", "9.50 USD")

    made = approve_due_at(eur.first_seen_at + timedelta(seconds=1))

    assert [decision.hold for decision in made] == [also_usd]


# Never offered, and refused when forged


def test_no_choice_under_four_eyes_and_a_forged_one_is_refused(alice, allowed, platform_client, platform_state):
    ApprovalPolicy.objects.create(name="refunds", capability_pattern="refund", approvals_required=2)
    hold = add_refund(platform_client, platform_state, "h_four_eyes", "12.00")
    client = signed_in(alice)
    fields = summary_of(client, hold, review_form(hold))
    page = client.post(reverse("hold-review", args=[hold.pk]), review_form(hold)).content.decode()
    assert 'id="remember"' not in page

    forged = send(client, hold, {**fields, "remember": "hour"})

    assert forged.status_code == 409
    assert "under four eyes" in forged.content.decode()
    assert not RememberedApproval.objects.filter(owner=alice).exists()
    assert not hold.approvals.exists()  # nothing was sent, not even the approval


@pytest.mark.parametrize(
    "case", ["not allowed", "edited", "unreadable amount", "turned off", "too long"], ids=lambda case: case
)
def test_not_offered_and_refused_when_forged(alice, platform_client, platform_state, settings, case):
    amount = "1,5OO" if case == "unreadable amount" else "12.00"
    hold = add_refund(platform_client, platform_state, "h_other", amount, actions=["approve", "edit", "reject"])
    if case != "not allowed":
        RememberAllowance.objects.create(agent_pattern="refund-*")
    if case == "turned off":
        settings.REMEMBER_MAX_HOURS = 0
    if case == "too long":
        settings.REMEMBER_MAX_HOURS = 2
    form = review_form(hold)
    if case == "edited":
        from tests.helpers.reviewing import field_name

        form[field_name(hold, 0, "amount")] = "10.00"
    client = signed_in(alice)
    page = client.post(reverse("hold-review", args=[hold.pk]), form).content.decode()
    fields = fields_of(page, "confirm-form")

    forged = send(client, hold, {**fields, "remember": "week"})

    assert forged.status_code == 409, case
    assert "Nothing was sent" in forged.content.decode()
    assert not RememberedApproval.objects.filter(owner=alice).exists()
    assert not Decision.objects.filter(hold=hold).exists()
    if case != "too long":
        assert 'id="remember"' not in page
    else:
        assert "for 1 hour" in page and "for 7 days" not in page


def test_remembering_an_amount_no_amount_column_holds_is_refused_with_a_message(
    alice, allowed, platform_client, platform_state
):
    """It answered 500 on confirm: the remembered amount overflowed its column."""
    huge = add_refund(platform_client, platform_state, "h_huge", "20000000000000000.00")
    client = signed_in(alice)
    fields = summary_of(client, huge, review_form(huge))

    forged = send(client, huge, {**fields, "remember": "week"})

    assert "remember" not in fields
    assert forged.status_code == 409
    assert (
        "Nothing was sent: This hold&#x27;s amounts are not read for certain (amount &#x27;20000000000000000.00&#x27; "
        "is more than an amount can be)" in forged.content.decode()
    )
    assert not RememberedApproval.objects.filter(owner=alice).exists()
    assert not Decision.objects.filter(hold=huge).exists()


def test_remembering_locks_the_hold_before_the_audit_chains_head(alice, first, allowed):
    """The audit chain's head comes last (docs/architecture.md, invariants): the remembered approval's event is
    appended with the decision's, once the hold is locked, not before."""
    browser = signed_in(alice)

    with CaptureQueriesContext(connection) as ran:
        response = remember_through_summary(browser, first)

    assert response.status_code == 302
    statements = [query["sql"] for query in ran.captured_queries]
    # From the remembered approval's row on: the confirm's fresh read of a stale hold may lock it earlier.
    made = next(n for n, sql in enumerate(statements) if sql.startswith('INSERT INTO "approvals_rememberedapproval"'))
    after = statements[made:]
    locked = next(n for n, sql in enumerate(after) if 'FROM "holds_hold"' in sql and "FOR NO KEY UPDATE" in sql)
    assert locked < next(n for n, sql in enumerate(after) if 'FROM "audit_auditchainhead"' in sql)
    assert RememberedApproval.objects.filter(owner=alice).count() == 1
