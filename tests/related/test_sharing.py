"""The holds sharing a subject with another hold are marked on every path that writes subjects, whichever of them was
written first, and the queue looks for possible duplicates among them alone; two holds given one subject by two
writers at once are marked by the hourly sweep, and upgrading marks the open holds mirrored before."""

import time

import pytest
from django.db import transaction

from holds import tasks
from holds.mirror import inserting, sync
from holds.models import Hold, HoldSubject, SharedHold, SubjectKeys
from holds.related import duplicates, sharing, stored
from operations.models import SweepStats
from tests.helpers.concurrently import at_once
from tests.helpers.migrating import back_to, bare_hold, latest, migrate


def refund(platform_state, hold_id: str, order_id: str, **data) -> None:
    items = [{"id": "call_1", "title": "refund", "data": {"order_id": order_id, "amount": "10.00", **data}}]
    platform_state.add_hold("default", {"hold_id": hold_id, "agent": "support-agno", "items": items})


def marked() -> set[str]:
    return set(Hold.objects.filter(pk__in=SharedHold.objects.values("hold")).values_list("hold_id", flat=True))


def flagged(*hold_ids: str) -> set[str]:
    pks = {hold.pk: hold.hold_id for hold in Hold.objects.filter(hold_id__in=hold_ids)}
    return {pks[pk] for pk in duplicates.flagged(list(pks), None)}


def filtered() -> set[str]:
    return set(Hold.objects.filter(duplicates.flagged_q(None)).values_list("hold_id", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize("by_copy", [True, False], ids=["COPY", "ORM"])
def test_holds_are_marked_once_another_shares_a_subject_in_the_same_sync_or_a_later_one(
    platform_client, platform_state, monkeypatch, by_copy
):
    monkeypatch.setattr(inserting, "_inserts_by_copy", lambda: by_copy)
    refund(platform_state, "h_first", "A-1")
    refund(platform_state, "h_alone", "A-2")
    refund(platform_state, "h_pair_1", "A-3")
    refund(platform_state, "h_pair_2", " #a-3")
    sync.sync_env(platform_client, "default")
    after_first_sync = marked()

    refund(platform_state, "h_second", "a-1")
    sync.sync_env(platform_client, "default")

    assert after_first_sync == {"h_pair_1", "h_pair_2"}
    assert marked() == {"h_pair_1", "h_pair_2", "h_first", "h_second"}
    assert flagged("h_first", "h_alone", "h_second") == {"h_first", "h_second"}


@pytest.mark.django_db
def test_a_third_hold_on_a_subject_is_marked_and_a_hold_naming_it_twice_counts_once(platform_client, platform_state):
    refund(platform_state, "h_1", "A-1")
    sync.sync_env(platform_client, "default")
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_twice",
            "agent": "support-agno",
            "items": [
                {"id": "call_1", "title": "refund", "data": {"order_id": "A-2", "amount": "1.00"}},
                {"id": "call_2", "title": "refund", "data": {"order_id": "a-2", "amount": "2.00"}},
            ],
        },
    )
    sync.sync_env(platform_client, "default")
    alone = marked()
    for hold_id, order_id in [("h_2", "A-1"), ("h_3", "A-1"), ("h_other", "A-2")]:
        refund(platform_state, hold_id, order_id)
        sync.sync_env(platform_client, "default")

    assert alone == set()
    assert marked() == {"h_1", "h_2", "h_3", "h_twice", "h_other"}
    assert flagged("h_1", "h_2", "h_3", "h_twice", "h_other") == {"h_1", "h_2", "h_3", "h_twice", "h_other"}


@pytest.mark.django_db
def test_a_changed_hold_and_holds_read_again_with_an_admin_s_keys_are_marked(platform_client, platform_state):
    refund(platform_state, "h_1", "A-1", sku="LAMP-1")
    refund(platform_state, "h_2", "A-2", sku="LAMP-1")
    refund(platform_state, "h_3", "A-3")
    sync.sync_env(platform_client, "default")
    before = marked()
    platform_state.get_hold("default", "h_3")["items"][0]["data"]["order_id"] = "A-1"
    sync.sync_env(platform_client, "default")
    after_change = marked()

    SubjectKeys.objects.create(agent="support-agno", keys_added="sku")
    stored.reread("support-agno", "")

    assert before == set()
    assert after_change == {"h_1", "h_3"}
    assert marked() == {"h_1", "h_2", "h_3"}
    assert flagged("h_1", "h_2", "h_3") == {"h_1", "h_2", "h_3"}


