"""Auditors read the trail's list: what it opens on, its filters and keyset pages, a mangled filter a 400, and how
its rows name people and show edits."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit import events, queries
from audit.models import AuditEvent, EventKind
from reviewqueue import readers
from tests.helpers.audit_reading import exported, listed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


# The list


def test_the_list_shows_the_newest_event_first_with_who_and_what(ada_client, alice, samples):
    events.record(EventKind.CLAIMED, actor=alice, hold=samples["h_12"])
    events.record(EventKind.RELEASED, actor=alice, hold=samples["h_12"])

    response = ada_client.get(reverse("audit:list"), {"view": "all"})

    kinds = [row.event.kind for row in response.context["rows"]]
    assert kinds[:2] == ["released", "claimed"]
    assert "llamaindex-support" in response.content.decode()


@pytest.mark.parametrize(
    "query, expected",
    [
        ("kind=decision_submitted", {"bob rejects A-1001", "alice approves A-1002"}),
        ("action=reject", {"bob rejects A-1001"}),
        ("agent=upsonic-support", {"alice approves A-1002", "system applied h_13"}),
        ("outcome=applied", {"system applied h_13"}),
        ("hold=h_12", {"bob rejects A-1001"}),
        ("run=r_42", {"alice approves A-1002", "system applied h_13"}),
        ("item=toolu_01B7kR4pW", {"alice approves A-1002"}),
        ("q=A-1001", {"bob rejects A-1001"}),
        ("q=129.00", {"alice approves A-1002"}),
        ("kind=decision_submitted&agent=upsonic-support&action=approve", {"alice approves A-1002"}),
    ],
)
def test_each_filter_narrows_the_list(ada_client, alice, bob, samples, query, expected):
    labelled = {
        "bob rejects A-1001": events.record(
            EventKind.DECISION_SUBMITTED,
            actor=bob,
            hold=samples["h_12"],
            payload={
                "items": [
                    {"id": "A-1001", "action": "reject", "original_data": {"order_id": "A-1001", "amount": "49.90"}}
                ]
            },
        ),
        "alice approves A-1002": events.record(
            EventKind.DECISION_SUBMITTED,
            actor=alice,
            hold=samples["h_13"],
            payload={
                "items": [
                    {
                        "id": "toolu_01B7kR4pW",
                        "action": "approve",
                        "original_data": {"order_id": "A-1002", "amount": "129.00"},
                    }
                ]
            },
        ),
        "system applied h_13": events.record(EventKind.APPLIED, hold=samples["h_13"], payload={"outcome": "applied"}),
    }
    names = {event.sequence: name for name, event in labelled.items()}

    assert {names[sequence] for sequence in listed(ada_client, query) if sequence in names} == expected


def test_the_reviewer_and_date_filters(ada_client, alice, bob):
    mine = events.record(EventKind.SIGNED_IN, actor=alice)
    events.record(EventKind.SIGNED_IN, actor=bob)
    today = timezone.localdate()

    assert listed(ada_client, f"view=all&reviewer={alice.pk}") == [mine.sequence]
    assert len(listed(ada_client, f"view=all&since={today}&until={today}")) == 3  # ada's own sign-in too
    assert listed(ada_client, f"view=all&until={today - timedelta(days=1)}") == []


def test_keyset_pages_cover_every_event_once_in_order(ada_client, alice, monkeypatch):
    monkeypatch.setattr(queries, "PAGE_SIZE", 7)
    for _ in range(30):
        events.record(EventKind.CLAIMED, actor=alice)

    sequences = listed(ada_client, "view=all")

    assert sequences == sorted(AuditEvent.objects.values_list("sequence", flat=True), reverse=True)


@pytest.mark.parametrize(
    "query, pages",
    [
        ("since=9999-12-31&until=9999-12-31", ["audit:list", "audit:export", "audit:stats"]),
        ("since=0001-01-01", ["audit:list", "audit:export", "audit:stats"]),
        ("reviewer=99999999999999999999", ["audit:list", "audit:export"]),
        ("kind=<script>", ["audit:list", "audit:export"]),
        ("after=not-a-cursor", ["audit:list"]),
        pytest.param(
            f"after={readers.write_cursor(timezone.now(), 0)}", ["audit:list"], id="after=cursor-of-sequence-0"
        ),  # no id
    ],
)
def test_a_mangled_filter_or_cursor_is_a_plain_400_never_a_500(ada_client, alice, query, pages):
    events.record(EventKind.CLAIMED, actor=alice)

    for page in pages:
        response = ada_client.get(reverse(page) + "?" + query)
        assert response.status_code == 400 and response.content.startswith(b"Bad value for "), page


def test_a_cursor_without_an_offset_is_read_as_utc(ada_client, alice):
    events.record(EventKind.CLAIMED, actor=alice)

    response = ada_client.get(
        reverse("audit:list"),
        {"view": "all", "after": readers.write_cursor(timezone.now().replace(tzinfo=None), 10**9)},
    )

    assert response.status_code == 200 and response.context["rows"]


def test_agent_written_text_is_shown_as_text(ada_client, alice, samples):
    hostile = samples["h_16"]
    events.record(
        EventKind.DECISION_SUBMITTED,
        actor=alice,
        hold=hostile,
        payload={"items": [{"id": "call_<b>9</b>", "action": "approve", "original_data": hostile.items.first().data}]},
    )

    body = ada_client.get(reverse("audit:list")).content.decode()
    detail = ada_client.get(
        reverse("audit:event", args=[AuditEvent.objects.latest("sequence").sequence])
    ).content.decode()

    for page in (body, detail):
        assert "<b>9</b>" not in page and "<svg onload" not in page
        assert "call_&lt;b&gt;9&lt;/b&gt;" in page


# What the list opens on, and how it reads


def test_the_list_opens_on_decisions_and_their_outcomes_and_switches_to_all_events(ada_client, alice, samples):
    events.record(EventKind.SIGNED_IN, actor=alice)
    events.record(EventKind.CLAIMED, actor=alice, hold=samples["h_12"])
    submitted = events.record(
        EventKind.DECISION_SUBMITTED,
        actor=alice,
        hold=samples["h_12"],
        payload={"items": [{"id": "A-1001", "action": "approve", "original_data": {"amount": "49.90"}}]},
    )
    applied = events.record(EventKind.APPLIED, hold=samples["h_12"], payload={"outcome": "applied"})

    opened = ada_client.get(reverse("audit:list"))
    everything = ada_client.get(reverse("audit:list"), {"view": "all", "agent": samples["h_12"].agent})

    assert [row.event.sequence for row in opened.context["rows"]] == [applied.sequence, submitted.sequence]
    page = opened.content.decode()
    assert '<a href="/audit/" aria-current="page">Decisions and outcomes</a>' in page
    assert '<a href="/audit/?view=all">All events</a>' in page
    assert [row.event.kind for row in everything.context["rows"]][:3] == ["applied", "decision_submitted", "claimed"]
    switched = everything.content.decode()
    assert '<a href="/audit/?agent=llamaindex-support">Decisions and outcomes</a>' in switched  # the filter kept
    assert '<input type="hidden" name="view" value="all">' in switched
    assert "view=all&amp;agent=llamaindex-support" in switched  # the export link keeps the view


def test_an_old_event_names_its_actor_as_recorded_even_after_a_rename(ada_client, alice):
    event = events.record(EventKind.CLAIMED, actor=alice)
    alice.username, alice.first_name, alice.last_name = "alice.martin", "Alice", "Martin"
    alice.save()

    page = ada_client.get(reverse("audit:event", args=[event.sequence])).content.decode()

    assert (
        '<span class="person" title="alice@example.com">Alice Martin</span> '
        '<span class="muted">(recorded as alice)</span>' in page
    )


def test_an_unknown_view_is_a_400(ada_client):
    assert ada_client.get(reverse("audit:list"), {"view": "<script>"}).status_code == 400


def test_edits_show_in_the_row_as_before_and_after(ada_client, decided):
    page = ada_client.get(reverse("audit:list")).content.decode()
    row = next(
        row
        for row in ada_client.get(reverse("audit:list")).context["rows"]
        if row.event.kind == EventKind.DECISION_SUBMITTED
    )

    assert [(edit.item_id, edit.key, edit.before, edit.after) for edit in row.edits] == [
        ("toolu_01B7kR4pW", "amount", "129.00", "100.00"),  # the unchanged order id and reason are left out
    ]
    assert "amount <del>129.00</del> → <ins>100.00</ins>" in page


def test_people_are_named_by_their_name_with_the_email_as_a_tooltip(ada_client, alice, audrey, samples):
    events.record(EventKind.CLAIMED, actor=alice, hold=samples["h_12"])
    events.record(
        EventKind.NOTIFICATION_SENT,
        payload={"channel": "email", "recipient": f"user:{alice.pk}", "title": "Expires soon", "error": ""},
    )

    page = ada_client.get(reverse("audit:list"), {"view": "all"}).content.decode()

    assert '<span class="person" title="alice@example.com">Alice Adams</span>' in page
    assert "email · Alice Adams · Expires soon" in page
    assert f"user:{alice.pk}" not in page and "alice (alice)" not in page
    assert "email · Alice Adams · Expires soon" in [row["summary"] for row in exported(ada_client, "view=all")]
