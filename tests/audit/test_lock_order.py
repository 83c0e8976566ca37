"""Every audited change ends on the audit chain's head, the one row lock they all share, so every transaction takes its
locks in one order: a hold's row, its notifications, then the head. And PostgreSQL checks Django's foreign keys at
COMMIT, after the head: an audit row naming a hold locks that hold's row (FOR KEY SHARE) only then. A row locked as the
app locks rows (FOR NO KEY UPDATE) never stops that check.

Found by CI: a reviewer's approval held its hold's row and waited for the head, while a worker, which had audited a
notification sent about that hold, waited at COMMIT for the hold's row. PostgreSQL cancelled the approval. A worker
recording a message sent (its row, then the head) would have met a decision resolving that message (the head, then
its row) the same way."""

import threading

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from holds.deciding import decisions
from holds.models import Decision
from notifications import ending
from notifications.models import Notification
from tests.helpers.duplicates import every_duplicate
from tests.helpers.waiting import wait_until

APPROVE = [decisions.ItemChoice("call_1", "approve")]


@pytest.mark.django_db(transaction=True)
def test_a_worker_auditing_a_message_about_a_hold_commits_while_a_reviewer_decides_that_hold(refund, alice, bob):
    told = _message_about(refund, bob)
    decided, backend = [], []

    def reviewer_decides():
        try:
            connection.ensure_connection()
            backend.append(connection.connection.info.backend_pid)
            decided.append(decisions.submit(refund, alice, APPROVE, duplicates_checked=every_duplicate(refund)))
        except Exception as error:  # noqa: BLE001 (the test reads what happened to the reviewer)
            decided.append(error)
        finally:
            connection.close()

    reviewer = threading.Thread(target=reviewer_decides)
    with transaction.atomic():  # the worker's transaction: the message's end recorded and audited, the head its own
        ending.record([ending.End(told, 1, Notification.Status.SENT)])
        reviewer.start()
        wait_until(lambda: backend and _waits_for_a_lock(backend[0]), timeout=30)  # holding the hold, for the head
    reviewer.join(timeout=30)

    assert isinstance(decided[0], Decision), decided
    assert Notification.objects.get(pk=told.pk).status == Notification.Status.SENT


def _waits_for_a_lock(backend_pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted AND pid = %s", [backend_pid])
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db
def test_a_decision_resolves_the_messages_about_its_hold_before_it_takes_the_audit_chains_head(refund, alice, bob):
    told = _message_about(refund, bob)

    with CaptureQueriesContext(connection) as ran:
        decisions.submit(refund, alice, APPROVE, duplicates_checked=every_duplicate(refund))

    assert Notification.objects.get(pk=told.pk).resolved_at is not None
    assert _first(ran, 'UPDATE "holds_notification"') < _first(ran, 'FROM "audit_auditchainhead"')


@pytest.mark.django_db
def test_an_undo_reopens_the_messages_about_its_hold_before_it_takes_the_audit_chains_head(
    refund, alice, bob, settings
):
    settings.UNDO_SECONDS = 30
    told = _message_about(refund, bob)
    decision = decisions.submit(refund, alice, APPROVE, duplicates_checked=every_duplicate(refund))

    with CaptureQueriesContext(connection) as ran:
        decisions.withdraw(decision.pk, alice)

    assert Notification.objects.get(pk=told.pk).resolved_at is None
    assert _first(ran, 'UPDATE "holds_notification"') < _first(ran, 'FROM "audit_auditchainhead"')


def _message_about(hold, user) -> Notification:
    now = timezone.now()
    return Notification.objects.create(
        event="stage_waiting", subject_key=f"hold:{hold.pk}", channel="email", recipient_key=f"user:{user.pk}",
        user=user, hold=hold, title="Your approval is next", body="", created_at=now, next_attempt_at=now,
    )  # fmt: skip


def _first(ran: CaptureQueriesContext, fragment: str) -> int:
    return next(position for position, query in enumerate(ran.captured_queries) if fragment in query["sql"])
