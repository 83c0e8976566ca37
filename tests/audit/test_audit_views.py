"""Auditors read the trail: the list and its filters, a decision's diff, a hold's timeline, the CSV and the
statistics."""

import csv
import io
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit import events, queries
from audit.models import AuditEvent, EventKind
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.models import Decision, Hold
from reviewqueue import readers, roles
from tests.helpers.users import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


@pytest.fixture
def ada(db):
    return make_user("ada", roles.AUDITORS, first_name="Ada", last_name="Auditor")


@pytest.fixture
def ada_client(client, ada):
    client.force_login(ada)
    return client


@pytest.fixture
def decided(samples, alice, platform_client):
    """Alice's decision on h_13, applied: one refund approved, the other cut from 129.00 to 100.00."""
    choices = [
        ItemChoice("toolu_01A9xQ2mZ", "approve"),
        ItemChoice(
            "toolu_01B7kR4pW",
            "edit",
            {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"},
            "partial refund",
        ),
    ]
    decision = decisions.submit(samples["h_13"], alice, choices)
    delivery.deliver(decision.pk, platform_client)
    decision.refresh_from_db()
    return decision


def audit_urls(decision: Decision) -> list[str]:
    event = events.record(EventKind.SIGNED_IN)
    return [
        reverse("audit:list"),
        reverse("audit:list") + "?kind=claimed&q=a-1001",
        reverse("audit:export"),
        reverse("audit:event", args=[event.sequence]),
        reverse("audit:decision", args=[decision.pk]),
        reverse("audit:hold-timeline", args=[decision.hold_id]),
        reverse("audit:stats"),
    ]


def listed(client, query: str = "") -> list[int]:
    """Every event sequence the list shows for ``query``, following its pages to the end."""
    sequences, url = [], reverse("audit:list") + "?" + query
    while url:
        response = client.get(url)
        assert response.status_code == 200
        sequences += [row.event.sequence for row in response.context["rows"]]
        cursor = response.context["next_cursor"]
        url = reverse("audit:list") + f"?{query}&after={cursor}" if cursor else None
    return sequences


def exported(client, query: str = "") -> list[dict]:
    response = client.get(reverse("audit:export") + "?" + query)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


# Who may read it


def test_a_reviewer_gets_403_on_every_audit_page(alice_client, decided):
    for url in audit_urls(decided):
        response = alice_client.get(url)
        assert response.status_code == 403, url
        assert b"Reading the audit needs the Auditors role" in response.content


def test_an_auditor_and_a_superuser_may_read_every_audit_page(client, ada, decided):
    for user in (ada, make_user("root", is_superuser=True, is_staff=True)):
        client.force_login(user)
        for url in audit_urls(decided):
            assert client.get(url).status_code == 200, url


def test_the_audit_needs_a_login(client, decided):
    response = client.get(reverse("audit:list"))

    assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_the_admin_shows_audit_events_and_lets_nobody_add_change_or_delete_them(client, alice):
    event = events.record(EventKind.CLAIMED, actor=alice)
    client.force_login(make_user("root", is_superuser=True, is_staff=True))

    listing = client.get(reverse("admin:audit_auditevent_changelist") + "?kind__exact=claimed")
    detail = client.get(reverse("admin:audit_auditevent_change", args=[event.pk]))

    assert listing.status_code == 200 and b"alice" in listing.content
    assert detail.status_code == 200 and b"Save" not in detail.content
    assert client.get(reverse("admin:audit_auditevent_add")).status_code == 403
    assert client.post(reverse("admin:audit_auditevent_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.filter(pk=event.pk).exists()


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


# Statistics


def test_statistics_per_reviewer_and_agent(ada_client, alice, bob, samples, platform_client):
    now = timezone.now()
    Hold.objects.filter(pk=samples["h_12"].pk).update(first_seen_at=now - timedelta(minutes=10))
    Hold.objects.filter(pk=samples["h_13"].pk).update(first_seen_at=now - timedelta(minutes=30))
    decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve")], now=now)
    decisions.submit(
        samples["h_13"],
        alice,
        [
            ItemChoice("toolu_01A9xQ2mZ", "reject"),
            ItemChoice("toolu_01B7kR4pW", "edit", {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}),
        ],
        now=now,
    )
    decisions.submit(samples["h_17"], bob, [ItemChoice("A-1004", "reject")], now=now)
    Hold.objects.filter(pk=samples["h_15"].pk).update(status=Hold.Status.EXPIRED, expires_at=now - timedelta(minutes=1))

    response = ada_client.get(reverse("audit:stats"))

    reviewers = {row.person.username: row for row in response.context["stats"].reviewers}
    agents = {row.label: row for row in response.context["stats"].agents}
    assert (reviewers["alice"].decisions, reviewers["alice"].items) == (2, 3)
    assert (reviewers["alice"].approve, reviewers["alice"].edit, reviewers["alice"].reject) == (1, 1, 1)
    assert str(reviewers["alice"].asked) == "228.80" and str(reviewers["alice"].approved) == "149.90"
    assert reviewers["alice"].median_seconds == pytest.approx(20 * 60)
    assert reviewers["alice"].p95_seconds == pytest.approx(30 * 60)
    assert (reviewers["bob"].decisions, reviewers["bob"].reject_share) == (1, 1.0)
    assert agents["support-openai-agents"].expired == 1 and agents["support-openai-agents"].decisions == 0
    assert agents["upsonic-support"].decisions == 1
    body = response.content.decode()
    main = body.split("<main", 1)[1]
    assert main.count('<figure class="chart">') == 7 and "<script" not in main  # 3 + 3 + time to a decision


def test_statistics_only_count_decisions_in_the_chosen_period(ada_client, alice, samples):
    decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve")])
    last_week = timezone.localdate() - timedelta(days=7)

    response = ada_client.get(reverse("audit:stats"), {"since": last_week - timedelta(days=3), "until": last_week})

    assert response.context["stats"].reviewers == []
    assert b"No decision in this period" in response.content


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


def test_every_cell_of_the_audit_tables_says_its_column_for_the_phone_cards(ada_client, decided):
    for url in (
        reverse("audit:list") + "?view=all",
        reverse("audit:decision", args=[decided.pk]),
        reverse("audit:stats"),
    ):
        page = ada_client.get(url).content.decode()
        cells = page.split("<td")[1:]
        assert cells, url
        assert all('data-label="' in cell.split(">", 1)[0] and 'class="' in cell.split(">", 1)[0] for cell in cells), (
            url
        )


def test_statistics_show_a_dash_not_0_percent_where_there_is_nothing_to_divide(ada_client, alice, samples):
    now = timezone.now()
    Hold.objects.filter(pk=samples["h_15"].pk).update(status=Hold.Status.EXPIRED, expires_at=now - timedelta(minutes=1))

    response = ada_client.get(reverse("audit:stats"))

    expired_only = next(row for row in response.context["stats"].agents if row.label == "support-openai-agents")
    assert expired_only.approve_share is None
    row_html = response.content.decode().split("support-openai-agents", 1)[1].split("</tr>", 1)[0]
    assert row_html.count(">—</td>") >= 5 and "0 %" not in row_html


def test_chart_series_carry_words_and_patterns_not_only_colour(ada_client, decided):
    page = ada_client.get(reverse("audit:stats")).content.decode()

    assert '<pattern id="pattern-edit"' in page and '<pattern id="pattern-reject"' in page
    assert '<span class="chart-value">approve 50 % · approve with edits 50 %</span>' in page
    assert "<text" not in page  # no SVG text that would shrink with the drawing
