"""Remembered approvals: refund-bot's refunds may be remembered (three a day), and a first refund of 12.00 to
remember."""

import pytest

from approvals.models import RememberAllowance
from tests.helpers.remembered import add_refund


@pytest.fixture
def allowed(db):
    return RememberAllowance.objects.create(agent_pattern="refund-bot", capability_pattern="refund", daily_cap_count=3)


@pytest.fixture
def first(platform_client, platform_state, db):
    return add_refund(platform_client, platform_state, "h_first", "12.00")
