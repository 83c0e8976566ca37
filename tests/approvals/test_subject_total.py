"""A policy on a subject's total: "refunds on one order above 100 in 30 days need two approvers". Refunds asked on
the simulator, mirrored by a real sync over HTTP, decided through ``decisions.submit`` as every channel does."""

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from approvals import rounds
from approvals.models import Approval, ApprovalPolicy
from audit.describe import summary
from audit.models import AuditEvent, EventKind
from holds.deciding import by_policy, decisions
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.approvals_setup import signed_in
from tests.helpers.concurrently import at_once
from tests.helpers.escalation import policy as escalation_policy
from tests.helpers.escalation import sweep_at
from tests.helpers.handoff import approve_all

pytestmark = pytest.mark.django_db


@pytest.fixture
def one_order_above_100(db) -> ApprovalPolicy:
    return ApprovalPolicy.objects.create(
        name="One order above 100 in 30 days",
        capability_pattern="refund",
        subject_total_over=Decimal(100),
        subject_total_days=30,
        approvals_required=2,
    )


@pytest.fixture
def ask(platform_client, platform_state):
    def asked(hold_id: str, amount: str, order: str | None = "A-1001", title: str = "refund") -> Hold:
        data = {"amount": amount} | ({"order_id": order} if order else {})
        platform_state.add_hold(
            "default",
            {"hold_id": hold_id, "capability": "refund", "items": [{"id": "call_1", "title": title, "data": data}]},
        )
        sync.sync_env(platform_client, "default")
        return Hold.objects.prefetch_related("items").get(hold_id=hold_id)

    return asked


def approved_alone(hold: Hold, reviewer) -> Decision:
    made = decisions.submit(hold, reviewer, approve_all(hold))
    assert isinstance(made, Decision), "one reviewer was enough"
    return made


def test_a_second_refund_on_one_order_over_100_in_30_days_needs_two_approvers(ask, one_order_above_100, alice, bob):
    first = ask("h_first", "49.90")
    assert rounds.standing(first).required == 1  # 49.90 alone is not over 100
    approved_alone(first, alice)

    second = ask("h_second", "60.00", title="shipping refund")  # another action, so no possible duplicate
    standing = rounds.standing(second)

    assert standing.required == 2
    assert standing.requirement.why == "refund on A-1001 total 109.90 in 30 days, over 100"
    page = signed_in(bob).get(reverse("hold", args=[second.pk])).content.decode()
    assert "Needs 2 approvals: refund on A-1001 total 109.90 in 30 days, over 100" in page
    assert "(policy “One order above 100 in 30 days”)" in page
    given = decisions.submit(second, bob, approve_all(second))
    assert isinstance(given, Approval) and not Decision.objects.filter(hold=second).exists()
    event = AuditEvent.objects.get(kind=EventKind.APPROVAL_GIVEN, hold_id="h_second")
    assert event.payload["why"] == "refund on A-1001 total 109.90 in 30 days, over 100"
    assert "under “One order above 100 in 30 days” (refund on A-1001 total 109.90 in 30 days, over 100)" in summary(
        event
    )
    assert isinstance(decisions.submit(second, alice, approve_all(second)), Decision)  # the second person sends it


def test_a_refund_on_another_order_or_without_any_subject_needs_one(ask, one_order_above_100, alice):
    approved_alone(ask("h_first", "49.90"), alice)

    other_order = ask("h_other", "60.00", order="B-2002", title="shipping refund")
    no_subject = ask("h_plain", "500.00", order=None)

    assert rounds.standing(other_order).required == 1
    assert rounds.standing(no_subject).required == 1  # no subject, no total: unaffected whatever its amount
    approved_alone(other_order, alice)


def test_a_total_of_exactly_the_threshold_is_not_over_it(ask, one_order_above_100, alice):
    approved_alone(ask("h_first", "40.00"), alice)

    assert rounds.standing(ask("h_second", "60.00", title="shipping refund")).required == 1  # 100 is not over 100


