"""The notification models moved from ``holds`` to ``notifications``: same tables, same rows, same content types."""

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone

from notifications.models import DigestState, Notification, NotificationSettings, WebhookChannel
from tests.helpers.migrating import back_to, bare_hold, from_nothing, latest, migrate


def before_the_move() -> list[tuple[str, str | None]]:
    """Holds as it was before notifications had an app of their own; every other app as it is now."""
    return back_to(("holds", "0005_sync_quarantine"), ("notifications", None))


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)  # migrating a database from nothing and on, slow in a busy run
def test_rows_written_under_holds_are_read_through_the_notifications_app():
    with from_nothing(before_the_move()) as old:
        webhook_type = old.get_model("contenttypes", "ContentType").objects.get(
            app_label="holds", model="webhookchannel"
        )
        now = timezone.now()
        user = old.get_model("auth", "User").objects.create(username="alice", email="alice@example.com")
        hold = bare_hold(
            old.get_model("holds", "Hold"), "h_1", agent="refunds", capability="refund", question="Refund?"
        )
        decision = old.get_model("holds", "Decision").objects.create(
            hold=hold,
            reviewer=user,
            created_at=now,
            next_attempt_at=now,
            state="not_applied",
        )
        webhook = old.get_model("holds", "WebhookChannel").objects.create(
            name="ops",
            url="https://hooks.example.com/ops",
            secret="s3cret",
            events=["expired"],
        )
        notification = old.get_model("holds", "Notification").objects.create(
            event="not_applied",
            subject_key=f"decision:{decision.pk}",
            channel="webhook",
            recipient_key=f"webhook:{webhook.pk}",
            webhook=webhook,
            hold=hold,
            decision=decision,
            title="Decision not applied",
            body="Refused",
            created_at=now,
            next_attempt_at=now,
            status="sent",
        )
        old.get_model("holds", "NotificationAttempt").objects.create(notification=notification, at=now, outcome="sent")
        old.get_model("holds", "NotificationSettings").objects.create(
            user=user, channels_by_event={"expired": ["email"]}
        )
        old.get_model("holds", "DigestState").objects.create(pk=1, started_at=now, last_run_at=now)
        old.get_model("admin", "LogEntry").objects.create(
            user=user,
            content_type=webhook_type,
            object_id=str(webhook.pk),
            object_repr="ops",
            action_flag=CHANGE,
        )

        migrate(latest())

        moved = WebhookChannel.objects.get(name="ops")
        assert (moved.pk, moved.secret, moved.events) == (webhook.pk, "s3cret", ["expired"])
        sent = Notification.objects.get(pk=notification.pk)
        assert (sent.webhook, sent.hold_id, sent.decision_id, sent.status) == (moved, hold.pk, decision.pk, "sent")
        assert [attempt.outcome for attempt in sent.attempts_made.all()] == ["sent"]
        assert NotificationSettings.objects.get(user_id=user.pk).channels_by_event == {"expired": ["email"]}
        assert DigestState.objects.get(pk=1).last_run_at == now
        assert WebhookChannel.objects.create(name="new", url="https://hooks.example.com/new", secret="x").pk > moved.pk

        # The content type moved rather than a new one being made: permissions and the admin's log still apply.
        assert ContentType.objects.get(pk=webhook_type.pk).model_class() is WebhookChannel
        assert Permission.objects.get(codename="change_webhookchannel").content_type_id == webhook_type.pk
        assert LogEntry.objects.get(object_repr="ops").get_edited_object() == moved
        tables = connection.introspection.table_names()
        assert "holds_notification" in tables and "notifications_notification" not in tables
