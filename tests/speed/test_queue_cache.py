"""The queue's rows come from the cache (Redis), and yet a reviewer never sees a stale one.

Bob keeps the queue open; each change to a hold shows in his next refresh, the whole
page as well as the htmx refresh of its body: decided, expired, claimed and released,
a new urgency band, new content from sync, and the clock moving on.
"""

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
import time_machine
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.template.loader import get_template
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone, translation

from approvals.badges import Badge
from holds.mirror import sync
from holds.models import Hold
from holds.queue import listing as queue
from holds.queue import rows as queue_rows
from reviewqueue import softcache

pytestmark = pytest.mark.django_db


@pytest.fixture(params=["page", "refresh"])
def look(request, client, bob):
    """Bob's view of the queue, as the page (``page``) or the htmx refresh of its body (``refresh``): the rows' HTML by
    hold id."""
    client.force_login(bob)
    opened = timezone.now().isoformat()

    def rows() -> dict[str, str]:
        if request.param == "page":
            response = client.get(reverse("queue"))
        else:
            response = client.get(
                reverse("queue"), {"loaded_at": opened}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="queue-body"
            )
        assert response.status_code == 200
        html = response.content.decode()
        return {row.hold.hold_id: _row_html(html, row.hold.pk) for row in response.context["rows"]}

    return rows


def _row_html(html: str, pk: int) -> str:
    return re.search(rf'<tr id="row-{pk}".*?</tr>', html, re.S).group(0)


def _cell(row: str, column: str) -> str:
    """The text of a row's cell, tags removed."""
    cell = re.search(rf'<td class="[^"]*\bcell-{column}\b[^"]*"[^>]*>(.*?)</td>', row, re.S).group(1)
    return re.sub(r"<[^>]+>", "", cell).strip()


def _bands(row: str) -> set[str]:
    """The urgency bands among the row's classes."""
    return set(re.match(r'<tr [^>]*class="([^"]*)"', row).group(1).split()) & {"soon", "urgent"}


def _hold(platform_state, platform_client, **fields) -> str:
    hold_id = platform_state.add_hold("default", fields)["hold_id"]
    sync.sync_env(platform_client, "default")
    return hold_id


def test_the_cache_is_redis_and_a_second_look_renders_no_row(client, bob, platform_client, platform_state):
    assert settings.CACHES["default"]["BACKEND"] == "reviewqueue.rediscache.RedisCache"
    _hold(platform_state, platform_client, question="Refund the broken kettle?")
    client.force_login(bob)
    client.get(reverse("queue"))

    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("queue")).content.decode()

    assert "Refund the broken kettle?" in page
    assert not [query for query in queries.captured_queries if "holds_holditem" in query["sql"]]


def test_rows_read_once_are_kept_by_the_process_and_served_when_the_shared_cache_is_emptied(
    client, bob, platform_client, platform_state
):
    _hold(platform_state, platform_client, question="Refund the broken kettle?")
    client.force_login(bob)
    first = client.get(reverse("queue")).content.decode()
    cache.clear()  # a restarted Redis, say: the rows' keys name their content, so the process's copies still hold

    with CaptureQueriesContext(connection) as queries:
        again = client.get(reverse("queue")).content.decode()

    assert "Refund the broken kettle?" in again and _row_html(again, Hold.objects.get().pk) == _row_html(
        first, Hold.objects.get().pk
    )
    assert not [query for query in queries.captured_queries if "holds_holditem" in query["sql"]]


def test_a_hold_decided_on_the_platform_leaves_at_the_next_refresh(look, platform_client, platform_state):
    decided = _hold(platform_state, platform_client)
    waiting = _hold(platform_state, platform_client)
    assert set(look()) == {decided, waiting}

    platform_state.decide_elsewhere("default", decided, "carol")
    sync.sync_env(platform_client, "default")

    assert set(look()) == {waiting}


def test_an_expired_hold_leaves_at_the_next_refresh(look, platform_client, platform_state):
    expiring = _hold(
        platform_state, platform_client, expires_at=(platform_state.now() + timedelta(minutes=5)).isoformat()
    )
    lasting = _hold(platform_state, platform_client, expires_at=None)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        assert set(look()) == {expiring, lasting}

        traveller.shift(timedelta(minutes=6))

        assert set(look()) == {lasting}


def test_a_claim_and_its_release_show_at_the_next_refresh(look, client, alice, platform_client, platform_state):
    hold_id = _hold(platform_state, platform_client)
    pk = Hold.objects.get(hold_id=hold_id).pk
    assert _cell(look()[hold_id], "reviewer") == "—"
    claimer = type(client)()
    claimer.force_login(alice)

    claimer.post(reverse("claim-hold", args=[pk]))
    assert _cell(look()[hold_id], "reviewer") == "Alice Adams"

    claimer.post(reverse("release", args=[pk]))
    assert _cell(look()[hold_id], "reviewer") == "—"


