"""The undo window: a sent decision waits UNDO_SECONDS before delivery, and its reviewer may take it back meanwhile."""

import contextlib
import random
import time
from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds import lifecycle
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.mirror import sync
from holds.models import Decision, Hold
from notifications.models import Notification
from reviewqueue.celery import app as celery_app
from tests.helpers.duplicates import every_duplicate
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import confirm, field_name, review_form, send, summary_of
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def undo_window(settings):
    settings.UNDO_SECONDS = 10
    return timedelta(seconds=10)


def approve_all(hold):
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def posted_decisions(platform_state, hold):
    return [
        r for r in platform_state.requests if r["method"] == "POST" and f"/holds/{hold.hold_id}/decision" in r["path"]
    ]


# The window, in the domain


def test_a_sent_decision_waits_for_the_window_before_delivery_starts(
    samples, alice, platform_client, platform_state, undo_window
):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    early = delivery.deliver(decision.pk, platform_client)
    nothing_posted_yet = posted_decisions(platform_state, hold) == []
    with time_machine.travel(decision.undo_until + timedelta(milliseconds=1)):
        delivery.deliver(decision.pk, platform_client)

    decision.refresh_from_db()
    assert decision.undo_until == decision.created_at + undo_window
    assert 9 < early <= 10  # a task that fires early waits for the rest of the window
    assert nothing_posted_yet
    assert decision.state == "applied" and decision.delivery_started_at >= decision.undo_until
    assert len(posted_decisions(platform_state, hold)) == 1


def test_undo_withdraws_the_decision_and_nothing_ever_reaches_the_platform(
    samples, alice, platform_client, platform_state, undo_window
):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    decisions.withdraw(decision.pk, alice)
    with time_machine.travel(decision.undo_until + timedelta(minutes=30)):
        delivered = delivery.deliver(decision.pk, platform_client)
        requeued = delivery.due_for_requeue()
        alerted = delivery.alert_undelivered()

    decision.refresh_from_db()
    assert decision.state == "withdrawn" and decision.finished_at is not None
    assert delivered is None and posted_decisions(platform_state, hold) == []
    assert requeued == [] and alerted == []
    assert not Notification.objects.filter(decision=decision).exists()


def test_after_undo_the_hold_is_the_reviewers_to_decide_again(samples, alice, undo_window):
    hold = samples["h_12"]
    first = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    decisions.withdraw(first.pk, alice)
    hold.refresh_from_db()
    claimant = hold.claimant(timezone.now())
    live_after_undo = hold.live_decision()
    second = decisions.submit(hold, alice, [ItemChoice("A-1001", "reject", comment="wrong customer")])

    assert claimant == alice and live_after_undo is None
    assert second.state == "sending" and hold.live_decision() == second


def test_only_a_hold_decided_before_is_searched_for_a_live_decision(samples, alice, undo_window):
    hold = samples["h_12"]
    with CaptureQueriesContext(connection) as first_time:
        first = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    decisions.withdraw(first.pk, alice)
    with CaptureQueriesContext(connection) as after_undo:
        decisions.submit(hold, alice, [ItemChoice("A-1001", "reject", comment="wrong customer")])

    def decisions_read(queries):
        return [query["sql"] for query in queries if query["sql"].startswith('SELECT "holds_decision"."id"')]

    assert decisions_read(first_time.captured_queries) == []
    assert len(decisions_read(after_undo.captured_queries)) == 1


def test_undoing_twice_is_harmless(samples, alice, undo_window):
    decision = decisions.submit(
        samples["h_12"], alice, approve_all(samples["h_12"]), duplicates_checked=every_duplicate(samples["h_12"])
    )

    decisions.withdraw(decision.pk, alice)
    again = decisions.withdraw(decision.pk, alice)

    assert again.state == "withdrawn"
    assert AuditEvent.objects.filter(kind=EventKind.WITHDRAWN, decision=decision).count() == 1


def test_only_the_reviewer_who_sent_it_may_undo(samples, alice, bob, undo_window):
    decision = decisions.submit(
        samples["h_12"], alice, approve_all(samples["h_12"]), duplicates_checked=every_duplicate(samples["h_12"])
    )

    with pytest.raises(decisions.DecisionRefused, match="Only the reviewer who sent"):
        decisions.withdraw(decision.pk, bob)

    assert Decision.objects.get(pk=decision.pk).state == "sending"


def test_undo_is_refused_once_the_window_is_over(samples, alice, undo_window):
    decision = decisions.submit(
        samples["h_12"], alice, approve_all(samples["h_12"]), duplicates_checked=every_duplicate(samples["h_12"])
    )

    with time_machine.travel(decision.undo_until), pytest.raises(decisions.TooLateToUndo):
        decisions.withdraw(decision.pk, alice)

    assert Decision.objects.get(pk=decision.pk).state == "sending"


