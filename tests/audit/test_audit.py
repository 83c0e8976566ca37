"""The audit trail itself: appending, the hash chain, and catching a row changed behind the app's back."""

from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from audit import chain, events
from audit.models import AuditChainHead, AuditEvent, AuditImmutable, EventKind
from reviewqueue import roles
from tests.helpers.tampering import tamper
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


def verify_fails_naming(sequence: int) -> str:
    with pytest.raises(CommandError) as failure:
        call_command("verifyaudit")
    assert f"event #{sequence} " in str(failure.value)
    return str(failure.value)


# Appending


def test_an_event_takes_the_holds_env_run_and_agent_and_copies_item_facts_into_columns(samples, alice):
    hold = samples["h_13"]
    payload = {
        "items": [
            {"id": "toolu_01A9xQ2mZ", "action": "approve", "original_data": {"order_id": "A-1001", "amount": "49.90"}},
            {
                "id": "toolu_01B7kR4pW",
                "action": "edit",
                "original_data": {"amount": "129.00"},
                "data": {"amount": Decimal("100.00")},
            },
        ],
        "outcome": "applied",
    }

    event = events.record(EventKind.DECISION_SUBMITTED, actor=alice, hold=hold, payload=payload)

    stored = AuditEvent.objects.get(pk=event.pk)
    assert (stored.env, stored.hold_id, stored.run_id, stored.agent) == ("default", "h_13", hold.run_id, hold.agent)
    assert (stored.actor, stored.actor_name, stored.hold_record) == (alice, "alice", hold)
    assert stored.item_ids == ["toolu_01A9xQ2mZ", "toolu_01B7kR4pW"]
    assert stored.actions == "approve edit" and stored.outcome == "applied"
    assert {"a-1001", "49.90", "100.00", "toolu_01a9xq2mz"} <= set(stored.search_text.split("\n"))
    assert stored.payload["items"][1]["data"] == {"amount": "100.00"}  # a Decimal stays a decimal string


def test_events_form_a_chain_from_the_genesis_hash():
    first = events.record(EventKind.SIGN_IN_FAILED, payload={"username": "mallory"})
    second = events.record(EventKind.SIGN_IN_FAILED, payload={"username": "mallory"})

    assert (first.sequence, second.sequence) == (1, 2)
    assert first.prev_hash == chain.GENESIS and second.prev_hash == first.hash
    assert first.hash == chain.digest(chain.GENESIS, AuditEvent.objects.get(sequence=1))
    assert AuditChainHead.objects.get().sequence == 2


def test_a_value_jsonb_would_rewrite_is_stored_and_hashed_as_it_reads_back():
    events.record(
        EventKind.SETTING_CHANGED,
        payload={"big": 1e20, "huge": 1e308, "zero": -0.0, "nul": "a\x00b", "list": [1.5, "x"]},
    )

    assert chain.verify().broken is None
    assert AuditEvent.objects.get().payload == {
        "big": 10**20,
        "huge": 10**308,
        "zero": 0.0,
        "nul": "a\ufffdb",
        "list": [1.5, "x"],
    }


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError):
        events.record("approved_by_magic")


def test_an_event_rolls_back_with_the_change_it_records(alice):
    with pytest.raises(RuntimeError), transaction.atomic():
        events.record(EventKind.CLAIMED, actor=alice)
        raise RuntimeError("the caller's change failed")

    events.record(EventKind.RELEASED, actor=alice)

    assert list(AuditEvent.objects.values_list("sequence", "kind")) == [(1, "released")]
    assert chain.verify().broken is None


