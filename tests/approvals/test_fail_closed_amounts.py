"""Four eyes and "not above what the agent asked" hold however the agent writes an amount (issue 21, High).

A refund of "1,500.00" under an "amount > 100" two-approver policy used to need one approval, and
its one reviewer could raise it to 999,999.00. Every reader of item numbers now reads it as 1500,
and a value it cannot read for certain fails closed: the policy applies and says why, the edit is
refused, and the queue shows the hold first under "largest first".
"""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse

from approvals.models import Approval, ApprovalPolicy
from audit import stats
from holds.deciding import describe
from holds.mirror.amounts import UNREADABLE
from holds.models import Decision, Hold
from tests.helpers import escalation as escalating
from tests.helpers.approval_history import mirrored
from tests.helpers.approvals_setup import decision_posts, signed_in
from tests.helpers.migrating import back_to, bare_hold, from_nothing, latest, migrate
from tests.helpers.reviewing import confirm, field_name, review_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def over_100(db):
    return ApprovalPolicy.objects.create(
        name="Over 100",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal(100),
        approvals_required=2,
    )


def test_one_reviewer_can_neither_approve_alone_nor_raise_a_grouped_amount(
    alice, over_100, platform_state, platform_client, immediate_delivery
):
    hold = mirrored(platform_state, platform_client, "h_grouped", amount="1,500.00")
    alices = signed_in(alice)

    raised = alices.post(
        reverse("hold-review", args=[hold.pk]), review_form(hold, **{field_name(hold, 0, "amount"): "999,999.00"})
    )
    approved = confirm(alices, hold)

    assert "must not be more than the 1,500.00 the agent asked for" in raised.content.decode()
    assert approved.status_code == 302 and Approval.objects.filter(hold=hold).count() == 1
    assert not Decision.objects.filter(hold=hold).exists() and decision_posts(platform_state) == []
    assert "Needs 2 approvals: amount 1,500.00 &gt; 100" in alices.get(reverse("hold", args=[hold.pk])).content.decode()


def test_a_condition_on_the_amount_reads_every_amount_key_the_queue_reads(
    alice, over_100, platform_state, platform_client
):
    hold = mirrored(platform_state, platform_client, "h_refund_amount", refund_amount="1500.00")

    page = signed_in(alice).get(reverse("hold", args=[hold.pk])).content.decode()

    assert hold.amount == Decimal(1500)
    assert "Needs 2 approvals: refund_amount 1,500.00 &gt; 100" in page


def test_an_unreadable_amount_makes_the_policy_apply_and_the_page_says_why(
    alice, over_100, platform_state, platform_client, immediate_delivery
):
    hold = mirrored(platform_state, platform_client, "h_unreadable", amount="1,5OO")
    alices = signed_in(alice)

    confirm(alices, hold)
    page = alices.get(reverse("hold", args=[hold.pk])).content.decode()

    assert "Needs 2 approvals: amount &#x27;1,5OO&#x27; could not be read: treated as &gt; 100" in page
    assert not Decision.objects.filter(hold=hold).exists() and decision_posts(platform_state) == []


def test_an_ambiguous_amount_makes_the_policy_apply_with_both_readings(
    alice, over_100, platform_state, platform_client
):
    hold = mirrored(platform_state, platform_client, "h_ambiguous", amount="1,500")

    page = signed_in(alice).get(reverse("hold", args=[hold.pk])).content.decode()

    assert "Needs 2 approvals: amount &#x27;1,500&#x27; could be 1.5 or 1,500: treated as &gt; 100" in page
    assert hold.amount == Decimal(1500)  # the larger reading


def test_a_doubtful_amount_never_picks_a_more_specific_policy_needing_fewer_approvals(
    alice, over_100, platform_state, platform_client
):
    ApprovalPolicy.objects.create(
        name="Small refunds",
        env_pattern="default",
        condition_key="amount",
        condition_operator="lt",
        condition_threshold=Decimal(10),
        approvals_required=1,
    )
    hold = mirrored(platform_state, platform_client, "h_doubtful", amount="1.500")

    page = signed_in(alice).get(reverse("hold", args=[hold.pk])).content.decode()

    assert "Needs 2 approvals: amount &#x27;1.500&#x27; could be 1.5 or 1,500: treated as &gt; 100" in page


