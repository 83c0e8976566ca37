"""Hostile input from signed-in users with the right role: a plain 400 or a field error, never a 500.

Each test replays one request a tester found to fail before; the fuzz test (test_fuzz.py)
looks for the ones nobody has found yet.
"""

import base64
import json

import pytest
from django.urls import reverse

from audit import events
from audit.models import EventKind
from holds.models import Decision
from notifications import in_app, notify
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from teams.scopes import viewer_of
from tests.helpers.reviewing import field_name, review_form
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

MANY_NINES = "9" * 5000


@pytest.fixture
def ada_client(client, db):
    client.force_login(make_user("ada", roles.AUDITORS))
    return client


@pytest.fixture
def admin_client(client, db):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def raw_cursor(parts) -> str:
    """A cursor as a stranger could write it: any JSON, base64-encoded the way the app's are."""
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode().rstrip("=")


def assert_plain_400(response, *words):
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert all(word in text for word in words), text


# The audit's filters, cursor and export


@pytest.mark.parametrize("name", ["q", "agent", "outcome", "hold", "run", "item"])
def test_a_nul_in_an_audit_filter_is_a_400_on_the_list_and_the_export(ada_client, name):
    events.record(EventKind.SIGNED_IN)

    listed = ada_client.get(reverse("audit:list"), {name: "a\x00b"})
    exported = ada_client.get(reverse("audit:export"), {name: "a\x00b"})

    assert_plain_400(listed, "NUL")
    assert_plain_400(exported, "NUL")


def test_a_unicode_digit_is_no_reviewer_id(ada_client):
    response = ada_client.get(reverse("audit:list"), {"reviewer": "²"})

    assert_plain_400(response, "reviewer", "whole number")


def test_an_audit_cursor_holding_infinity_is_a_400(ada_client):
    response = ada_client.get(reverse("audit:list"), {"after": raw_cursor(["2026-01-01T00:00:00+00:00", float("inf")])})

    assert_plain_400(response, "after", "page link")


def test_the_export_refuses_a_bad_filter_before_it_starts_streaming(ada_client):
    response = ada_client.get(reverse("audit:export"), {"since": "2026-02-30"})

    assert not response.streaming
    assert_plain_400(response, "since", "date")


def test_a_filtered_export_still_streams_every_matching_row(ada_client):
    events.record(EventKind.SETTING_CHANGED, payload={"note": "x"})

    response = ada_client.get(reverse("audit:export"), {"kind": "setting_changed", "since": "2026-01-01"})

    lines = b"".join(response.streaming_content).decode().splitlines()
    assert response.status_code == 200 and len(lines) == 2 and ",setting_changed," in lines[1]


# The queue's cursor and refresh time


def test_a_queue_cursor_holding_infinity_is_a_400(alice_client, samples):
    response = alice_client.get(
        reverse("queue"), {"after": raw_cursor(["expiry", "", "2026-01-01T00:00:00+00:00", float("inf")])}
    )

    assert_plain_400(response, "after", "page link")


def test_a_refresh_time_out_of_range_is_a_400(alice_client, samples):
    response = alice_client.get(reverse("queue"), {"loaded_at": "0001-01-01T00:00:00+01:00"})

    assert_plain_400(response, "loaded_at")


def test_the_queue_pages_still_follow_their_own_cursors(alice_client, samples, monkeypatch):
    from holds.queue import listing as queue

    monkeypatch.setattr(queue, "PAGE_SIZE", 3)
    seen, url = [], reverse("queue")
    while url:
        response = alice_client.get(url)
        seen += [row.hold.hold_id for row in response.context["rows"]]
        url = (
            reverse("queue") + f"?after={response.context['next_cursor']}" if response.context["next_cursor"] else None
        )

    assert sorted(seen) == sorted(samples)


# The review form


@pytest.mark.parametrize(
    "typed, message",
    [
        ("[" + "1" * 5000 + "]", "the number is too long"),
        ("[1e309]", "the number is too large"),
        ('["\\u0000"]', "cannot hold \\u0000"),
        ('["\\ud800"]', "unpaired surrogate"),
    ],
)
def test_a_json_number_or_text_postgres_cannot_store_is_a_field_error(alice_client, samples, typed, message):
    hold = samples["h_19"]
    skus = field_name(hold, 0, "skus")

    summary = alice_client.post(reverse("hold-review", args=[hold.pk]), review_form(hold, **{skus: typed}))
    confirmed = alice_client.post(
        reverse("hold-review", args=[hold.pk]), review_form(hold, confirm="yes", **{skus: typed})
    )

    assert summary.status_code == 422 and confirmed.status_code == 422
    assert message in summary.content.decode()
    assert not Decision.objects.filter(hold=hold).exists()


def test_a_nul_in_the_review_form_is_a_400_and_nothing_is_decided(alice_client, samples):
    hold = samples["h_12"]

    response = alice_client.post(
        reverse("hold-review", args=[hold.pk]), review_form(hold, confirm="yes", **{"item-0-comment": "ok\x00"})
    )

    assert_plain_400(response, "NUL")
    assert not Decision.objects.filter(hold=hold).exists()


# Notifications


