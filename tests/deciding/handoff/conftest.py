"""Handing holds to each other: Billing's agent ``billing-bot`` and Support's ``support-bot`` share the platform.
Alice and Bob see every hold; Carol reviews for Billing only, so Support's holds are out of her scope."""

import pytest
from django.test import Client

from reviewqueue import roles
from tests.helpers.users import add_hold, make_user, scoped_group


@pytest.fixture
def billing(platform_state, platform_client):
    return add_hold(platform_state, platform_client, "billing-bot", capability="refund")


@pytest.fixture
def support(platform_state, platform_client):
    return add_hold(platform_state, platform_client, "support-bot", capability="reply")


@pytest.fixture
def carol(db):
    carol = make_user("carol", roles.REVIEWERS, first_name="Carol", last_name="Chen")
    carol.groups.add(scoped_group("Billing", agent="billing-*"))
    return carol


@pytest.fixture
def alice_client(alice):
    client = Client()
    client.force_login(alice)
    return client
