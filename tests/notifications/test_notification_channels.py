"""Notifications leave through real channels, sent by a real Celery worker: SMTP, signed webhooks, the bell."""

import hashlib
import hmac
import json
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from notifications import in_app, notify, sending, subscriptions
from notifications.models import Notification, WebhookChannel
from teams.scopes import viewer_of
from tests.helpers.processes import free_port
from tests.helpers.waiting import wait_until

SECRET = "webhook-secret"


@pytest.mark.django_db(transaction=True)
def test_email_goes_through_smtp_with_text_and_html_parts(celery_processes, smtp_server, samples, audrey, settings):
    controller, inbox = smtp_server
    celery_processes(
        "worker",
        EMAIL_BACKEND="smtp",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(controller.port),
        SITE_URL="https://review.example.com",
    )
    settings.SITE_URL = "https://review.example.com"

    notify.expired([samples["h_12"]])

    wait_until(lambda: inbox)
    message = inbox[0]
    parts = {
        part.get_content_type(): part.get_payload(decode=True).decode()
        for part in message.walk()
        if not part.is_multipart()
    }
    assert message["To"] == "audrey@example.com"
    assert message["Subject"].startswith("[Review Queue] Expired undecided: Refund 49.90 on order A-1001?")
    assert f"https://review.example.com/holds/{samples['h_12'].pk}/" in parts["text/plain"]
    assert f'href="https://review.example.com/holds/{samples["h_12"].pk}/"' in parts["text/html"]
    wait_until(lambda: Notification.objects.filter(channel="email", status="sent").exists())


@pytest.mark.django_db(transaction=True)
def test_a_webhook_gets_a_signed_slack_compatible_body(celery_processes, webhook_receiver, samples, audrey):
    WebhookChannel.objects.create(name="ops", url=webhook_receiver.url, secret=SECRET, events=["expired"])
    celery_processes("worker")

    notify.expired([samples["h_12"]])

    wait_until(lambda: webhook_receiver.received)
    headers, body = webhook_receiver.received[0]
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-ReviewQueue-Signature"], expected)
    payload = json.loads(body)
    assert payload["text"].startswith("Expired undecided: Refund 49.90 on order A-1001?")
    assert payload["event"] == "expired" and payload["hold"]["hold_id"] == "h_12"


@pytest.mark.django_db(transaction=True)
def test_a_failing_webhook_is_retried_then_sent_and_every_attempt_recorded(
    celery_processes, webhook_receiver, samples, audrey
):
    WebhookChannel.objects.create(name="ops", url=webhook_receiver.url, secret=SECRET, events=["expired"])
    webhook_receiver.statuses.extend([503, 500])
    celery_processes("worker", DELIVERY_RETRY_BASE_SECONDS="0.2")

    notify.expired([samples["h_12"]])

    sent = wait_until(lambda: Notification.objects.filter(channel="webhook", status="sent").first())
    assert [a.outcome for a in sent.attempts_made.all()] == ["retry", "retry", "sent"]
    assert len(webhook_receiver.received) == 3


@pytest.mark.django_db(transaction=True)
def test_a_webhook_that_refuses_is_marked_failing_for_admins(celery_processes, webhook_receiver, samples, audrey):
    hook = WebhookChannel.objects.create(name="ops", url=webhook_receiver.url, secret=SECRET, events=["expired"])
    webhook_receiver.statuses.append(410)
    celery_processes("worker")

    notify.expired([samples["h_12"]])

    wait_until(lambda: Notification.objects.filter(channel="webhook", status="failed").exists())
    hook.refresh_from_db()
    assert hook.failing and "410" in hook.last_error
    assert len(webhook_receiver.received) == 1


@pytest.mark.django_db
def test_an_unreachable_channel_gives_up_after_the_retry_limit(samples, audrey, settings):
    settings.NOTIFY_RETRY_LIMIT = 2
    WebhookChannel.objects.create(
        name="gone", url=f"http://127.0.0.1:{free_port()}/", secret=SECRET, events=["expired"]
    )
    notify.expired([samples["h_12"]])
    webhook = Notification.objects.get(channel="webhook")

    first = sending.send(webhook.pk)
    second = sending.send(webhook.pk)

    webhook.refresh_from_db()
    assert first > 0 and second is None
    assert webhook.status == "failed" and webhook.last_error == "unreachable"
    assert [a.outcome for a in webhook.attempts_made.all()] == ["retry", "failed"]