def test_an_amount_whose_original_cannot_be_read_cannot_be_changed(alice, platform_state, platform_client):
    hold = mirrored(platform_state, platform_client, "h_edit_unreadable", amount="1,500")

    response = signed_in(alice).post(
        reverse("hold-review", args=[hold.pk]), review_form(hold, **{field_name(hold, 0, "amount"): "10"})
    )

    assert (
        "can&#x27;t be changed: the agent&#x27;s &#x27;1,500&#x27; could be 1.5 or 1,500" in response.content.decode()
    )
    assert 'id="confirm-form"' not in response.content.decode()


def test_the_queue_shows_an_unreadable_amount_first_in_largest_first_and_within_any_min_amount(
    alice_client, platform_state, platform_client
):
    mirrored(platform_state, platform_client, "h_large", amount="900000.00")
    unreadable = mirrored(platform_state, platform_client, "h_unreadable", amount="1,5OO")
    mirrored(platform_state, platform_client, "h_small", amount="5.00")

    largest_first = alice_client.get(reverse("queue"), {"sort": "amount"})
    at_least = alice_client.get(reverse("queue"), {"sort": "amount", "min_amount": "1000000"})
    plain_at_least = alice_client.get(reverse("queue"), {"min_amount": "1000000"})

    assert unreadable.amount == UNREADABLE
    assert [row.hold.hold_id for row in largest_first.context["rows"]] == ["h_unreadable", "h_large", "h_small"]
    assert [row.hold.hold_id for row in at_least.context["rows"]] == ["h_unreadable"]
    assert [row.hold.hold_id for row in plain_at_least.context["rows"]] == ["h_unreadable"]
    assert "1,5OO (unreadable)" in largest_first.content.decode()


def test_the_sentence_and_the_statistics_read_amounts_the_same_way():
    assert describe.sentence("refund", {"amount": "$1,500.00"}) == "Refunds $1,500.00"
    assert (
        describe.sentence("refund", {"amount": "1,500", "currency": "EUR"})
        == "Refunds 1,500 EUR (unreadable: 1.5 or 1,500)"
    )
    assert describe.sentence("refund", {"total": True}) == "Refunds true (unreadable)"
    assert stats.amount_of({"amount": "1,500.00"}) == Decimal(1500)
    assert stats.amount_of({"amount": "1,500"}) == Decimal(1500)


def test_the_queue_row_the_sentence_and_the_statistics_read_every_amount_key_the_policies_read(
    alice_client, platform_state, platform_client
):
    mirrored(platform_state, platform_client, "h_price", price="1,500.00", currency="EUR")
    mirrored(platform_state, platform_client, "h_cents", amount_cents=2599)

    rows = {row.hold.hold_id: row.amounts for row in alice_client.get(reverse("queue")).context["rows"]}

    assert rows == {"h_price": ["1,500.00 EUR"], "h_cents": ["25.99"]}
    assert describe.sentence("refund", {"refundAmount": "1,5OO"}) == "Refunds 1,5OO (unreadable)"
    assert describe.sentence("refund", {"order_id": "A-1", "amount_cents": 2599}) == "Refunds 25.99 on order A-1"
    assert stats.amount_of({"order_id": "A-1", "amount_cents": "2599"}) == Decimal("25.99")
    assert stats.amount_of({"price": "unknown", "total": "12.50"}) == Decimal("12.50")


@pytest.mark.django_db(transaction=True)
def test_the_migration_stores_again_the_amounts_read_by_the_old_rule():
    with from_nothing(back_to(("holds", "0012_sync_filter_values_version"))) as old:
        OldHold, OldItem = old.get_model("holds", "Hold"), old.get_model("holds", "HoldItem")
        for hold_id, amount in {"h_grouped": "1,500.00", "h_unreadable": "1,5OO", "h_plain": "20.00"}.items():
            hold = bare_hold(OldHold, hold_id, agent="a", capability="c", amount=None)
            OldItem.objects.create(hold=hold, position=0, item_id="i", data={"amount": amount})

        migrate(latest())

        assert dict(Hold.objects.values_list("hold_id", "amount")) == {
            "h_grouped": Decimal(1500),
            "h_unreadable": UNREADABLE,
            "h_plain": Decimal(20),
        }


def test_a_policy_on_the_amount_escalates_a_hold_whose_amount_is_under_another_amount_key(
    platform_state, platform_client, fiona
):
    escalating.policy(condition_key="amount", condition_operator="gt", condition_threshold=Decimal(100))
    hold = mirrored(platform_state, platform_client, "h_total", total="1,500.00")

    made = escalating.sweep_at(hold.first_seen_at + timedelta(minutes=31))

    assert [escalation.hold for escalation in made] == [hold]
