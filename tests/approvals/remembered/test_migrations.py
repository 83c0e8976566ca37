"""Remembered approvals, once approval policies, moved to a model of their own with what they decided, and back."""

from datetime import timedelta

import pytest

from approvals.models import ApprovalPolicy, PolicyDecision, RememberedApproval
from tests.helpers.migrating import back_to, latest, migrate
from tests.helpers.remembered import add_refund, approve_due_at, remembered

pytestmark = pytest.mark.django_db


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
