"""Remembered approvals end: at their time, on revoke, on an undo, when their owner may no longer review or a
four-eyes policy comes; auditors and admins see them all and may end them."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals import remembering
from approvals.models import ApprovalPolicy, PolicyDecision
from audit.models import AuditEvent
from holds.deciding import by_policy, decisions
from holds.models import Decision
from notifications.models import NotificationSettings
from reviewqueue import roles
from tests.helpers.approvals_setup import signed_in
from tests.helpers.concurrently import at_once
from tests.helpers.remembered import add_refund, approve_due_at, remembered
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


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