def test_a_claim_that_runs_out_shows_at_the_next_refresh(look, client, alice, platform_client, platform_state):
    hold_id = _hold(platform_state, platform_client, expires_at=None)
    claimer = type(client)()
    claimer.force_login(alice)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        claimer.post(reverse("claim-hold", args=[Hold.objects.get(hold_id=hold_id).pk]))
        assert _cell(look()[hold_id], "reviewer") == "Alice Adams"

        traveller.shift(timedelta(minutes=settings.CLAIM_MINUTES, seconds=1))

        assert _cell(look()[hold_id], "reviewer") == "—"


def test_each_urgency_band_shows_as_the_clock_moves_on(look, platform_client, platform_state):
    hold_id = _hold(
        platform_state, platform_client, expires_at=(platform_state.now() + timedelta(minutes=75)).isoformat()
    )
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        assert _bands(look()[hold_id]) == set()

        traveller.shift(timedelta(minutes=20))
        assert _bands(look()[hold_id]) == {"soon"}

        traveller.shift(timedelta(minutes=50))
        assert _bands(look()[hold_id]) == {"urgent"}


def test_the_times_words_follow_the_clock_while_the_row_is_cached(look, platform_client, platform_state):
    hold_id = _hold(platform_state, platform_client, expires_at=(platform_state.now() + timedelta(days=2)).isoformat())
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        first = look()[hold_id]
        assert _cell(first, "age") == "0\xa0minutes ago"
        assert _cell(first, "left") == "1\xa0day, 23\xa0hours"

        traveller.shift(timedelta(minutes=10))
        later = look()[hold_id]

        assert _cell(later, "age") == "10\xa0minutes ago"
        assert _cell(later, "left") == "1\xa0day, 23\xa0hours"
        traveller.shift(timedelta(hours=1))
        assert _cell(look()[hold_id], "left") == "1\xa0day, 22\xa0hours"


def test_new_content_from_sync_shows_at_the_next_refresh(look, platform_client, platform_state):
    hold_id = _hold(platform_state, platform_client, question="Refund order A-1?", agent="refund-bot")
    before = look()[hold_id]
    assert _cell(before, "question").removesuffix(" new") == "Refund order A-1?"  # new in the refresh

    changed = platform_state.get_hold("default", hold_id)
    changed["question"] = "Refund order A-1 and A-2?"
    changed["items"].append({"id": "A-2", "title": "Second kettle", "data": {"order_id": "A-2", "amount": "31.50"}})
    sync.sync_env(platform_client, "default")

    after = look()[hold_id]
    assert _cell(after, "question").removesuffix(" new") == "Refund order A-1 and A-2?"
    assert _cell(after, "items").startswith("2 items")
    assert "Second kettle" in _cell(after, "items")
    assert "31.50" in _cell(after, "amount")


def test_a_hold_that_arrives_is_marked_new_in_the_refresh_and_not_in_a_fresh_page(
    client, bob, platform_client, platform_state
):
    client.force_login(bob)
    opened = timezone.now().isoformat()
    hold_id = _hold(platform_state, platform_client)
    pk = Hold.objects.get(hold_id=hold_id).pk

    refresh = client.get(reverse("queue"), {"loaded_at": opened}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="queue-body")
    page = client.get(reverse("queue"))

    assert 'class="badge">new<' in _row_html(refresh.content.decode(), pk)
    assert "1 new hold arrived" in refresh.content.decode()
    assert 'class="badge">new<' not in _row_html(page.content.decode(), pk)


def test_each_cell_names_its_column_and_its_label_for_the_phone_layout(look, platform_client, platform_state):
    hold_id = _hold(platform_state, platform_client)
    row = look()[hold_id]

    cells = re.findall(r'<td class="([^"]*)" data-label="([^"]*)"', row)
    assert [
        (next(name for name in classes.split() if name.startswith("cell-")), label) for classes, label in cells
    ] == [
        ("cell-select", "Select"),
        ("cell-question", "Question"),
        ("cell-agent", "Agent"),
        ("cell-items", "Items"),
        ("cell-amount", "Amount"),
        ("cell-age", "Age"),
        ("cell-left", "Time left"),
        ("cell-reviewer", "Reviewing"),
    ]
    assert row.count("<td") == len(cells)


def test_a_changed_currency_setting_shows_at_the_next_look(look, platform_client, platform_state, settings):
    item = {"id": "A-1", "title": "Kettle", "data": {"amount": "31.50", "currency": "eur", "currency_code": "usd"}}
    hold_id = _hold(platform_state, platform_client, items=[item])
    assert _cell(look()[hold_id], "amount") == "31.50 EUR"

    settings.CURRENCY_KEYS = ["currency_code"]

    assert _cell(look()[hold_id], "amount") == "31.50 USD"


def test_the_process_keeps_only_the_values_it_used_last(monkeypatch):
    monkeypatch.setattr(softcache, "KEPT_ENTRIES", 3)
    softcache.set_many({"first": 1, "second": 2, "third": 3}, 60, "values", content_keyed=True)
    softcache.get_many(["first"], "values", content_keyed=True)  # used again: "second" is now the oldest
    softcache.set_many({"fourth": 4}, 60, "values", content_keyed=True)
    cache.clear()

    kept = softcache.get_many(["first", "second", "third", "fourth"], "values", content_keyed=True)

    assert kept == {"first": 1, "third": 3, "fourth": 4}
    assert softcache.get_many(["first"], "values") == {}  # without content_keyed, only the shared cache is asked