@pytest.mark.django_db
def test_the_bell_counts_unread_and_the_inbox_marks_them_read(client, samples, audrey):
    notify.expired([samples["h_12"]])
    notify.expired([samples["h_13"]])
    client.force_login(audrey)

    bell = client.get(reverse("notification-bell")).content.decode()
    inbox = client.get(reverse("notifications")).content.decode()
    client.post(reverse("notifications-read"))

    assert "Notifications: 2 unread" in bell
    assert "Expired undecided: Refund 49.90 on order A-1001?" in inbox
    assert "Notifications: 0 unread" in client.get(reverse("notification-bell")).content.decode()


@pytest.mark.django_db
def test_preferences_choose_the_channels_per_event(client, alice):
    client.force_login(alice)

    page = client.get(reverse("notification-preferences")).content.decode()
    saved = client.post(
        reverse("notification-preferences"), {"new_holds": ["email"], "expiring_soon": ["in_app"]}, follow=True
    )

    assert "New holds" in page and "Expired undecided" not in page  # auditors' event
    assert b"Your notification preferences are saved." in saved.content
    assert subscriptions.channels_for(alice, "new_holds") == ["email"]
    assert subscriptions.channels_for(alice, "expiring_soon") == ["in_app"]
    assert subscriptions.channels_for(alice, "not_applied") == []


@pytest.mark.django_db
def test_marking_a_mangled_id_as_read_is_a_400_and_changes_nothing(client, samples, audrey):
    notify.expired([samples["h_12"]])
    client.force_login(audrey)

    response = client.post(reverse("notifications-read"), {"id": "1 OR 1=1"})

    assert response.status_code == 400 and in_app.unread_count(viewer_of(audrey)) == 1


@pytest.mark.django_db
def test_agent_text_cannot_make_links_or_mentions_in_slack(samples, audrey):
    from notifications import channels

    Hold = samples["h_12"].__class__
    Hold.objects.filter(pk=samples["h_12"].pk).update(question="<!channel> <https://evil.example|Approve> & more")
    WebhookChannel.objects.create(name="ops", url="http://127.0.0.1:1/", secret=SECRET, events=["expired"])
    notify.expired([Hold.objects.get(pk=samples["h_12"].pk)])

    text = channels.webhook_body(Notification.objects.get(channel="webhook"))["text"]

    assert "&lt;!channel&gt; &lt;https://evil.example|Approve&gt; &amp; more" in text
    assert "<!channel>" not in text


@pytest.mark.django_db
def test_a_webhook_that_redirects_has_not_received_the_message(samples, audrey, webhook_receiver):
    webhook_receiver.statuses.append(301)
    WebhookChannel.objects.create(name="ops", url=webhook_receiver.url, secret=SECRET, events=["expired"])
    notify.expired([samples["h_12"]])

    sending.send(Notification.objects.get(channel="webhook").pk)

    assert Notification.objects.get(channel="webhook").status == "failed"


@pytest.mark.django_db
def test_a_hold_whose_sync_committed_late_is_in_the_next_digest(samples, alice, settings):
    import time_machine
    from django.utils import timezone

    settings.NOTIFY_BATCH_SECONDS = 60
    subscriptions.save_preferences(viewer_of(alice), {"new_holds": ["in_app"]})
    notify.digest_new_holds()
    start = timezone.now()
    with time_machine.travel(start + timedelta(seconds=61)):
        notify.digest_new_holds()  # the late hold's row is not committed yet: nothing to announce
    late = samples["h_12"].__class__.objects.filter(pk=samples["h_12"].pk)
    late.update(first_seen_at=start + timedelta(seconds=30))  # stamped inside the window that already ran

    with time_machine.travel(start + timedelta(seconds=122)):
        digests = notify.digest_new_holds()

    assert [h["hold_id"] for h in digests[0].holds] == ["h_12"]


@pytest.mark.django_db
def test_the_bell_of_a_reviewer_who_sees_every_hold_counts_their_own_unread_unresolved_in_app_messages(alice, bob):
    now = timezone.now()
    kinds = [
        (alice, Notification.Channel.IN_APP, None, None),  # unread
        (alice, Notification.Channel.IN_APP, now, None),  # read
        (alice, Notification.Channel.IN_APP, None, now),  # resolved
        (alice, Notification.Channel.EMAIL, None, None),  # another channel
        (bob, Notification.Channel.IN_APP, None, None),  # another reviewer's
    ]
    for number, (user, channel, read_at, resolved_at) in enumerate(kinds):
        Notification.objects.create(
            event="expired",
            subject_key=f"hold:{number}",
            channel=channel,
            recipient_key=f"user:{user.pk}",
            user=user,
            title="t",
            body="b",
            created_at=now,
            next_attempt_at=now,
            read_at=read_at,
            resolved_at=resolved_at,
        )

    unread_in_inbox = in_app.in_app_for(viewer_of(alice)).filter(read_at__isnull=True, resolved_at__isnull=True).count()

    assert in_app.unread_count(viewer_of(alice)) == unread_in_inbox == 1
