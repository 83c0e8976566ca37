"""The filters' values, once kept one per field, are kept as each open hold's env, agent and capability together."""

import pytest

from holds.models import FilterValue, SyncState
from tests.helpers.migrating import back_to, bare_hold, from_nothing, latest, migrate


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_the_open_holds_combinations_and_names_a_new_cache_key():
    with from_nothing(back_to(("holds", "0012_sync_filter_values_version"))) as old:
        Hold = old.get_model("holds", "Hold")
        for hold_id, agent, capability, status in [
            ("h_1", "billing-bot", "refund", "open"),
            ("h_2", "billing-bot", "refund", "open"),
            ("h_3", "support-bot", "c" * 201, "open"),
            ("h_4", "old-bot", "reply", "decided"),
        ]:
            bare_hold(Hold, hold_id, agent=agent, capability=capability, status=status)
        old.get_model("holds", "FilterValue").objects.create(env="default", kind="agent", value="billing-bot")
        old.get_model("holds", "SyncState").objects.create(env="default", filter_values_version="before")

        migrate(latest())

        combinations = set(FilterValue.objects.values_list("env", "agent", "capability"))
        assert combinations == {("default", "billing-bot", "refund"), ("default", "support-bot", "")}  # too long: blank
        assert SyncState.objects.get(env="default").filter_values_version not in ("before", "")