def _listed(**changes) -> queue.Listed:
    moment = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    values = {
        "pk": 7,
        "hold_id": "h_7",
        "env": "default",
        "agent": "refund-bot",
        "capability": "refund",
        "payload_digest": "d" * 64,
        "created_at": moment,
        "expires_at": moment + timedelta(hours=2),
        "first_seen_at": moment,
        "amount": Decimal("49.90"),
        "claimed_by_id": None,
        "claim_expires_at": None,
        "claimant_username": None,
        "claimant_first_name": None,
        "claimant_last_name": None,
        "claimant_email": None,
        "open_approvals": 0,
        "assigned_to": "",
    }
    return queue.Listed(**(values | changes))


NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
CLAIMED = {
    "claimed_by_id": 3,
    "claim_expires_at": NOW + timedelta(minutes=5),
    "claimant_username": "bob",
    "claimant_first_name": "Bob",
    "claimant_last_name": "Brown",
    "claimant_email": "bob@example.com",
}


@pytest.mark.parametrize(
    "against, changed, loaded_at, badge",
    [
        ({}, {"pk": 8}, None, None),
        ({}, {"env": "staging"}, None, None),
        ({}, {"agent": "billing-bot"}, None, None),
        ({}, {"capability": "reply"}, None, None),
        ({}, {"payload_digest": "e" * 64}, None, None),  # the question, items and amounts: the platform's content
        ({}, {"created_at": datetime(2026, 12, 1, 8, 0, tzinfo=UTC)}, None, None),
        ({}, {"expires_at": None}, None, None),
        ({}, {"expires_at": NOW + timedelta(minutes=10)}, None, None),  # urgent
        ({}, CLAIMED, None, None),
        (CLAIMED, {**CLAIMED, "claimant_first_name": "Robert"}, None, None),
        (CLAIMED, {**CLAIMED, "claimant_email": "robert@example.com"}, None, None),
        (
            CLAIMED,
            {**CLAIMED, "claim_expires_at": NOW - timedelta(seconds=1)},
            None,
            None,
        ),  # an expired claim shows nobody
        ({}, {}, datetime(2026, 12, 1, 8, 0, tzinfo=UTC), None),  # new to the reviewer
        ({}, {}, None, Badge("1 of 2 approvals", "")),
        ({}, {}, None, Badge("1 of 2 approvals", "amount 1,200.00 > 500")),
        ({}, {"assigned_to": "bob"}, None, None),
        ({"assigned_to": "bob"}, {"assigned_to": "Finance leads"}, None, None),
    ],
)
def test_each_value_a_row_shows_changes_its_key(against, changed, loaded_at, badge):
    base = queue_rows.Row(_listed(**against), NOW, NOW)
    other = queue_rows.Row(_listed(**changed), NOW, loaded_at or NOW, badge)

    assert queue_rows.key(other) != queue_rows.key(base)


def test_the_same_values_keep_the_same_key():
    assert queue_rows.key(queue_rows.Row(_listed(), NOW, NOW)) == queue_rows.key(queue_rows.Row(_listed(), NOW, NOW))


@pytest.mark.parametrize(
    "change",
    ["version", "template", "currency setting", "time zone", "language"],
)
def test_each_thing_that_renders_every_row_changes_every_key(change, monkeypatch, settings, tmp_path):
    row = queue_rows.Row(_listed(), NOW, NOW)
    before = queue_rows.key(row)
    if change == "version":
        monkeypatch.setattr(queue_rows, "ROW_VERSION", queue_rows.ROW_VERSION + 1)
    elif change == "template":  # an edited template file, found first by the loader
        source = get_template(queue_rows.ROW_TEMPLATE).template.source
        edited = tmp_path / queue_rows.ROW_TEMPLATE
        edited.parent.mkdir(parents=True)
        edited.write_text(source.replace('class="muted">—', 'class="muted">nobody'))
        settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}]
        softcache.template_digest.cache_clear()
    elif change == "currency setting":
        settings.CURRENCY_KEYS = ["currency_code"]
    elif change == "time zone":
        monkeypatch.setattr(timezone, "get_current_timezone_name", lambda: "Europe/Berlin")
    else:
        monkeypatch.setattr(translation, "get_language", lambda: "de")

    try:
        assert queue_rows.key(row) != before
    finally:
        softcache.template_digest.cache_clear()


def test_a_row_keeps_the_hold_as_listed_whether_rendered_or_read_from_the_cache(client, bob, samples):
    client.force_login(bob)
    rendered = client.get(reverse("queue")).context["rows"]
    cached = client.get(reverse("queue")).context["rows"]

    assert len(rendered) == len(cached) == len(samples)
    assert {type(row.hold) for row in rendered + cached} == {queue.Listed}
    assert all(row.question for row in rendered) and not any(row.question for row in cached)
    assert [row.html for row in rendered] == [row.html for row in cached]