def test_undo_is_refused_once_an_attempt_started_even_by_a_clock_still_inside_the_window(
    samples, alice, platform_client, platform_state, undo_window
):
    """The row, not the clock, decides: a worker whose clock runs ahead may start early by the web's clock."""
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    platform_state.push_faults([{"status": 503, "path_contains": "/decision"}])
    with time_machine.travel(decision.undo_until):
        delivery.deliver(decision.pk, platform_client)  # an attempt was made; it will be retried

    with pytest.raises(decisions.TooLateToUndo):
        decisions.withdraw(decision.pk, alice, now=decision.undo_until - timedelta(seconds=1))

    assert Decision.objects.get(pk=decision.pk).state == "sending"
    assert len(posted_decisions(platform_state, hold)) == 1


def test_without_a_window_a_decision_is_sent_at_once_and_offers_no_undo(
    samples, alice, alice_client, platform_client, settings
):
    settings.UNDO_SECONDS = 0
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()
    delivery.deliver(decision.pk, platform_client)

    assert decision.undo_until is None and decision.next_attempt_at == decision.created_at
    assert "undo-form" not in page and "Sending to the platform" in page
    assert Decision.objects.get(pk=decision.pk).state == "applied"
    with pytest.raises(decisions.TooLateToUndo):
        decisions.withdraw(decision.pk, alice)


# The window, in the browser without JavaScript


def test_the_hold_page_offers_undo_with_the_seconds_left(alice_client, samples, undo_window):
    hold = samples["h_12"]
    confirm(alice_client, hold)

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()
    partial = alice_client.get(reverse("decision-status", args=[hold.pk]), HTTP_HX_REQUEST="true").content.decode()

    decision = Decision.objects.get(hold=hold)
    assert fields_of(page, "undo-form")["decision"] == [str(decision.pk)]
    assert 'id="undo-button"' in page and 'class="undo-countdown"' in page
    assert "Sending in" in page and ("10 s" in page or "9 s" in page)
    # Polled once, when the window ends, not every few seconds (which would replace the button under the mouse).
    assert 'hx-trigger="load delay:' in partial and 'hx-trigger="every' not in partial


def test_another_reviewer_sees_the_countdown_but_no_undo_button(alice_client, client, bob, samples, undo_window):
    hold = samples["h_12"]
    confirm(alice_client, hold)
    client.force_login(bob)

    page = client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert "Sending in" in page and "undo-form" not in page


def test_undo_works_as_a_plain_form_post(alice_client, samples, platform_state, undo_window):
    hold = samples["h_12"]
    confirm(alice_client, hold)
    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    undone = alice_client.post(reverse("decision-undo", args=[hold.pk]), fields_of(page, "undo-form"))
    after = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert undone.status_code == 302 and undone.url == reverse("hold", args=[hold.pk])
    assert Decision.objects.get(hold=hold).state == "withdrawn"
    assert "nothing was sent to the platform" in after and 'id="decide-form"' in after
    assert posted_decisions(platform_state, hold) == []


def test_undo_gives_back_the_form_as_the_reviewer_wrote_it(alice_client, samples, undo_window):
    hold = samples["h_14"]  # its agent allows edits
    amount = field_name(hold, 0, "amount")
    confirm(alice_client, hold, **{amount: "20.00", "item-0-comment": "Half now, as agreed."})
    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()
    alice_client.post(reverse("decision-undo", args=[hold.pk]), fields_of(page, "undo-form"))

    again = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()
    form = fields_of(again, "decide-form")

    assert form[amount] == ["20.00"] and form["item-0-action"] == ["approve"]
    assert ">Half now, as agreed.</textarea>" in again


def test_another_reviewer_gets_a_blank_form_after_an_undo(alice_client, client, bob, samples, undo_window):
    hold = samples["h_14"]
    amount = field_name(hold, 0, "amount")
    confirm(alice_client, hold, **{amount: "20.00"})
    decision = Decision.objects.get(hold=hold)
    decisions.withdraw(decision.pk, decision.reviewer)
    lifecycle.release_claim(hold, decision.reviewer)  # alice walks away; bob opens the hold
    client.force_login(bob)

    form = fields_of(client.get(reverse("hold", args=[hold.pk])).content.decode(), "decide-form")

    assert form[amount] != ["20.00"] and "item-0-action" not in form


def test_undo_too_late_says_so(alice_client, samples, undo_window):
    hold = samples["h_12"]
    confirm(alice_client, hold)
    decision = Decision.objects.get(hold=hold)

    with time_machine.travel(decision.undo_until + timedelta(seconds=1)):
        response = alice_client.post(reverse("decision-undo", args=[hold.pk]), {"decision": decision.pk})

    assert response.status_code == 409 and "Too late to undo" in response.content.decode()
    assert Decision.objects.get(pk=decision.pk).state == "sending"


def test_after_an_undo_the_old_confirm_sends_nothing_and_a_fresh_summary_is_needed(alice_client, samples, undo_window):
    hold = samples["h_12"]
    shown = summary_of(alice_client, hold, review_form(hold))
    send(alice_client, hold, shown)
    first = Decision.objects.get(hold=hold)
    alice_client.post(reverse("decision-undo", args=[hold.pk]), {"decision": first.pk})

    replayed = send(alice_client, hold, shown)
    after_replay = list(Decision.objects.filter(hold=hold).values_list("state", flat=True))
    fresh = send(alice_client, hold, summary_of(alice_client, hold, review_form(hold)))

    assert replayed.status_code == 409
    assert "decided since your summary was made" in replayed.content.decode()
    assert 'id="decide-form"' in replayed.content.decode()  # the reviewer checks it again, for a fresh summary
    assert after_replay == ["withdrawn"]
    assert fresh.status_code == 302 and Decision.objects.filter(hold=hold, state="sending").count() == 1