def test_marking_a_huge_id_as_read_is_a_400_and_changes_nothing(client, samples, audrey):
    notify.expired([samples["h_12"]])
    client.force_login(audrey)

    response = client.post(reverse("notifications-read"), {"id": MANY_NINES})

    assert_plain_400(response, "id")
    assert in_app.unread_count(viewer_of(audrey)) == 1


def test_marking_one_notification_as_read_still_works(client, samples, audrey):
    notify.expired([samples["h_12"]])
    client.force_login(audrey)
    mine = Notification.objects.get(user=audrey, channel=Notification.Channel.IN_APP)

    response = client.post(reverse("notifications-read"), {"id": str(mine.pk)})

    assert response.status_code == 302 and in_app.unread_count(viewer_of(audrey)) == 0


# The admin


@pytest.mark.parametrize(
    "url, query",
    [
        ("admin:audit_auditevent_changelist", {"kind__exact": "\x00"}),
        ("admin:notifications_notification_changelist", {"status__exact": "\x00"}),
        ("admin:notifications_notification_changelist", {"q": "\x00"}),
        (
            "admin:autocomplete",
            {
                "app_label": "notifications",
                "model_name": "notificationattempt",
                "field_name": "notification",
                "term": "\x00",
            },
        ),
    ],
)
def test_a_nul_in_an_admin_filter_search_or_autocomplete_is_a_400(admin_client, url, query):
    response = admin_client.get(reverse(url), query)

    assert_plain_400(response, "NUL")


def test_admin_filters_and_autocomplete_still_answer(admin_client):
    filtered = admin_client.get(reverse("admin:audit_auditevent_changelist"), {"kind__exact": "claimed"})
    completed = admin_client.get(
        reverse("admin:autocomplete"),
        {"app_label": "notifications", "model_name": "notificationattempt", "field_name": "notification", "term": "x"},
    )

    assert filtered.status_code == 200 and completed.status_code == 200


def webhook_form(**overrides):
    return {
        "name": "ops",
        "url": "https://hooks.example.com/ops",
        "format": "slack",
        "secret": "",
        "events": ["expired"],
        "active": "on",
        **overrides,
    }


def test_a_webhook_channel_with_a_huge_number_for_events_is_a_field_error(admin_client):
    response = admin_client.post(
        reverse("admin:notifications_webhookchannel_add"), webhook_form(secret="s3cret", events=MANY_NINES)
    )

    assert response.status_code == 200
    assert "events" in response.context["adminform"].form.errors
    assert not WebhookChannel.objects.exists()


def test_a_webhook_channel_takes_its_events_from_the_offered_choices(admin_client):
    response = admin_client.post(
        reverse("admin:notifications_webhookchannel_add"),
        webhook_form(secret="s3cret", events=["expired", "not_applied"]),
    )

    assert response.status_code == 302
    assert WebhookChannel.objects.get().events == ["expired", "not_applied"]


# The webhook secret is write-only


def test_a_new_webhook_channel_needs_a_secret(admin_client):
    response = admin_client.post(reverse("admin:notifications_webhookchannel_add"), webhook_form())

    assert response.status_code == 200
    assert "secret" in response.context["adminform"].form.errors
    assert not WebhookChannel.objects.exists()


def test_the_webhook_secret_is_never_shown_back(admin_client):
    channel = WebhookChannel.objects.create(
        name="ops", url="https://hooks.example.com/ops", secret="s3cret-value", events=["expired"]
    )

    page = admin_client.get(reverse("admin:notifications_webhookchannel_change", args=[channel.pk])).content.decode()

    assert "s3cret-value" not in page
    assert 'type="password"' in page and "leave it blank to keep the current one" in page


def test_a_blank_secret_on_change_keeps_the_secret_and_a_new_one_replaces_it(admin_client):
    channel = WebhookChannel.objects.create(
        name="ops", url="https://hooks.example.com/ops", secret="s3cret-value", events=["expired"]
    )
    change = reverse("admin:notifications_webhookchannel_change", args=[channel.pk])

    kept = admin_client.post(change, webhook_form(url="https://hooks.example.com/new"))
    channel.refresh_from_db()
    assert kept.status_code == 302
    assert (channel.url, channel.secret) == ("https://hooks.example.com/new", "s3cret-value")

    replaced = admin_client.post(change, webhook_form(secret="rotated"))
    channel.refresh_from_db()
    assert replaced.status_code == 302 and channel.secret == "rotated"


@pytest.mark.parametrize(
    "url, name, missing",
    [
        ("hold-approve", "approval", "say which approval you agree with"),
        ("approval-undo", "approval", "say which approval to take back"),
        ("decision-undo", "decision", "say which decision to undo"),
    ],
)
@pytest.mark.parametrize("posted", ["", "0", "x"])
def test_an_action_that_posts_no_usable_id_is_a_400_and_changes_nothing(
    alice_client, samples, url, name, missing, posted
):
    hold = samples["h_12"]

    response = alice_client.post(reverse(url, args=[hold.pk]), {name: posted})

    assert_plain_400(response, name, *([missing] if posted == "" else []))
    assert not hold.decisions.exists()
