"""Remembered approvals: a reviewer's "and the same again" approves like holds by itself, in their name, and nothing
wider; it stops at its cap, its time, on revoke and when its owner may no longer review; never under four eyes."""

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from approvals import alone, policies, remembering
from approvals.models import ApprovalPolicy, PolicyDecision, RememberAllowance, RememberedApproval
from approvals.remembering import Offer
from audit.models import AuditEvent
from holds.deciding import by_policy, decisions, delivery
from holds.mirror import sync
from holds.models import Decision, Hold
from notifications.models import NotificationSettings
from reviewqueue import roles
from tests.helpers.approvals_setup import decision_posts, signed_in
from tests.helpers.concurrently import at_once
from tests.helpers.forms import fields_of
from tests.helpers.migrating import back_to, latest, migrate
from tests.helpers.reviewing import review_form, send, summary_of
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


def add_refund(platform_client, platform_state, hold_id, amount, agent="refund-bot", env="default", **fields) -> Hold:
    platform_state.add_hold(
        env,
        {
            "hold_id": hold_id,
            "agent": agent,
            "capability": "refund",
            "items": [{"id": "A-1", "title": "refund", "data": {"order_id": "A-1", "amount": amount}}],
            **fields,
        },
    )
    sync.sync_env(platform_client, env)
    return Hold.objects.get(env=env, hold_id=hold_id)


@pytest.fixture
def allowed(db):
    return RememberAllowance.objects.create(agent_pattern="refund-bot", capability_pattern="refund", daily_cap_count=3)


@pytest.fixture
def first(platform_client, platform_state, db):
    return add_refund(platform_client, platform_state, "h_first", "12.00")


def remember_through_summary(client, hold, duration="hour"):
    """Approve ``hold`` as it is from its summary, choosing to remember it for ``duration``."""
    fields = summary_of(client, hold, review_form(hold))
    assert fields["remember"] == [""]  # "Don't remember" is what the summary starts with
    return send(client, hold, {**fields, "remember": duration})


def approve_due_at(moment):
    with time_machine.travel(moment, tick=False):
        return by_policy.approve_due()


def remembered(alice, first, allowed, hours=1) -> RememberedApproval:
    response = remember_through_summary(signed_in(alice), first)
    assert response.status_code == 302, response.content.decode()[:2000]
    return RememberedApproval.objects.get(owner=alice)


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


def remembered_values(remembered) -> tuple:
    return (
        remembered.owner_id,
        remembered.source_hold_id,
        remembered.env,
        remembered.agent,
        remembered.capability,
        remembered.amount_at_most,
        remembered.total_at_most,
        remembered.currency,
        remembered.daily_cap_count,
        remembered.daily_cap_amount,
        remembered.valid_until,
        remembered.ended_at,
        remembered.ended_reason,
    )


@pytest.mark.django_db(transaction=True)  # each migration commits: no deferred constraint may be pending
def test_remembered_approvals_move_from_their_policies_and_back_with_what_they_decided_and_nothing_wider(
    alice, first, allowed, platform_client, platform_state
):
    """Back to before the totals were kept, and forward: each remembered approval was a policy, one kept without its
    total bounds it by its amount (``0007``), and each moves to its own model (``0009``) with its pk and the
    decisions it made, none wider than it was."""
    made = remembered(alice, first, allowed)
    like = add_refund(platform_client, platform_state, "h_like", "9.50")
    approve_due_at(like.first_seen_at + timedelta(seconds=1))
    before = remembered_values(made)
    try:
        old = migrate(back_to(("approvals", "0006_remembered_approvals_and_targets")))
        Policy = old.get_model("approvals", "ApprovalPolicy")
        back = Policy.objects.get(pk=made.pk)
        assert (back.remembered_by_id, back.remembered_from_id, back.enabled, back.approvals_required) == (
            alice.pk,
            first.pk,
            True,
            0,
        )
        assert (back.env_pattern, back.agent_pattern, back.capability_pattern) == ("default", "refund-bot", "refund")
        assert (back.remembered_amount, back.daily_cap_count, back.valid_until) == (12, 3, made.valid_until)
        assert old.get_model("approvals", "PolicyDecision").objects.get(hold_id=like.pk).policy_id == made.pk
        shape = {"approvals_required": 0, "remembered_by_id": alice.pk, "remembered_from_id": first.pk}
        Policy.objects.create(name="admins' own", capability_pattern="refund", approvals_required=2)
        one = {"capability_pattern": "refund", "remembered_amount": 5, **shape}
        disabled = Policy.objects.create(name="r1", agent_pattern="refund-bot", enabled=False, **one)
        widened = Policy.objects.create(name="r2", agent_pattern="refund-*", **one)
        odd = Policy.objects.create(name="r3", agent_pattern="odd[*]bot", **one)
        migrate(latest())
    finally:
        migrate(latest())

    assert remembered_values(RememberedApproval.objects.get(pk=made.pk)) == before
    decided = PolicyDecision.objects.get(hold=like)
    assert (decided.remembered_id, decided.policy_id) == (made.pk, None)
    assert list(ApprovalPolicy.objects.values_list("name", flat=True)) == ["admins' own"]
    moved = RememberedApproval.objects.in_bulk([disabled.pk, widened.pk, odd.pk])
    assert [moved[pk].ended_reason for pk in (disabled.pk, widened.pk, odd.pk)] == [
        "disabled in the admin",
        "its globs were changed in the admin",
        "",
    ]
    assert (moved[odd.pk].agent, moved[odd.pk].amount_at_most, moved[odd.pk].total_at_most) == ("odd*bot", 5, 5)
    newer = RememberedApproval.objects.create(
        owner=alice,
        source_hold=first,
        env="default",
        agent="refund-bot",
        capability="refund",
        amount_at_most=1,
        total_at_most=1,
    )
    assert newer.pk > odd.pk  # the sequence goes on past the pks the migration kept


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