def copy_into_the_trail(rows) -> None:
    columns = ", ".join(events.COPY_COLUMNS)
    with connection.cursor() as cursor, cursor.cursor.copy(f"COPY audit_auditevent ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def test_rows_copied_in_bulk_chain_on_as_recorded_ones_do(samples):
    hold = samples["h_16"]  # the untrusted-text fixture
    entries = [
        events.Entry(EventKind.HOLD_SEEN, hold=hold, payload={"n": n, "note": "tab\there\\.", "big": 1e20})
        for n in range(3)
    ]
    before = AuditChainHead.objects.get().sequence

    with transaction.atomic(), events.copying(entries) as rows:
        copy_into_the_trail(rows)
    events.record(EventKind.CLAIMED, hold=hold)

    copied = AuditEvent.objects.filter(sequence__gt=before).order_by("sequence")
    assert [(event.sequence, event.payload.get("n")) for event in copied] == [
        (before + 1, 0),
        (before + 2, 1),
        (before + 3, 2),
        (before + 4, None),
    ]
    assert copied[0].payload == {"n": 0, "note": "tab\there\\.", "big": 10**20} and copied[0].hold_record == hold
    assert chain.verify().broken is None


def test_a_copied_row_hashes_as_a_recorded_one_whatever_its_payload_looks_like(samples):
    # The payload is dumped once for the hash and the COPY, and put into the row's content in its key's place.
    lookalike = {
        "payload": 0,
        "note": '","payload":0,"x":"',
        "nested": {"payload": {"payload": 0}},
        "ünïcode": "\u2028😀",
    }
    before = AuditChainHead.objects.get().sequence

    with (
        transaction.atomic(),
        events.copying([events.Entry(EventKind.HOLD_SEEN, hold=samples["h_16"], payload=lookalike)]) as rows,
    ):
        copy_into_the_trail(rows)

    copied = AuditEvent.objects.get(sequence=before + 1)
    assert copied.payload == lookalike
    assert copied.hash == chain.digest(copied.prev_hash, copied)
    assert chain.verify().broken is None


def test_rows_not_all_copied_leave_the_chain_head_where_it_was(samples):
    entries = [events.Entry(EventKind.HOLD_SEEN, hold=samples["h_16"], payload={"n": n}) for n in range(3)]
    before = AuditChainHead.objects.get()

    with (
        pytest.raises(RuntimeError, match="not every audit row was copied"),
        transaction.atomic(),
        events.copying(entries) as rows,
    ):
        copy_into_the_trail([next(rows)])

    assert AuditChainHead.objects.get().hash == before.hash
    assert chain.verify().broken is None


def test_record_many_appends_thousands_in_a_constant_number_of_queries(samples):
    holds = list(samples.values())
    entries = [events.Entry(EventKind.HOLD_SEEN, hold=holds[n % len(holds)], payload={"n": n}) for n in range(5000)]
    before = AuditChainHead.objects.get().sequence

    with CaptureQueriesContext(connection) as queries:
        recorded = events.record_many(entries)

    assert len(queries) <= 2 + 3 + 2  # savepoint, lock the head, three inserts of 2,000, move the head, release
    assert [event.sequence for event in recorded] == list(range(before + 1, before + 5001))
    assert chain.verify().broken is None


# Immutability


def test_the_app_cannot_change_or_delete_an_event():
    event = events.record(EventKind.SIGNED_IN)

    with pytest.raises(AuditImmutable):
        event.save()
    with pytest.raises(AuditImmutable):
        event.delete()
    with pytest.raises(AuditImmutable):
        AuditEvent.objects.update(kind="claimed")
    with pytest.raises(AuditImmutable):
        AuditEvent.objects.all().delete()


@pytest.mark.parametrize(
    "statement", ["UPDATE audit_auditevent SET actor_name = 'someone else'", "DELETE FROM audit_auditevent"]
)
def test_the_database_refuses_update_and_delete_even_in_raw_sql(statement):
    events.record(EventKind.SIGNED_IN)

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(statement)

    assert AuditEvent.objects.count() == 1


# Verifying the chain


def test_verifyaudit_passes_an_intact_chain(capsys, alice):
    for kind in (EventKind.SIGNED_IN, EventKind.CLAIMED, EventKind.RELEASED):
        events.record(kind, actor=alice)

    call_command("verifyaudit")

    assert "audit chain intact: 3 events" in capsys.readouterr().out


def test_a_row_changed_behind_the_apps_back_is_named_by_verifyaudit(alice):
    payload = {"items": [{"id": "A-1", "action": "reject"}]}
    recorded = [events.record(EventKind.DECISION_SUBMITTED, actor=alice, payload=payload) for _ in range(5)]

    tamper("UPDATE audit_auditevent SET actions = 'approve' WHERE sequence = %s", [recorded[2].sequence])

    message = verify_fails_naming(recorded[2].sequence)
    assert "does not match its hash" in message


def test_rewriting_a_row_and_its_hash_is_caught_at_the_next_row(alice):
    recorded = [events.record(EventKind.SIGNED_IN, actor=alice) for _ in range(4)]
    forged = AuditEvent.objects.get(pk=recorded[1].pk)
    forged.actor_name = "nobody"
    forged_hash = chain.digest(forged.prev_hash, forged)

    tamper("UPDATE audit_auditevent SET actor_name = 'nobody', hash = %s WHERE id = %s", [forged_hash, forged.pk])

    assert "previous hash is not the hash of the event before it" in verify_fails_naming(recorded[2].sequence)


def test_a_deleted_row_is_caught_at_the_row_after_the_gap():
    recorded = [events.record(EventKind.SIGN_IN_FAILED) for _ in range(4)]

    tamper("DELETE FROM audit_auditevent WHERE id = %s", [recorded[1].pk])

    assert f"event #{recorded[1].sequence} is missing before it" in verify_fails_naming(recorded[2].sequence)


def test_rows_deleted_from_the_end_are_caught_by_the_chain_head():
    recorded = [events.record(EventKind.SIGN_IN_FAILED) for _ in range(4)]

    tamper("DELETE FROM audit_auditevent WHERE sequence > %s", [recorded[1].sequence])

    with pytest.raises(CommandError, match=f"the events after #{recorded[1].sequence} are missing"):
        call_command("verifyaudit")


# Concurrency


@pytest.mark.django_db(transaction=True)
def test_appends_from_many_connections_at_once_keep_one_unbroken_chain():
    user = make_user("concurrent", roles.REVIEWERS)

    def append_many():
        try:
            for _ in range(15):
                with transaction.atomic():
                    events.record(EventKind.CLAIMED, actor=user)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=6) as pool:
        for appended in [pool.submit(append_many) for _ in range(6)]:
            appended.result()  # re-raises a thread's error here

    result = chain.verify()
    assert result.broken is None and result.checked == AuditEvent.objects.count() == 90
