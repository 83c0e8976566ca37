"""Opening a hold, and confirming a decision, read the hold from the platform when the mirror is a few seconds old:
a hold decided elsewhere shows as decided the moment a reviewer opens it, before any sync knows."""

import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.models import EventKind
from holds.mirror import fresh
from holds.models import Decision, Hold
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import review_form

pytestmark = pytest.mark.django_db


def age_the_mirror(hold: Hold) -> None:
    """As if the last sync read the hold a little longer ago than ``fresh.FRESH_FOR``."""
    Hold.objects.filter(pk=hold.pk).update(last_synced_at=timezone.now() - fresh.FRESH_FOR - timedelta(seconds=1))


def reads_of(platform_state, hold: Hold) -> list[dict]:
    return [request for request in platform_state.requests if request["path"].endswith(f"/holds/{hold.hold_id}")]


def test_a_hold_decided_elsewhere_shows_as_decided_without_its_form_the_moment_it_is_opened(
    alice_client, samples, platform_state
):
    hold = samples["h_12"]
    platform_state.decide_elsewhere("default", hold.hold_id, "bob@example.com")
    age_the_mirror(hold)

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert "This hold was decided by bob@example.com" in page
    assert 'id="decide-form"' not in page
    hold.refresh_from_db()
    assert hold.status == "decided" and hold.decided_by == "bob@example.com"
    assert hold.audit_events.filter(kind=EventKind.DECIDED_ELSEWHERE).count() == 1


def test_a_hold_the_last_sync_just_read_is_shown_without_asking_the_platform(alice_client, samples, platform_state):
    hold = samples["h_12"]
    platform_state.clear_requests()

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert reads_of(platform_state, hold) == []
    assert hold.question in page


def test_a_hold_changed_elsewhere_is_shown_as_the_agent_now_asks_it(alice_client, samples, platform_state):
    hold = samples["h_13"]
    platform_state.get_hold("default", hold.hold_id)["question"] = "Refund 12.34 instead?"
    age_the_mirror(hold)

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert "Refund 12.34 instead?" in page
    assert Hold.objects.get(pk=hold.pk).question == "Refund 12.34 instead?"


def test_a_slow_platform_costs_the_reviewer_the_short_timeout_and_shows_the_mirror(
    alice_client, samples, platform_state
):
    hold = samples["h_12"]
    age_the_mirror(hold)
    platform_state.push_faults([{"delay": fresh.READ_TIMEOUT + 2, "path_contains": f"/holds/{hold.hold_id}"}])

    started = time.monotonic()
    response = alice_client.get(reverse("hold", args=[hold.pk]))
    waited = time.monotonic() - started

    assert response.status_code == 200 and hold.question in response.content.decode()
    assert waited < fresh.READ_TIMEOUT + 2
    assert Hold.objects.get(pk=hold.pk).status == "open"


def test_confirming_a_decision_on_a_hold_decided_elsewhere_stores_nothing_and_says_so(
    alice_client, samples, platform_state
):
    hold = samples["h_13"]
    summary = alice_client.post(reverse("hold-review", args=[hold.pk]), review_form(hold))
    shown = fields_of(summary.content.decode(), "confirm-form")
    platform_state.decide_elsewhere("default", hold.hold_id, "carol@example.com")
    age_the_mirror(hold)

    sent = alice_client.post(reverse("hold-review", args=[hold.pk]), {**shown, "confirm": "yes"})

    assert sent.status_code == 409
    assert "decided by carol@example.com" in sent.content.decode()
    assert not Decision.objects.filter(hold=hold).exists()