def test_it_stops_at_valid_until_and_ends(alice, first, allowed, platform_client, platform_state):
    policy = remembered(alice, first, allowed)
    like = add_refund(platform_client, platform_state, "h_like", "9.50", expires_at=None)

    assert approve_due_at(policy.valid_until + timedelta(seconds=1)) == []
    policy.refresh_from_db()
    assert not policy.enabled and policy.ended_reason.startswith("its time ran out")
    assert not Decision.objects.filter(hold=like).exists()


def test_revoking_stops_it_and_is_audited(alice, first, allowed, platform_client, platform_state):
    policy = remembered(alice, first, allowed)
    client = signed_in(alice)
    listed = client.get(reverse("remembered")).content.decode()
    assert f'id="remembered-{policy.pk}"' in listed and "Revoke" in listed

    assert client.post(reverse("remembered-revoke"), {"remembered": policy.pk}).status_code == 302
    like = add_refund(platform_client, platform_state, "h_like", "9.50")

    assert approve_due_at(like.first_seen_at + timedelta(seconds=1)) == []
    policy.refresh_from_db()
    assert policy.ended_reason == "revoked by Alice Adams"
    ended = AuditEvent.objects.filter(kind="setting_changed", payload__object_id=str(policy.pk)).order_by("sequence")
    assert [event.payload["action"] for event in ended] == ["added", "changed"] and ended.last().actor == alice
    assert "Stopped: revoked by Alice Adams" in client.get(reverse("remembered")).content.decode()


def test_nobody_else_may_revoke_it(alice, bob, first, allowed):
    policy = remembered(alice, first, allowed)

    assert signed_in(bob).post(reverse("remembered-revoke"), {"remembered": policy.pk}).status_code == 400
    policy.refresh_from_db()
    assert policy.enabled


def test_its_owner_losing_the_reviewers_role_stops_it(alice, first, allowed, platform_client, platform_state):
    policy = remembered(alice, first, allowed)
    like = add_refund(platform_client, platform_state, "h_like", "9.50")
    alice.groups.remove(alice.groups.get(name=roles.REVIEWERS))

    assert approve_due_at(like.first_seen_at + timedelta(seconds=1)) == []
    policy.refresh_from_db()
    assert policy.ended_reason == "Alice Adams no longer has the Reviewers role"


def test_its_owner_going_away_or_being_deactivated_stops_it(alice, first, allowed, platform_client, platform_state):
    policy = remembered(alice, first, allowed)
    like = add_refund(platform_client, platform_state, "h_like", "9.50")
    NotificationSettings.objects.create(user=alice, away_until=timezone.now() + timedelta(days=1))

    assert approve_due_at(like.first_seen_at + timedelta(seconds=1)) == []
    assert remembering.stopped_reason(policy, timezone.now()) == "Alice Adams is away"
    alice.is_active = False
    alice.save()
    assert remembering.stopped_reason(policy, timezone.now()) == "Alice Adams was deactivated"


