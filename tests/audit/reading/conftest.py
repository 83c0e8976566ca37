"""Auditors read the trail: Ada the auditor, signed in, and Alice's decision on h_13 applied with one item edited."""

import pytest

from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from reviewqueue import roles
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import make_user


@pytest.fixture
def ada(db):
    return make_user("ada", roles.AUDITORS, first_name="Ada", last_name="Auditor")


@pytest.fixture
def ada_client(client, ada):
    client.force_login(ada)
    return client


@pytest.fixture
def decided(samples, alice, platform_client):
    """Alice's decision on h_13, applied: one refund approved, the other cut from 129.00 to 100.00."""
    choices = [
        ItemChoice("toolu_01A9xQ2mZ", "approve"),
        ItemChoice(
            "toolu_01B7kR4pW",
            "edit",
            {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"},
            "partial refund",
        ),
    ]
    decision = decisions.submit(samples["h_13"], alice, choices, duplicates_checked=every_duplicate(samples["h_13"]))
    delivery.deliver(decision.pk, platform_client)
    decision.refresh_from_db()
    return decision
