"""Fixtures of the speed tests: a queue of thousands of open holds."""

import pytest
from django.db import connection

from holds.mirror import sync


@pytest.fixture
def thousands_of_open_holds(platform_client, platform_state):
    """3,000 generated open holds and one with order A-55010, mirrored by one sync, with fresh statistics."""
    wanted = platform_state.add_hold(
        "default",
        {"agent": "refund-bot", "items": [{"id": "A-55010", "data": {"order_id": "A-55010", "amount": "12.00"}}]},
    )["hold_id"]
    platform_state.generate("default", 3000)
    sync.sync_env(platform_client, "default")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE holds_hold")  # as autovacuum soon would; no VACUUM, which would empty a pending list
    return wanted
