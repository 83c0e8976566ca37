"""The trail's CSV export: exactly the filtered list, with the payload, spreadsheet formulas defused."""

import re

import pytest
from django.urls import reverse

from audit import events, queries
from audit.models import EventKind
from tests.helpers.audit_reading import exported, listed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


# The CSV export


def test_the_csv_export_is_exactly_the_filtered_list(ada_client, alice, bob, samples, monkeypatch):
    monkeypatch.setattr(queries, "PAGE_SIZE", 5)
    monkeypatch.setattr(queries, "EXPORT_CHUNK", 4)
    for n in range(12):
        reviewer, hold = (alice, samples["h_12"]) if n % 3 else (bob, samples["h_13"])
        events.record(EventKind.CLAIMED, actor=reviewer, hold=hold)
        events.record(EventKind.RELEASED, actor=reviewer, hold=hold)

    for query in (
        "view=decisions",
        "view=all",
        f"view=all&reviewer={alice.pk}&kind=claimed",
        "view=all&agent=upsonic-support",
        "view=decisions&hold=h_404",
    ):
        rows = exported(ada_client, query)
        assert [int(row["sequence"]) for row in rows] == listed(ada_client, query), query


def test_the_csv_export_carries_the_payload_and_defuses_spreadsheet_formulas(ada_client, alice, samples):
    events.record(
        EventKind.DECISION_SUBMITTED,
        actor=alice,
        hold=samples["h_12"],
        payload={"items": [{"id": '=HYPERLINK("http://evil")', "action": "approve"}], "note": "ok"},
    )

    row = exported(ada_client, "kind=decision_submitted")[0]

    assert row["actor"] == "alice" and row["hold_id"] == "h_12" and row["actions"] == "approve"
    assert row["item_ids"] == '\'=HYPERLINK("http://evil")'
    assert '"note": "ok"' in row["payload"]


def test_the_export_keeps_every_event_unless_the_list_it_came_from_asked_for_decisions(ada_client, alice, samples):
    signed_in = events.record(EventKind.SIGNED_IN, actor=alice)
    submitted = events.record(EventKind.DECISION_SUBMITTED, actor=alice, hold=samples["h_12"], payload={"items": []})

    pulled_by_a_script = exported(ada_client)
    link = re.search(
        r'href="/audit/export\.csv\?([^"]*)" download', ada_client.get(reverse("audit:list")).content.decode()
    )

    assert {row["sequence"] for row in pulled_by_a_script} >= {str(signed_in.sequence), str(submitted.sequence)}
    assert link and link.group(1) == "view=decisions"
    assert [row["sequence"] for row in exported(ada_client, link.group(1))] == [str(submitted.sequence)]
