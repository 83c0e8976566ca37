"""Upgrading stores the subjects of every hold mirrored before, by the rule sync applies; a hold whose items hold
nothing readable gets none and stops no other."""

import pytest

from holds.models import HoldSubject
from tests.helpers.migrating import back_to, bare_hold, from_nothing, latest, migrate


@pytest.mark.django_db(transaction=True)
def test_the_migration_stores_the_subjects_of_the_holds_mirrored_before():
    with from_nothing(back_to(("holds", "0020_tail_and_reconciling_walk"))) as old:
        Hold, HoldItem = old.get_model("holds", "Hold"), old.get_model("holds", "HoldItem")
        for number, (item_id, title, data, status) in enumerate(
            [
                ("A-1001", "A-1001 · 49.90", {"order_id": "A-1001", "amount": "49.90"}, "open"),
                ("call_1", "refund", {"order_id": " #a-1001", "amount": "49.90"}, "decided"),
                ("call_1", "refund", ["order_id", {"nested": "x" * 10_000}], "open"),
                ("toolu_1", "Refund 129.00 on A-1002", {"orderId": "A-1002", "customer_id": "x" * 500}, "open"),
            ]
        ):
            hold = bare_hold(Hold, f"h_{number}", status=status)
            HoldItem.objects.create(hold=hold, position=0, item_id=item_id, title=title, data=data)

        migrate(latest())

        stored = HoldSubject.objects.order_by("hold__hold_id", "pk")
        assert [(row.hold.hold_id, row.key, row.value, row.action_kind) for row in stored] == [
            ("h_0", "order_id", "a-1001", ""),
            ("h_1", "order_id", "a-1001", "refund"),
            ("h_3", "orderId", "a-1002", "refund"),
        ]
