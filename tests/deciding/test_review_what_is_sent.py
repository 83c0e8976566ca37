"""What the reviewer saw is what is sent: the summary binds a decision to the hold, choices and reviewer it was
shown for."""

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from holds.deciding import deciders
from holds.models import Decision, Hold
from tests.helpers.reviewing import checked, confirm, field_name, review_form, send, summary_of
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db


# What the reviewer saw is what is sent


def posted_hold_ids(platform_state) -> list[str]:
    return [r["path"].split("/holds/")[1].split("/")[0] for r in platform_state.requests if r["method"] == "POST"]


@pytest.mark.django_db(transaction=True)
def test_a_confirm_forged_without_the_summary_shows_the_summary_and_sends_nothing(
    celery_processes, immediate_delivery, alice_client, samples, platform_state
):
    celery_processes("worker")
    forged_hold, honest_hold = samples["h_12"], samples["h_17"]

    forged = alice_client.post(
        reverse("hold-review", args=[forged_hold.pk]), {"item-0-action": "approve", "confirm": "yes"}
    )
    confirm(alice_client, honest_hold)
    wait_until(lambda: Decision.objects.filter(hold=honest_hold, state="applied").exists())

    html = forged.content.decode()
    assert forged.status_code == 409
    assert (
        "Check your decision" in html and "Nothing was sent: the decision did not match a summary shown to you." in html
    )
    assert not Decision.objects.filter(hold=forged_hold).exists()
    assert posted_hold_ids(platform_state) == ["h_17"]


@pytest.mark.parametrize(
    "key, value, stored",
    [
        ("item-0-action", "reject", ("reject", "")),
        ("amount", "20.00", ("edit", "")),
        ("item-0-comment", "approved by the manager", ("approve", "approved by the manager")),
    ],
)
def test_a_digest_shown_for_other_choices_does_not_send_the_changed_ones(alice_client, samples, key, value, stored):
    hold = samples["h_12"]
    shown = summary_of(alice_client, hold, review_form(hold))
    name = field_name(hold, 0, key) if key == "amount" else key

    refused = send(alice_client, hold, {**shown, name: value})

    assert refused.status_code == 409 and "Nothing was sent" in refused.content.decode()
    assert not Decision.objects.exists()
    send(alice_client, hold, checked(refused.content.decode()))  # checked on the new summary
    item = Decision.objects.get(hold=hold).items.get()
    assert (item.action, item.comment) == stored


def test_a_summary_older_than_claim_minutes_sends_nothing_and_is_shown_again(alice_client, samples, settings):
    hold = samples["h_12"]
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        shown = summary_of(alice_client, hold, review_form(hold))
        traveller.shift(timedelta(minutes=settings.CLAIM_MINUTES, seconds=1))

        expired = send(alice_client, hold, shown)
        nothing_stored = not Decision.objects.exists()
        fresh = send(alice_client, hold, checked(expired.content.decode()))

    assert expired.status_code == 409 and nothing_stored
    assert "Nothing was sent: this summary is more than 10 minutes old." in expired.content.decode()
    assert fresh.status_code == 302 and Decision.objects.filter(hold=hold).count() == 1


def test_a_digest_shown_for_one_hold_does_not_decide_its_twin(alice_client, platform_client, platform_state):
    from holds.mirror import sync

    item = {"id": "A-1", "title": "A-1 · 10.00", "data": {"order_id": "A-1", "amount": "10.00"}}
    for hold_id in ("h_a", "h_b"):
        platform_state.add_hold("default", {"hold_id": hold_id, "items": [item]})
    sync.sync_env(platform_client, "default")
    first, twin = Hold.objects.get(hold_id="h_a"), Hold.objects.get(hold_id="h_b")
    shown_for_first = summary_of(alice_client, first, review_form(first))
    shown_for_twin = summary_of(alice_client, twin, review_form(twin))

    response = send(alice_client, twin, shown_for_first)

    assert {**shown_for_first, "digest": None, "csrfmiddlewaretoken": None, "duplicate": None} == {
        **shown_for_twin,
        "digest": None,
        "csrfmiddlewaretoken": None,
        "duplicate": None,  # twins are possible duplicates of each other: each names the other
    }  # the same choices: only the hold differs
    assert response.status_code == 409
    assert not Decision.objects.exists()


def test_a_digest_shown_to_one_reviewer_does_not_let_another_send(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    shown_to_alice = summary_of(client, hold, review_form(hold))
    client.force_login(bob)

    response = send(client, hold, shown_to_alice)

    assert response.status_code == 409
    assert not Decision.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_racing_to_decide_an_unclaimed_hold_make_one_decision(alice, bob, samples):
    import threading

    from django.db import connection
    from django.test import Client

    for hold in (samples["h_12"], samples["h_13"], samples["h_17"]):
        ready = []
        for reviewer in (alice, bob):
            reviewer_client = Client()
            reviewer_client.force_login(reviewer)
            ready.append((reviewer.username, reviewer_client, summary_of(reviewer_client, hold, review_form(hold))))
        start, answers = threading.Barrier(len(ready)), {}

        def decide(username, reviewer_client, shown, hold=hold, start=start, answers=answers):
            start.wait()
            try:
                answers[username] = send(reviewer_client, hold, shown)
            finally:
                connection.close()

        racers = [threading.Thread(target=decide, args=racer) for racer in ready]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()

        decision = Decision.objects.get(hold=hold)
        loser = "bob" if decision.reviewer == alice else "alice"
        assert sorted(answer.status_code for answer in answers.values()) == [302, 409]
        assert f"Already decided by {deciders.reviewer_name(decision.reviewer)} at" in answers[loser].content.decode()


def test_a_reviewer_whose_claim_was_taken_over_cannot_decide(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    shown_to_alice = summary_of(client, hold, review_form(hold))
    client.force_login(bob)
    client.post(reverse("take-over", args=[hold.pk]))
    client.force_login(alice)

    response = send(client, hold, shown_to_alice)

    assert response.status_code == 409
    assert "Bob Brown is reviewing this hold; take it over first." in response.content.decode()
    assert not Decision.objects.exists()
    assert Hold.objects.get(pk=hold.pk).claimed_by == bob


def test_a_claim_that_timed_out_is_taken_by_the_reviewer_who_decides(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(bob)
    client.post(reverse("claim-hold", args=[hold.pk]))
    Hold.objects.filter(pk=hold.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    client.force_login(alice)

    response = confirm(client, hold)

    hold.refresh_from_db()
    assert response.status_code == 302
    assert Decision.objects.get(hold=hold).reviewer == alice
    assert hold.claimed_by is None
