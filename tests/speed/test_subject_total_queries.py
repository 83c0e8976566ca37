"""The queue's badges read the subject totals of a page's holds in a few queries whatever their number, and find
what ``holds.related.totals.totals`` finds for each hold alone."""

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import ApprovalPolicy
from holds.deciding import decisions
from holds.mirror import sync
from holds.models import Decision, Hold
from holds.related import totals
from tests.helpers.handoff import approve_all

pytestmark = pytest.mark.django_db

MOST_QUERIES = 8  # their subjects, the holds and items, the rows sharing them, those holds and items, decisions, items


def refunds_on_orders(platform_client, platform_state, alice, orders: range) -> list[Hold]:
    """Per order: a 49.90 refund approved, and a 60.00 refund of shipping asked after it, both open on the platform."""
    for number in orders:
        for hold_id, title, amount in ((f"a_{number}", "refund", "49.90"), (f"b_{number}", "shipping", "60.00")):
            data = {"order_id": f"O-{number}", "amount": amount}
            platform_state.add_hold(
                "default",
                {"hold_id": hold_id, "capability": "refund", "items": [{"id": "call_1", "title": title, "data": data}]},
            )
    sync.sync_env(platform_client, "default")
    for hold in Hold.objects.filter(hold_id__startswith="a_").prefetch_related("items"):
        if not Decision.objects.filter(hold=hold).exists():
            assert isinstance(decisions.submit(hold, alice, approve_all(hold)), Decision)
    return list(Hold.objects.prefetch_related("items").order_by("pk"))


def test_a_pages_subject_totals_cost_the_same_few_queries_for_4_or_40_holds(platform_client, platform_state, alice):
    policy = ApprovalPolicy.objects.create(
        name="One order above 100", subject_total_over=Decimal(100), approvals_required=2
    )
    counted = []
    for orders in (range(2), range(2, 20)):
        holds = refunds_on_orders(platform_client, platform_state, alice, orders)
        with CaptureQueriesContext(connection) as queries:
            found = totals.totals_of_many(holds, 30, [policy])
        counted.append(len(queries.captured_queries))
        for hold in holds:
            alone = totals.totals(hold, 30)
            assert {value: total.within(30) for value, total in found[hold.pk].items()} == {
                value: total.within(30) for value, total in alone.items()
            }
    assert counted[0] == counted[1] <= MOST_QUERIES
    second = next(hold for hold in holds if hold.hold_id == "b_7")
    assert found[second.pk]["o-7"].within(30) == (Decimal("109.9000"), None)