def test_an_approval_older_than_the_window_does_not_count(ask, one_order_above_100, alice):
    approved_alone(ask("h_first", "49.90"), alice)
    second = ask("h_second", "60.00", title="shipping refund")

    with time_machine.travel(timezone.now() + timedelta(days=31), tick=False):
        assert rounds.standing(second).required == 1
    with time_machine.travel(timezone.now() + timedelta(days=29), tick=False):
        assert rounds.standing(second).required == 2


def test_an_amount_not_read_for_certain_on_the_subject_counts_as_over(ask, one_order_above_100, alice):
    unreadable = ask("h_bad", "1,5OO")
    standing = rounds.standing(unreadable)

    assert standing.required == 2
    assert "A-1001" in standing.requirement.why and "could not be read: treated as over 100" in standing.requirement.why
    assert standing.requirement.sure_total is None  # nothing lets it through with fewer people


def test_without_the_totals_the_condition_fails_closed(ask, one_order_above_100):
    from approvals import policies

    hold = ask("h_other", "10.00", order="B-2002")

    unknown = policies.requirement(hold, [one_order_above_100])
    assert unknown.approvals_required == 2 and unknown.sure_total is None
    assert "subject totals were not read" in unknown.why


def test_the_queue_badge_says_needs_2_on_the_second_refund_of_the_order_only(ask, one_order_above_100, alice, bob):
    first = ask("h_first", "49.90")
    second = ask("h_second", "60.00", title="shipping refund")
    other = ask("h_other", "60.00", order="B-2002")
    bobs = signed_in(bob)
    before = bobs.get(reverse("queue")).content.decode()  # the rows' requirements are kept
    assert "approvals" not in row_of(before, second)  # 60.00 alone on A-1001

    approved_alone(first, alice)
    page = bobs.get(reverse("queue")).content.decode()

    assert "Needs 2 approvals" in row_of(page, second)
    assert "refund on A-1001 total 109.90 in 30 days, over 100" in row_of(page, second)
    assert "approvals" not in row_of(page, other)


def test_the_policy_sweep_leaves_a_refund_over_the_order_total_to_people(ask, one_order_above_100, alice):
    ApprovalPolicy.objects.create(  # more specific than the subject total's: it names the env too
        name="Refunds up to 100 approve themselves",
        env_pattern="default",
        capability_pattern="refund",
        condition_key="amount",
        condition_operator="lte",
        condition_threshold=Decimal(100),
        approvals_required=0,
        auto_wait_minutes=0,
    )
    first = ask("h_first", "49.90")
    made = by_policy.approve_due(timezone.now() + timedelta(minutes=1))
    assert [decision.hold for decision in made] == [first]  # 49.90 alone: the 0-people policy pays it

    second = ask("h_second", "60.00", title="shipping refund")
    other = ask("h_other", "60.00", order="B-2002", title="shipping refund")
    made = by_policy.approve_due(timezone.now() + timedelta(minutes=1))

    assert [decision.hold for decision in made] == [other]
    assert not Decision.objects.filter(hold=second).exists()
    assert rounds.standing(second).required == 2


def test_only_the_refund_over_its_orders_total_escalates(ask, alice):
    escalating = escalation_policy(name="One order above 100", subject_total_over=Decimal(100), capability_pattern="*")
    approved_alone(ask("h_first", "49.90"), alice)
    second = ask("h_second", "60.00", title="shipping refund")
    other = ask("h_other", "60.00", order="B-2002")

    made = sweep_at(max(second.first_seen_at, other.first_seen_at) + timedelta(minutes=31))

    assert [(one.hold, one.policy) for one in made] == [(second, escalating)]


@pytest.mark.django_db(transaction=True)
def test_two_refunds_of_one_order_approved_at_once_do_not_both_go_with_one_person(ask, one_order_above_100, alice, bob):
    lamp, shipping = ask("h_lamp", "49.90"), ask("h_shipping", "60.00", title="shipping refund")

    made = at_once(
        lambda: decisions.submit(lamp, alice, approve_all(lamp)),
        lambda: decisions.submit(shipping, bob, approve_all(shipping)),
    )

    assert sorted(type(one).__name__ for one in made) == ["Approval", "Decision"]  # the later one waits for a second
    assert Decision.objects.count() == 1


def row_of(page: str, hold) -> str:
    start = page.index(f'id="row-{hold.pk}"')
    return page[start : page.index("</tr>", start)]
