"""Every kind of audit event is written by the code path that causes it: after each test the trail's chain holds;
an admin to change things in the admin."""

import pytest

from audit import chain
from tests.helpers.users import make_user


@pytest.fixture(autouse=True)
def the_chain_holds_after_each_test():
    yield
    assert chain.verify().broken is None


@pytest.fixture
def root(db):
    return make_user("root", is_superuser=True, is_staff=True)


@pytest.fixture
def root_client(client, root):
    client.force_login(root)
    return client
