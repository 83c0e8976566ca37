"""Auditors read a decision's diff and what the platform did with it, and a hold's timeline."""

import pytest
from django.urls import reverse

from audit import events
from audit.models import EventKind
from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


# A decision and a hold's timeline


def test_the_decision_page_shows_who_what_changed_when_and_what_the_platform_did(ada_client, decided):
    response = ada_client.get(reverse("audit:decision", args=[decided.pk]))

    body = response.content.decode()
    first, second = response.context["diffs"]
    assert [line.changed for line in first.lines] == [False, False, False]
    assert [(line.key, line.before, line.after) for line in second.lines if line.changed] == [
        ("amount", "129.00", "100.00")
    ]
    assert "Alice Adams" in body and "partial refund" in body
    assert "Applied by the platform" in body
    assert [attempt.outcome for attempt in response.context["attempts"]] == ["applied"]
    assert response.context["to_decide"] == decided.created_at - decided.hold.first_seen_at
    assert response.context["waited"] == decided.created_at - decided.hold.created_at


def test_the_decision_page_shows_a_rejected_item_as_not_acted_on(ada_client, alice, samples):
    decision = decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "reject", comment="not delivered yet")])

    body = ada_client.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    assert "rejected: not acted on" in body and "not delivered yet" in body


def test_the_decision_page_escapes_the_agents_text(ada_client, alice, samples):
    hostile = samples["h_16"]
    item = hostile.items.first()
    edited = {**item.data, "amount": "<img src=x onerror=alert(7)>"}
    decision = decisions.submit(hostile, alice, [ItemChoice(item.item_id, "edit", edited, "<script>alert(8)</script>")])

    body = ada_client.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    assert "<script>alert(" not in body and "<img src=x" not in body and "<svg onload" not in body
    assert "&lt;script&gt;alert(8)&lt;/script&gt;" in body


def test_the_hold_timeline_lists_its_events_oldest_first(ada_client, alice, bob, samples):
    hold = samples["h_12"]
    events.record(EventKind.CLAIMED, actor=alice, hold=hold)
    events.record(EventKind.TAKEN_OVER, actor=bob, hold=hold, payload={"from": "alice"})
    events.record(EventKind.CLAIMED, actor=alice, hold=samples["h_13"])

    response = ada_client.get(reverse("audit:hold-timeline", args=[hold.pk]))

    assert [(row.event.kind, row.event.actor_name) for row in response.context["events"]][-2:] == [
        ("claimed", "alice"),
        ("taken_over", "bob"),
    ]
    assert all(row.event.hold_id == "h_12" for row in response.context["events"])
    assert "from alice" in response.content.decode()
