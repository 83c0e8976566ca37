"""A stored decision reaches the platform exactly once, whatever fails on the way."""

from datetime import timedelta

import pytest
import redis
import time_machine
from django.utils import timezone

from holds import tasks
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.models import Decision, Hold
from reviewqueue import backoff
from tests.helpers.duplicates import every_duplicate
from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def approve_all(hold):
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def posted_decisions(platform_state, hold):
    return [
        r for r in platform_state.requests if r["method"] == "POST" and f"/holds/{hold.hold_id}/decision" in r["path"]
    ]


def test_an_applied_decision_records_the_platforms_answer(samples, alice, platform_client, platform_state):
    hold = samples["h_13"]
    choices = [
        ItemChoice("toolu_01A9xQ2mZ", "approve"),
        ItemChoice(
            "toolu_01B7kR4pW", "edit", {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}, "partial"
        ),
    ]
    decision = decisions.submit(hold, alice, choices, duplicates_checked=every_duplicate(hold))

    assert delivery.deliver(decision.pk, platform_client) is None

    decision.refresh_from_db()
    hold.refresh_from_db()
    assert decision.state == "applied" and decision.attempts == 1
    assert hold.status == "decided" and hold.decided_by == "alice@example.com"
    assert posted_decisions(platform_state, hold)[0]["body"] == {
        "items": [
            {"id": "toolu_01A9xQ2mZ", "action": "approve"},
            {
                "id": "toolu_01B7kR4pW",
                "action": "edit",
                "data": {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"},
                "comment": "partial",
            },
        ],
        "decided_by": "alice@example.com",
    }


def test_decided_elsewhere_records_who_decided_instead(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    delivery.deliver(decision.pk, platform_client)

    decision.refresh_from_db()
    hold.refresh_from_db()
    assert (decision.state, decision.outcome) == ("not_applied", "decided_elsewhere")
    assert "Decided by bob@example.com at" in decision.outcome_message
    assert hold.status == "decided" and hold.decided_by == "bob@example.com"


def test_a_hold_expired_early_on_the_platform_is_not_applied(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    platform_state.expire("default", "h_12")

    delivery.deliver(decision.pk, platform_client)

    decision.refresh_from_db()
    assert decision.outcome == "expired" and "the agent was told nobody decided" in decision.outcome_message


def test_an_invalid_decision_keeps_the_platforms_message(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    decision.items.update(item_id="A-9999")

    delivery.deliver(decision.pk, platform_client)

    decision.refresh_from_db()
    assert decision.outcome == "invalid" and "A-9999" in decision.outcome_message


def test_an_unknown_hold_is_not_found(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    Hold.objects.filter(pk=hold.pk).update(hold_id="h_gone")

    delivery.deliver(decision.pk, platform_client)

    decision.refresh_from_db()
    assert decision.outcome == "not_found"


def test_an_unavailable_platform_schedules_a_retry_with_the_same_key(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    platform_state.push_faults([{"status": 503, "path_contains": "/decision"}])

    delay = delivery.deliver(decision.pk, platform_client)
    with time_machine.travel(timezone.now() + timedelta(seconds=delay)):
        delivery.deliver(decision.pk, platform_client)

    decision.refresh_from_db()
    keys = {r["headers"]["idempotency-key"] for r in posted_decisions(platform_state, hold)}
    assert delay is not None and delay > 0
    assert decision.state == "applied" and decision.attempts == 2
    assert keys == {str(decision.idempotency_key)}
    assert list(decision.delivery_attempts.values_list("outcome", flat=True)) == ["retry", "applied"]


def test_a_second_attempt_while_the_first_holds_the_lease_does_nothing(
    samples, alice, platform_client, platform_state, settings
):
    settings.DELIVERY_RETRY_BASE_SECONDS = 30  # the retry is due well after the clock slack
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    platform_state.push_faults([{"status": 503, "path_contains": "/decision"}])
    delivery.deliver(decision.pk, platform_client)  # fails; the retry is due in half a minute

    requeued_early = delivery.deliver(decision.pk, platform_client)

    assert requeued_early is None
    assert len(posted_decisions(platform_state, hold)) == 1
    assert Decision.objects.get(pk=decision.pk).state == "sending"


def test_delivering_twice_posts_once(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    delivery.deliver(decision.pk, platform_client)
    delivery.deliver(decision.pk, platform_client)

    assert len(posted_decisions(platform_state, hold)) == 1


def test_an_unreachable_platform_until_expiry_gives_up_saying_so(samples, alice, platform_client, platform_state):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    platform_state.push_faults([{"status": 503}])

    assert delivery.deliver(decision.pk, platform_client) is None

    decision.refresh_from_db()
    assert decision.outcome == "expired" and "while the platform could not be reached" in decision.outcome_message


def test_retry_delays_grow_exponentially_up_to_a_cap(settings):
    settings.DELIVERY_RETRY_BASE_SECONDS, settings.DELIVERY_RETRY_MAX_SECONDS = 2, 60

    delays = [backoff.retry_delay(attempts) for attempts in (1, 2, 3, 10)]

    assert 1.6 <= delays[0] <= 2.4 and 3.2 <= delays[1] <= 4.8 and 6.4 <= delays[2] <= 9.6
    assert delays[3] <= 72


def test_decisions_stuck_in_sending_are_found_for_requeueing(samples, alice):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    fresh = delivery.due_for_requeue()
    Decision.objects.filter(pk=decision.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=5))

    assert fresh == [] and delivery.due_for_requeue() == [decision.pk]


@pytest.mark.django_db(transaction=True)
def test_a_platform_outage_delays_a_decision_without_losing_it(celery_processes, samples, alice, platform_state):
    hold = samples["h_12"]
    platform_state.push_faults([{"status": 503, "path_contains": "/decision"}] * 3)
    celery_processes("worker", DELIVERY_RETRY_BASE_SECONDS="0.2")

    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    wait_until(lambda: Decision.objects.filter(pk=decision.pk, state="applied").exists())
    posts = posted_decisions(platform_state, hold)
    assert [r["status"] for r in posts] == [503, 503, 503, 200]
    assert {r["headers"]["idempotency-key"] for r in posts} == {str(decision.idempotency_key)}
    assert Decision.objects.get(pk=decision.pk).attempts == 4


@pytest.mark.django_db(transaction=True)
def test_a_decision_made_while_no_worker_runs_is_delivered_when_one_starts(
    celery_processes, samples, alice, platform_state
):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    assert posted_decisions(platform_state, hold) == []

    celery_processes("worker")

    wait_until(lambda: Decision.objects.filter(pk=decision.pk, state="applied").exists())
    assert len(posted_decisions(platform_state, hold)) == 1


@pytest.mark.django_db(transaction=True)
def test_a_decision_whose_task_was_lost_is_requeued(celery_processes, samples, alice, platform_state, settings):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()  # Redis lost the queued task
    Decision.objects.filter(pk=decision.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=5))
    celery_processes("worker")

    requeued = tasks.requeue_due_decisions()

    assert requeued == [decision.pk]
    wait_until(lambda: Decision.objects.filter(pk=decision.pk, state="applied").exists())
    assert len(posted_decisions(platform_state, hold)) == 1


@pytest.mark.long
@pytest.mark.django_db(transaction=True)
def test_a_decision_whose_worker_died_mid_post_is_sent_again_with_the_same_key(
    celery_processes, samples, alice, platform_state
):
    hold = samples["h_12"]
    # A short lease, and beat looking for lost deliveries often: a short test.
    quick_timeouts = {"AGENTOS_CONNECT_TIMEOUT": "1", "AGENTOS_READ_TIMEOUT": "3", "REQUEUE_SECONDS": "2"}
    platform_state.push_faults([{"delay": 2, "path_contains": "/decision"}])
    celery_processes("beat", REQUEUE_SECONDS="2")
    doomed = celery_processes("worker", **quick_timeouts)

    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    wait_until(lambda: platform_is_answering_a_delayed_post(platform_state))
    doomed.kill()  # SIGKILL while the platform is still answering: no ack, no result, the lease left in place
    doomed.wait()
    assert Decision.objects.get(pk=decision.pk).state == "sending"
    celery_processes("worker", **quick_timeouts)

    wait_until(lambda: Decision.objects.filter(pk=decision.pk, state="applied").exists(), timeout=60)
    posts = posted_decisions(platform_state, hold)
    decided = platform_state.get_hold("default", "h_12")
    assert len(posts) == 2 and {r["headers"]["idempotency-key"] for r in posts} == {str(decision.idempotency_key)}
    assert decided["status"] == "decided" and decided["decision"]["decided_by"] == "alice@example.com"
    assert list(decision.delivery_attempts.values_list("outcome", flat=True)) == ["applied"]


def platform_is_answering_a_delayed_post(platform_state) -> bool:
    """The injected delay was taken: the POST arrived and the platform is sleeping before it answers."""
    return platform_state.push_faults([]) == 0