def test_undoing_another_reviewers_decision_is_refused(alice_client, client, bob, samples, undo_window):
    hold = samples["h_12"]
    confirm(alice_client, hold)
    decision = Decision.objects.get(hold=hold)
    client.force_login(bob)

    response = client.post(reverse("decision-undo", args=[hold.pk]), {"decision": decision.pk})

    assert response.status_code == 409 and Decision.objects.get(pk=decision.pk).state == "sending"


@pytest.mark.parametrize("value", ["", "abc", "0", "-1", "99999999999999999999999"])
def test_a_bad_decision_id_is_a_400(alice_client, samples, value):
    response = alice_client.post(reverse("decision-undo", args=[samples["h_12"].pk]), {"decision": value})

    assert response.status_code == 400


def test_a_decision_of_another_hold_is_not_found(alice_client, samples, undo_window):
    confirm(alice_client, samples["h_12"])
    decision = Decision.objects.get(hold=samples["h_12"])

    response = alice_client.post(reverse("decision-undo", args=[samples["h_13"].pk]), {"decision": decision.pk})

    assert response.status_code == 404 and Decision.objects.get(pk=decision.pk).state == "sending"


def test_undo_needs_a_post(alice_client, samples):
    assert alice_client.get(reverse("decision-undo", args=[samples["h_12"].pk])).status_code == 405


# The window against a real worker


@pytest.mark.django_db(transaction=True)
def test_a_decision_undone_in_the_window_never_reaches_the_worker_or_the_platform(
    celery_processes, samples, alice, platform_state, settings
):
    settings.UNDO_SECONDS = 2
    hold = samples["h_12"]
    celery_processes("worker")

    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    decisions.withdraw(decision.pk, alice)
    time.sleep(settings.UNDO_SECONDS + 3)  # the queued task has fired by now, and found nothing to send

    assert Decision.objects.get(pk=decision.pk).state == "withdrawn"
    assert posted_decisions(platform_state, hold) == []


@pytest.mark.django_db(transaction=True)
def test_a_decision_not_undone_is_applied_once_the_window_is_over(
    celery_processes, samples, alice, platform_state, settings
):
    settings.UNDO_SECONDS = 2
    hold = samples["h_12"]
    celery_processes("worker")

    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    applied = wait_until(lambda: Decision.objects.filter(pk=decision.pk, state="applied").first())
    assert applied.delivery_started_at >= applied.undo_until
    assert len(posted_decisions(platform_state, hold)) == 1


@pytest.mark.long
@pytest.mark.django_db(transaction=True)
def test_undo_at_the_very_end_of_the_window_either_withdraws_or_sends_never_both(
    celery_processes, platform_client, platform_state, alice, settings
):
    """20 decisions, each undone within ±0.15 s of its window's end while the worker's task fires at that end.

    They are sent 0.32 s apart, more than the jitter's span, so their windows end in the order they were sent and
    each undo comes in its own turn; the window outlasts the sending of all 20, so no undo is ever late.
    """
    settings.UNDO_SECONDS = 7
    platform_state.generate("default", 20)
    sync.sync_env(platform_client, "default")
    celery_processes("worker")
    wait_until(_worker_ready, timeout=30)
    jitter = random.Random(10)
    sent = []
    for hold in Hold.objects.filter(hold_id__startswith="h_g", status="open").order_by("pk")[:20]:
        sent.append(decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold)))
        time.sleep(0.32)

    for decision in sent:
        offset = jitter.uniform(-0.15, 0.15)
        time.sleep(max(0.0, (decision.undo_until - timezone.now()).total_seconds() + offset))
        with contextlib.suppress(decisions.TooLateToUndo):
            decisions.withdraw(decision.pk, alice)
    results = []
    for decision in sent:
        final = wait_until(
            lambda decision=decision: Decision.objects.filter(
                pk=decision.pk, state__in=["withdrawn", "applied"]
            ).first()
        )
        results.append((final.state, len(posted_decisions(platform_state, decision.hold))))

    time.sleep(1)  # a late POST would show up here
    for (state, posts), hold in zip(
        results, Hold.objects.filter(hold_id__startswith="h_g").order_by("pk")[:20], strict=True
    ):
        assert (state, posts) in {("withdrawn", 0), ("applied", 1)}
        assert len(posted_decisions(platform_state, hold)) == posts
    assert len(results) == 20
    assert {state for state, _ in results} == {"withdrawn", "applied"}  # the edge was really reached from both sides


def _worker_ready() -> bool:
    """The worker takes tasks (so the first round's task is not late): ping it through Celery's control channel."""
    return bool(celery_app.control.ping(timeout=0.5))
