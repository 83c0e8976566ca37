"""Sync mirrors the platform's open holds: new, changed, unchanged, vanished, and failures."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from audit import chain
from audit.models import AuditChainHead, AuditEvent
from holds.mirror import inserting, sync, writing
from holds.models import FilterValue, Hold, HoldItem, QuarantinedHold, SyncState
from holds.sweeps import expiry
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db

# A sync's own bookkeeping: its lease and result, and the counters behind the sync metrics.
BOOKKEEPING = ("holds_syncstate", "operations_syncstats")


def writes(queries) -> list[str]:
    return [
        q["sql"]
        for q in queries
        if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE", "COPY")
        and not any(table in q["sql"] for table in BOOKKEEPING)
    ]


def test_a_new_hold_is_mirrored_with_its_items_in_order(platform_client, platform_state):
    platform_state.load_samples()

    result = sync.sync_env(platform_client, "default")

    hold = Hold.objects.get(env="default", hold_id="h_13")
    assert result.created == result.open == Hold.objects.count()
    assert hold.status == "open" and hold.agent == "upsonic-support"
    assert hold.first_seen_at == hold.last_synced_at
    assert [item.item_id for item in hold.items.all()] == [item["id"] for item in hold.payload["items"]]
    assert hold.items.first().data["amount"] == "49.90"


def test_a_second_sync_of_unchanged_holds_writes_nothing(platform_client, platform_state):
    platform_state.load_samples()
    sync.sync_env(platform_client, "default")
    before = {h.hold_id: h.last_synced_at for h in Hold.objects.all()}

    with CaptureQueriesContext(connection) as captured:
        result = sync.sync_env(platform_client, "default")

    assert (result.created, result.updated, result.closed) == (0, 0, 0)
    assert writes(captured.captured_queries) == []
    assert {h.hold_id: h.last_synced_at for h in Hold.objects.all()} == before


def test_a_changed_hold_is_updated_and_its_items_replaced(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {"question": "Refund 10.00?"})["hold_id"]
    sync.sync_env(platform_client, "default")
    changed = platform_state.get_hold("default", hold_id)
    changed["question"] = "Refund 12.00?"
    changed["items"] = [{"id": "A-9", "title": "A-9 · 12.00", "data": {"amount": "12.00"}}]

    result = sync.sync_env(platform_client, "default")

    hold = Hold.objects.get(hold_id=hold_id)
    assert result.updated == 1
    assert hold.question == "Refund 12.00?"
    assert list(hold.items.values_list("item_id", "data")) == [("A-9", {"amount": "12.00"})]


def test_a_hold_decided_elsewhere_is_kept_with_who_and_when(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {})["hold_id"]
    sync.sync_env(platform_client, "default")
    platform_state.decide_elsewhere("default", hold_id, "bob@example.com")

    result = sync.sync_env(platform_client, "default")

    hold = Hold.objects.get(hold_id=hold_id)
    assert result.closed == 1
    assert hold.status == "decided"
    assert hold.decided_by == "bob@example.com" and hold.decided_at is not None
    assert hold.closed_at is not None
    assert hold.items.count() == 1


@pytest.mark.parametrize("ending, status", [("expire", "expired"), ("cancel", "cancelled")])
def test_an_expired_or_cancelled_hold_records_its_final_state(platform_client, platform_state, ending, status):
    hold_id = platform_state.add_hold("default", {})["hold_id"]
    sync.sync_env(platform_client, "default")
    getattr(platform_state, ending)("default", hold_id)

    sync.sync_env(platform_client, "default")

    assert Hold.objects.get(hold_id=hold_id).status == status


def test_a_vanished_hold_is_fetched_only_once(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {})["hold_id"]
    sync.sync_env(platform_client, "default")
    platform_state.expire("default", hold_id)

    sync.sync_env(platform_client, "default")
    sync.sync_env(platform_client, "default")

    fetched = [r for r in platform_state.requests if r["path"].endswith(f"/holds/{hold_id}")]
    assert len(fetched) == 1


def test_a_platform_failure_leaves_the_mirror_intact_and_records_the_error(platform_client, platform_state):
    platform_state.load_samples()
    sync.sync_env(platform_client, "default")
    mirrored = list(Hold.objects.order_by("pk").values())
    platform_state.expire("default", "h_12")
    platform_state.push_faults([{"status": 503}])

    result = sync.sync_env(platform_client, "default")

    state = SyncState.objects.get(env="default")
    assert "503" in result.error
    assert list(Hold.objects.order_by("pk").values()) == mirrored
    assert "503" in state.last_error and state.failing
    assert state.error_source == SyncState.ErrorSource.PLATFORM
    assert state.lease_until is None


def test_a_failure_on_a_later_page_closes_nothing_and_the_next_sync_completes_the_mirror(
    platform_client, platform_state, monkeypatch
):
    platform_state.add_hold("default", {"hold_id": "h_gone"})
    sync.sync_env(platform_client, "default")
    platform_state.expire("default", "h_gone")
    monkeypatch.setattr("holds.mirror.platform.PAGE_SIZE", 2)
    monkeypatch.setattr(writing, "WRITE_BATCH", 2)  # each page is a batch, written as it arrives
    for _ in range(5):
        platform_state.add_hold("default", {})
    platform_state.push_faults([{"delay": 0}, {"drop": True}])

    failed = sync.sync_env(platform_client, "default")

    assert "dropped" in failed.error
    assert Hold.objects.get(hold_id="h_gone").status == Hold.Status.OPEN  # a partial listing proves no hold gone
    assert Hold.objects.count() == 1 + 2  # the first page's holds, written before the failure

    completed = sync.sync_env(platform_client, "default")

    assert completed.error == "" and completed.created == 3 and completed.closed == 1
    assert Hold.objects.get(hold_id="h_gone").status == Hold.Status.EXPIRED
    assert AuditEvent.objects.filter(kind="hold_seen").count() == 6  # each hold seen once, none twice


def test_success_after_failure_clears_the_failing_state(platform_client, platform_state):
    platform_state.push_faults([{"status": 500}])
    sync.sync_env(platform_client, "default")

    sync.sync_env(platform_client, "default")

    assert not SyncState.objects.get(env="default").failing


@pytest.mark.django_db(transaction=True)
def test_two_overlapping_syncs_of_one_env_run_once(platform_client, platform_state, settings):
    platform_state.add_hold("default", {})
    platform_state.push_faults([{"delay": 1.5}])
    results = []
    first = threading.Thread(target=lambda: results.append(sync.sync_env(platform_client, "default")))
    first.start()
    wait_until(lambda: SyncState.objects.filter(env="default", lease_until__isnull=False).exists(), interval=0.01)

    second = sync.sync_env(platform_client, "default")
    first.join()

    assert second.skipped
    assert not results[0].skipped and results[0].created == 1
    assert len([r for r in platform_state.requests if r["path"].endswith("/holds")]) == 1


def test_queries_do_not_grow_with_unchanged_holds(platform_client, platform_state, django_assert_max_num_queries):
    platform_state.generate("default", 10)
    sync.sync_env(platform_client, "default")
    with CaptureQueriesContext(connection) as few:
        sync.sync_env(platform_client, "default")
    platform_state.generate("default", 990)
    with django_assert_max_num_queries(30):
        first = sync.sync_env(platform_client, "default")

    with CaptureQueriesContext(connection) as many:
        second = sync.sync_env(platform_client, "default")

    assert first.created == 990 and second.open == 1000 and second.updated == 0
    assert len(many.captured_queries) == len(few.captured_queries) <= 7


def test_an_unchanged_resync_makes_seven_queries_and_writes_nothing(platform_client, platform_state):
    platform_state.load_samples()
    platform_state.generate("default", 300)
    sync.sync_env(platform_client, "default")
    mirror = mirrored_rows()
    filters = list(FilterValue.objects.order_by("pk").values())

    with CaptureQueriesContext(connection) as captured:
        result = sync.sync_env(platform_client, "default")

    statements = [query["sql"].split()[0] for query in captured.captured_queries]
    assert result.open == Hold.objects.count() and (result.created, result.updated, result.closed) == (0, 0, 0)
    # Take the lease, read the sync state (with whether anything is in quarantine), read the open holds,
    # look for holds our expiry closed, record the result, count the sync for the metrics (read, add).
    assert statements == ["UPDATE", "SELECT", "SELECT", "SELECT", "UPDATE", "SELECT", "UPDATE"]
    assert writes(captured.captured_queries) == []
    assert mirrored_rows() == mirror
    assert list(FilterValue.objects.order_by("pk").values()) == filters


def test_a_sync_with_a_hold_in_quarantine_reads_and_keeps_it(platform_client, platform_state):
    platform_state.load_samples()
    platform_state.add_hold("default", {"agent": "a" * 250})
    sync.sync_env(platform_client, "default")

    with CaptureQueriesContext(connection) as captured:
        result = sync.sync_env(platform_client, "default")

    assert result.quarantined == 1 and QuarantinedHold.objects.get().times_seen == 2
    assert any("holds_quarantinedhold" in query["sql"] for query in captured.captured_queries)


def mirrored_rows() -> dict[str, list[dict]]:
    """Every row sync writes, in the order written."""
    return {
        "holds": list(Hold.objects.order_by("pk").values()),
        "items": list(HoldItem.objects.order_by("pk").values()),
        "audit": list(AuditEvent.objects.order_by("sequence").values()),
        "head": list(AuditChainHead.objects.values()),
        "quarantine": list(
            QuarantinedHold.objects.order_by("key").values(
                "env", "key", "hold_id", "reason", "excerpt", "first_seen_at", "last_seen_at", "times_seen"
            )
        ),
    }


def sequences_at() -> list[tuple[str, int, bool]]:
    """Where the id sequences of the tables sync writes stand."""
    with connection.cursor() as cursor:
        positions = []
        for table in ("holds_hold", "holds_holditem", "audit_auditevent"):
            cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
            (sequence,) = cursor.fetchone()
            cursor.execute(f"SELECT last_value, is_called FROM {sequence}")
            positions.append((sequence, *cursor.fetchone()))
        return positions


def restore_sequences(positions) -> None:
    with connection.cursor() as cursor:
        for sequence, last_value, is_called in positions:
            cursor.execute("SELECT setval(%s, %s, %s)", [sequence, last_value, is_called])


def test_copy_writes_exactly_the_rows_the_orm_writes_hostile_text_included(
    platform_client, platform_state, monkeypatch
):
    platform_state.load_samples()  # h_16 is the untrusted-text fixture: markup, RTL marks, emoji
    platform_state.add_hold(
        "default",
        {
            "question": "Refund\x00 now\udfff",
            "items": [
                {
                    "id": "call_" + "9" * 400,
                    "title": "t\ud800\t\\N\n",
                    "data": {"note\x00": "a\x00b\\.", "amount": 1e20, "tiny": -0.0},
                }
            ],
        },
    )
    platform_state.add_hold("default", {"agent": "a" * 250})  # quarantined by either path
    platform_state.generate("default", 30)
    frozen = datetime(2026, 11, 30, 3, 0, 0, 123456, tzinfo=UTC)
    monkeypatch.setattr("django.utils.timezone.now", lambda: frozen)
    monkeypatch.setattr(writing, "WRITE_BATCH", 7)  # several batches, each chained onto the one before
    positions = sequences_at()
    with transaction.atomic(), CaptureQueriesContext(connection) as orm_queries:
        monkeypatch.setattr(inserting, "_inserts_by_copy", lambda: False)
        through_the_orm = sync.sync_env(platform_client, "default")
        written_by_the_orm = mirrored_rows()
        transaction.set_rollback(True)
    restore_sequences(positions)
    monkeypatch.setattr(inserting, "_inserts_by_copy", lambda: True)

    with CaptureQueriesContext(connection) as captured:
        through_copy = sync.sync_env(platform_client, "default")

    assert through_copy == through_the_orm and through_copy.created == Hold.objects.count() > 30
    assert not any(query["sql"].startswith("COPY") for query in orm_queries.captured_queries)
    assert any(query["sql"].startswith("COPY") for query in captured.captured_queries)
    assert mirrored_rows() == written_by_the_orm
    hostile = Hold.objects.get(question="Refund\ufffd now\ufffd")
    assert hostile.items.get().data == {"note\ufffd": "a\ufffdb\\.", "amount": 1e20, "tiny": 0.0}
    assert AuditEvent.objects.get(hold_id=hostile.hold_id).payload["items"][0]["data"]["amount"] == 10**20
    assert chain.verify().broken is None


def test_one_hostile_hold_neither_blocks_the_others_nor_breaks_the_database(platform_client, platform_state):
    platform_state.add_hold(
        "default",
        {
            "question": "Refund\x00 now",
            "items": [
                {"id": "call_" + "9" * 400, "title": "t\ud800", "data": {"note\x00": "a\x00b", "amount": "1.00"}}
            ],
        },
    )
    platform_state.add_hold("default", {"question": "An ordinary refund"})

    result = sync.sync_env(platform_client, "default")

    hostile = Hold.objects.get(question="Refund\ufffd now")
    assert result.error == "" and result.created == 2
    assert hostile.items.get().data == {"note\ufffd": "a\ufffdb", "amount": "1.00"}
    assert len(hostile.items.get().item_id) == 405


def test_an_unexpected_failure_is_recorded_not_reported_as_success(platform_client, platform_state, monkeypatch):
    platform_state.add_hold("default", {})
    monkeypatch.setattr(writing, "store_listed", lambda *arguments: 1 / 0)

    with pytest.raises(ZeroDivisionError):
        sync.sync_env(platform_client, "default")

    state = SyncState.objects.get(env="default")
    assert state.failing and "ZeroDivisionError" in state.last_error
    assert state.error_source == SyncState.ErrorSource.REVIEW_QUEUE


def test_a_hold_closed_here_is_not_reopened_by_an_older_listing(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {})["hold_id"]
    sync.sync_env(platform_client, "default")
    Hold.objects.filter(hold_id=hold_id).update(status="expired")

    sync.sync_env(platform_client, "default")

    assert Hold.objects.get(hold_id=hold_id).status == "expired"


def test_a_hold_expired_here_while_sync_writes_its_change_stays_closed(platform_client, platform_state, monkeypatch):
    hold_id = platform_state.add_hold("default", {"question": "Refund 10.00?"})["hold_id"]
    sync.sync_env(platform_client, "default")
    platform_state.get_hold("default", hold_id)["question"] = "Refund 12.00?"
    expires_at = Hold.objects.get(hold_id=hold_id).expires_at
    write_batch = writing.write_batch

    def sweep_then_write(*arguments):  # the sweep runs after sync read the open holds, before it writes
        assert [hold.hold_id for hold in expiry.sweep(expires_at + timedelta(seconds=1))] == [hold_id]
        return write_batch(*arguments)

    monkeypatch.setattr(writing, "write_batch", sweep_then_write)
    result = sync.sync_env(platform_client, "default")

    hold = Hold.objects.get(hold_id=hold_id)
    assert result.updated == 0
    assert (hold.status, hold.question) == ("expired", "Refund 10.00?")
    assert hold.closed_at is not None


def test_an_expiry_learned_by_sync_tells_the_auditors_and_ends_the_claim(
    platform_client, platform_state, alice, audrey
):
    from holds import lifecycle
    from notifications.models import Notification

    hold_id = platform_state.add_hold("default", {})["hold_id"]
    sync.sync_env(platform_client, "default")
    hold = Hold.objects.get(hold_id=hold_id)
    lifecycle.claim(hold, alice)
    platform_state.expire("default", hold_id)

    sync.sync_env(platform_client, "default")

    hold.refresh_from_db()
    assert hold.status == "expired" and hold.claimed_by is None
    assert Notification.objects.filter(event="expired", hold=hold, user__username="audrey").exists()


def test_a_hold_that_ends_with_ids_past_storing_records_its_end_and_keeps_its_ids(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {"agent": "support-bot"})["hold_id"]
    sync.sync_env(platform_client, "default")
    platform_state.decide_elsewhere("default", hold_id, "bob@example.com")
    platform_state.get_hold("default", hold_id)["agent"] = "a" * 250

    result = sync.sync_env(platform_client, "default")

    hold = Hold.objects.get(hold_id=hold_id)
    assert result.error == "" and result.closed == 1
    assert hold.status == "decided" and hold.decided_by == "bob@example.com"
    assert hold.agent == "support-bot"