@pytest.mark.django_db
def test_the_queue_flags_only_marked_holds_and_the_sweep_marks_those_missed(platform_client, platform_state):
    refund(platform_state, "h_1", "A-1")
    refund(platform_state, "h_2", "A-1")
    refund(platform_state, "h_3", "A-2")
    sync.sync_env(platform_client, "default")
    flagged_marked, filtered_marked = flagged("h_1", "h_2", "h_3"), filtered()
    SharedHold.objects.all().delete()
    flagged_unmarked, filtered_unmarked = flagged("h_1", "h_2", "h_3"), filtered()

    swept = tasks.mark_shared_holds()

    assert flagged_marked == filtered_marked == {"h_1", "h_2"}
    assert flagged_unmarked == filtered_unmarked == set()
    assert swept == 2 and marked() == {"h_1", "h_2"}
    assert flagged("h_1", "h_2", "h_3") == filtered() == {"h_1", "h_2"}
    assert tasks.mark_shared_holds() == 0 and SharedHold.objects.count() == 2


@pytest.mark.django_db
def test_a_hold_the_sweep_cannot_mark_is_reported_and_the_others_are_marked(
    platform_client, platform_state, monkeypatch
):
    for hold_id in ("h_1", "h_bad", "h_2", "h_3"):
        refund(platform_state, hold_id, "A-1" if hold_id != "h_3" else "A-3")
    refund(platform_state, "h_4", "A-3")
    sync.sync_env(platform_client, "default")
    SharedHold.objects.all().delete()
    bad = Hold.objects.get(hold_id="h_bad").pk
    real = sharing.marked

    def failing_for_the_bad_hold(pks, subjects, marks):
        if bad in pks:
            raise RuntimeError("a failure forced on one hold")
        return real(pks, subjects, marks)

    monkeypatch.setattr(sharing, "marked", failing_for_the_bad_hold)

    swept = tasks.mark_shared_holds()

    assert swept == 4 and marked() == {"h_1", "h_2", "h_3", "h_4"}
    assert dict(SweepStats.objects.values_list("sweep", "failures")) == {sharing.SWEEP: 1}


def with_subject(holds, subjects, hold_id: str, value: str, capability: str = "support", status: str = "open"):
    """A hold with one subject, made with the models ``holds`` and ``subjects`` (those of a migration's state too)."""
    hold = bare_hold(holds, hold_id, capability=capability, status=status)
    subjects.objects.create(hold=hold, position=0, key="order_id", value=value, capability=capability)
    return hold


@pytest.mark.django_db(transaction=True)
def test_two_writers_at_once_miss_each_other_and_the_sweep_marks_both():
    def writer(hold_id: str):
        def write():
            with transaction.atomic():
                sharing.mark([with_subject(Hold, HoldSubject, hold_id, "a-9").pk])
                time.sleep(0.5)  # the other writer marks meanwhile, before this one commits

        return write

    at_once(writer("h_x"), writer("h_y"))
    missed = marked()

    swept = sharing.mark_open()

    assert missed == set()
    assert swept == 2 and marked() == {"h_x", "h_y"}


@pytest.mark.django_db(transaction=True)
def test_upgrading_marks_the_open_holds_sharing_a_subject():
    try:
        old = migrate(back_to(("holds", "0025_subjects_without_constraint")))
        old_models = old.get_model("holds", "Hold"), old.get_model("holds", "HoldSubject")
        with_subject(*old_models, "h_0", "a-1")
        with_subject(*old_models, "h_1", "a-1", status="decided")
        with_subject(*old_models, "h_2", "a-2")
        with_subject(*old_models, "h_3", "a-2", capability="billing")

        migrate(latest())

        assert marked() == {"h_0", "h_1"}
    finally:
        migrate(latest())
