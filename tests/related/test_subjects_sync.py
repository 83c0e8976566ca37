"""Subjects are stored on every path a hold is mirrored (sync's COPY, the ORM's, a changed hold, one hold read
again), and hostile subject values among good holds are skipped or stored safely, never stopping the others."""

from datetime import timedelta

import pytest
from django.urls import reverse

from holds.mirror import inserting, sync
from holds.models import Hold, HoldSubject, QuarantinedHold
from holds.related import duplicates

pytestmark = pytest.mark.django_db

HOSTILE_VALUES = {
    "reference_id": "A-" + "9" * 10_000,
    "customer_id": "C-1\x00",
    "invoice_id": ["I-1", "I-2"],
    "account_id": True,
    "subscription_id": {"id": "sub_1", "nested": {"deeper": ["x"]}},
    "parcel_id": 1.5,
    "shipment_id": "<script>alert(1)</script>",
}


def refund(hold_id: str, order_id, created, **data) -> dict:
    hold = {
        "hold_id": hold_id,
        "agent": "support-agno",
        "items": [{"id": "call_1", "title": "refund", "data": {"order_id": order_id, "amount": "10.00", **data}}],
    }
    return hold | ({"created_at": created} if created else {})


def values_of(hold_id: str) -> list[tuple[str, str]]:
    return list(HoldSubject.objects.filter(hold__hold_id=hold_id).order_by("pk").values_list("key", "value"))


@pytest.mark.parametrize("by_copy", [True, False], ids=["COPY", "ORM"])
def test_hostile_subjects_among_good_holds_are_skipped_and_the_good_ones_flagged(
    platform_client, platform_state, monkeypatch, by_copy
):
    monkeypatch.setattr(inserting, "_inserts_by_copy", lambda: by_copy)
    start = platform_state.now() - timedelta(hours=1)
    for number in range(50):
        platform_state.add_hold(
            "default", refund(f"h_good{number}", f"A-{number % 25}", start + timedelta(seconds=number))
        )
    platform_state.add_hold("default", refund("h_hostile", "A-3", start, **HOSTILE_VALUES))

    result = sync.sync_env(platform_client, "default")

    assert result.error == "" and not QuarantinedHold.objects.exists()
    assert Hold.objects.count() == 51
    # The mirror stores agent JSON with a NUL replaced (agent_json.storable): the subject is that stored value.
    assert values_of("h_hostile") == [
        ("order_id", "a-3"),
        ("customer_id", "c-1\ufffd"),
        ("shipment_id", "<script>alert(1)</script>"),
    ]
    assert {
        duplicate.hold.hold_id for duplicate in duplicates.possible_duplicates(Hold.objects.get(hold_id="h_good3"))
    } == {
        "h_good28",
        "h_hostile",
    }


def test_a_hostile_subject_shows_as_text_and_never_answers_500(platform_client, platform_state, alice_client):
    platform_state.add_hold("default", refund("h_hostile", "<b>A-1</b>", None, **HOSTILE_VALUES))
    platform_state.add_hold("default", refund("h_other", "<b>A-1</b>", None))
    sync.sync_env(platform_client, "default")

    response = alice_client.get(reverse("hold", args=[Hold.objects.get(hold_id="h_other").pk]))

    assert response.status_code == 200
    assert b"<b>A-1</b>" not in response.content


def test_a_changed_hold_s_subjects_are_rewritten(platform_client, platform_state):
    platform_state.add_hold("default", refund("h_1", "A-1", None))
    sync.sync_env(platform_client, "default")
    changed = platform_state.get_hold("default", "h_1")
    changed["items"] = [{"id": "B-7", "title": "B-7 · 12.00", "data": {"amount": "12.00"}}]

    sync.sync_env(platform_client, "default")

    assert values_of("h_1") == [("item id", "b-7")]


def test_a_hold_read_again_on_its_own_keeps_its_subjects(platform_client, platform_state):
    platform_state.add_hold("default", refund("h_1", "A-1", None))
    sync.sync_env(platform_client, "default")
    platform_state.decide_elsewhere("default", "h_1", "bob@example.com")

    sync.sync_env(platform_client, "default")

    assert Hold.objects.get(hold_id="h_1").status == Hold.Status.DECIDED
    assert values_of("h_1") == [("order_id", "a-1")]
