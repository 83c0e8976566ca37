"""Statistics per approval policy: decisions that took several approvals, how long, and how often overturned."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from approvals.models import Approval, ApprovalPolicy
from audit import approvalstats, stats, timing
from holds.models import Decision
from tests.helpers.approval_history import add_refunds, approve, decide, edit_to, link, rejected

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db):
    from reviewqueue import roles
    from tests.helpers.users import make_user

    return make_user("carol", roles.REVIEWERS)


@pytest.fixture
def history(platform_client, platform_state, alice, bob, carol):
    """Yesterday, under "Large refunds": one decision approved in 30 minutes, one whose second approver changed it
    (60 minutes from the first approval to the last), one the second approver rejected; under "Payouts" one in
    5 minutes; and a decision nobody needed to approve twice."""
    large = ApprovalPolicy.objects.create(name="Large refunds", approvals_required=2)
    payouts = ApprovalPolicy.objects.create(name="Payouts", approvals_required=3)
    plain, changed, turned_down, payout, single = add_refunds(
        platform_client, platform_state, ["h_plain", "h_changed", "h_rejected", "h_payout", "h_single"]
    )
    start = timezone.now() - timedelta(days=1)

    decision = decide(plain, bob, start + timedelta(minutes=30), edit_to("1000.00"))
    link(
        decision,
        approve(plain, large, alice, start, edit_to("1000.00")),
        approve(plain, large, bob, start + timedelta(minutes=30), edit_to("1000.00"), position=2),
    )

    approve(changed, large, alice, start, edit_to("1000.00"))
    decision = decide(changed, carol, start + timedelta(minutes=60), edit_to("900.00"))
    link(
        decision,
        approve(changed, large, bob, start + timedelta(minutes=20), edit_to("900.00"), round=2),
        approve(changed, large, carol, start + timedelta(minutes=60), edit_to("900.00"), round=2, position=2),
    )

    first = approve(turned_down, large, alice, start, edit_to("1000.00"))
    link(decide(turned_down, bob, start + timedelta(minutes=2), rejected()), first)

    decision = decide(payout, carol, start + timedelta(minutes=5), edit_to("1000.00"))
    link(
        decision,
        approve(payout, payouts, alice, start, edit_to("1000.00")),
        approve(payout, payouts, bob, start + timedelta(minutes=1), edit_to("1000.00"), position=2),
        approve(payout, payouts, carol, start + timedelta(minutes=5), edit_to("1000.00"), position=3),
    )

    decide(single, alice, start, rejected())


def this_month() -> stats.Period:
    return stats.Period.from_query({}, timezone.localdate())


def test_each_policy_counts_its_decisions_the_median_time_to_approve_and_how_often_it_was_overturned(history):
    large, payouts = approvalstats.per_policy(this_month())

    assert (large.policy, large.decisions, large.changed, large.rejected) == ("Large refunds", 3, 1, 1)
    assert large.median_seconds == 45 * 60  # of 30 and 60 minutes: a rejection completes no round
    assert round(large.changed_share, 2) == round(large.rejected_share, 2) == 0.33
    assert (payouts.policy, payouts.decisions, payouts.median_seconds, payouts.changed, payouts.rejected) == (
        "Payouts",
        1,
        5 * 60,
        0,
        0,
    )


def test_decisions_outside_the_period_do_not_count(history):
    last_year = stats.Period.from_query({"since": "2020-01-01", "until": "2020-01-31"}, timezone.localdate())

    assert approvalstats.per_policy(last_year) == []


def test_the_figures_come_from_one_query_whatever_the_number_of_decisions(history):
    with CaptureQueriesContext(connection) as queries:
        approvalstats.per_policy(this_month())

    assert len(queries.captured_queries) == 1


def test_the_statistics_page_shows_the_policies(client, audrey, history):
    client.force_login(audrey)

    page = client.get(reverse("audit:stats")).content.decode()

    section = page[page.index("Per approval policy") :]
    assert section.index("Large refunds") < section.index("Payouts")
    assert timing.humanize(45 * 60) in section and "1 (33 %)" in section


def test_the_statistics_page_says_when_no_decision_needed_several_approvals(client, audrey):
    client.force_login(audrey)

    page = client.get(reverse("audit:stats")).content.decode()

    assert "No decision needed several approvals in this period." in page


# Each decision is read with its own rounds


def test_an_earlier_approvers_own_reject_is_neither_approved_nor_a_later_approvers_rejection(
    platform_client, platform_state, alice
):
    large = ApprovalPolicy.objects.create(name="Large refunds", approvals_required=2)
    [hold] = add_refunds(platform_client, platform_state, ["h_taken_back"])
    start = timezone.now() - timedelta(days=1)
    first = approve(hold, large, alice, start, edit_to("1000.00"))
    link(decide(hold, alice, start + timedelta(minutes=4), rejected()), first)

    [row] = approvalstats.per_policy(this_month())

    assert (row.decisions, row.changed, row.rejected, row.median_seconds) == (1, 0, 0, None)


def test_a_round_after_a_decision_the_platform_refused_is_no_change_and_times_from_its_own_first_approval(
    platform_client, platform_state, alice, bob, carol
):
    large = ApprovalPolicy.objects.create(name="Large refunds", approvals_required=2)
    [hold] = add_refunds(platform_client, platform_state, ["h_refused"])
    start = timezone.now() - timedelta(days=1)
    refused = decide(hold, bob, start + timedelta(minutes=10), edit_to("1000.00"))
    Decision.objects.filter(pk=refused.pk).update(state="not_applied", outcome="invalid")
    link(
        refused,
        approve(hold, large, alice, start, edit_to("1000.00")),
        approve(hold, large, bob, start + timedelta(minutes=10), edit_to("1000.00"), position=2),
    )
    decision = decide(hold, carol, start + timedelta(hours=2, minutes=15), edit_to("1000.00"))
    link(
        decision,
        approve(hold, large, bob, start + timedelta(hours=2), edit_to("1000.00"), round=2),
        approve(hold, large, carol, start + timedelta(hours=2, minutes=15), edit_to("1000.00"), round=2, position=2),
    )

    [row] = approvalstats.per_policy(this_month())

    assert (row.decisions, row.changed, row.rejected) == (2, 0, 0)
    assert sorted(row.seconds) == [10 * 60, 15 * 60]  # not 2 h 15 min from the hold's very first approval


def test_a_round_after_the_platform_changed_the_hold_is_no_change_by_a_later_approver(
    platform_client, platform_state, alice, bob, carol
):
    large = ApprovalPolicy.objects.create(name="Large refunds", approvals_required=2)
    [hold] = add_refunds(platform_client, platform_state, ["h_changed_upstream"])
    start = timezone.now() - timedelta(days=1)
    lapsed = approve(hold, large, alice, start, edit_to("1000.00"))
    Approval.objects.filter(pk=lapsed.pk).update(payload_digest="before")
    second = approve(hold, large, bob, start + timedelta(minutes=30), edit_to("1000.00"), round=2)
    third = approve(hold, large, carol, start + timedelta(minutes=35), edit_to("1000.00"), round=2, position=2)
    Approval.objects.filter(pk__in=[second.pk, third.pk]).update(payload_digest="after")
    link(decide(hold, carol, start + timedelta(minutes=35), edit_to("1000.00")), second, third)

    [row] = approvalstats.per_policy(this_month())

    assert (row.decisions, row.changed, row.seconds) == (1, 0, [5 * 60])