def test_it_is_never_wider_than_its_owners_team_scopes(alice, first, allowed, platform_client, platform_state):
    policy = remembered(alice, first, allowed)
    alice.groups.add(scoped_group("Staging only", env="staging"))
    like = add_refund(platform_client, platform_state, "h_like", "9.50")

    assert approve_due_at(like.first_seen_at + timedelta(seconds=1)) == []
    policy.refresh_from_db()
    assert policy.ended_reason == "Alice Adams no longer sees these holds"


def test_a_four_eyes_policy_made_later_wins(alice, first, allowed, platform_client, platform_state):
    remembered(alice, first, allowed)
    ApprovalPolicy.objects.create(name="all refunds", capability_pattern="refund*", approvals_required=2)
    like = add_refund(platform_client, platform_state, "h_like", "9.50")

    assert approve_due_at(like.first_seen_at + timedelta(seconds=1)) == []


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_racing_approve_once(alice, first, allowed, platform_client, platform_state):
    remembered(alice, first, allowed)
    like = add_refund(platform_client, platform_state, "h_like", "9.50")

    made = at_once(by_policy.approve_due, by_policy.approve_due)

    assert sorted(len(found) for found in made) == [0, 1]
    assert PolicyDecision.objects.filter(hold=like).count() == 1
    assert Decision.objects.filter(hold=like).count() == 1


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


def test_the_undo_of_the_decision_takes_the_remembered_approval_back(alice, first, allowed, settings):
    settings.UNDO_SECONDS = 10
    policy = remembered(alice, first, allowed)

    decisions.withdraw(Decision.objects.get(hold=first).pk, alice)

    policy.refresh_from_db()
    assert not policy.enabled and policy.ended_reason == "its approval was undone"


def remembered_on_statistics(client) -> str:
    """The statistics page's section of everyone's remembered approvals, alone."""
    page = client.get(reverse("audit:stats")).content.decode()
    section = page[page.index('id="remembered-approvals"') :]
    return section[: section.index("</section>")]


def test_auditors_and_admins_see_everyones_remembered_approvals_with_who_made_them(alice, first, allowed):
    policy = remembered(alice, first, allowed)
    auditor = signed_in(make_user("ada", roles.AUDITORS, first_name="Ada", last_name="Auditor"))
    root_user = make_user("root", is_superuser=True, is_staff=True)
    root = signed_in(root_user)

    listed = remembered_on_statistics(auditor)
    assert "Alice Adams" in listed and "refund-bot, refund, default" in listed and "running" in listed
    assert 'data-label="All together at most">12.00' in listed
    changelist = reverse("admin:approvals_rememberedapproval_changelist")
    shown = root.get(changelist).content.decode()
    assert ">alice</a>" in shown and '<td class="field-agent">refund-bot</td>' in shown
    assert '<td class="field-state">running</td>' in shown

    change = reverse("admin:approvals_rememberedapproval_change", args=[policy.pk])
    assert root.post(change, {"daily_cap_count": "1", "daily_cap_amount": ""}).status_code == 302
    policy.refresh_from_db()
    assert policy.daily_cap_count == 1
    changed = AuditEvent.objects.get(
        kind="setting_changed", payload__model="approvals.rememberedapproval", actor=root_user
    )
    assert changed.payload["message"] == "Changed Daily cap count."

    ended = root.post(changelist, {"action": "end", "_selected_action": [policy.pk]})

    assert ended.status_code == 302
    assert "stopped: revoked by root" in remembered_on_statistics(auditor)
    audited = AuditEvent.objects.filter(kind="setting_changed", payload__object_id=str(policy.pk)).latest("sequence")
    assert audited.actor.username == "root" and audited.payload["remembered"]["ended"] == "revoked by root"


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


def test_allowremembering_sets_the_amount_cap_too_and_refuses_one_it_cannot_read(db):
    from django.core.management import CommandError, call_command

    call_command("allowremembering", "--agent", "refund-bot", "--daily-cap", "5", "--daily-cap-amount", "250.00")
    with pytest.raises(CommandError, match="daily-cap-amount"):
        call_command("allowremembering", "--agent", "refund-bot", "--daily-cap-amount", "1,5OO")

    allowance = RememberAllowance.objects.get(agent_pattern="refund-bot")
    assert (allowance.daily_cap_count, allowance.daily_cap_amount) == (5, Decimal("250.00"))
    audited = AuditEvent.objects.get(kind="setting_changed")
    assert audited.payload["message"].endswith("at most 5 a day, their amounts at most 250.00 a day in all")
