"""Opening a hold, and confirming a decision on its page, through the API or by a Slack press, read the hold from the
platform when the mirror is a few seconds old: a hold decided elsewhere shows as decided the moment a reviewer opens
it, and a decision sent for it is refused at once, before any sync knows."""

import json
import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from audit.models import EventKind
from holds.links import action_links
from holds.mirror import fresh
from holds.models import Decision, DecisionChannel, Hold
from slackapp import payloads, pressing
from tests.helpers.api import approve_every_item, bearer, token_of
from tests.helpers.approvals_setup import decision_posts
from tests.helpers.fake_slack import button_press, linked
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


def reject_on_the_platform(platform_state, hold: Hold, by: str) -> None:
    """Someone rejects the hold in another tool: the platform has it decided, the mirror does not know yet."""
    body = {"items": [{"id": item.item_id, "action": "reject"} for item in hold.items.all()], "decided_by": by}
    assert platform_state.decide("default", hold.hold_id, body, "elsewhere")[0] == 200
    age_the_mirror(hold)


def test_an_api_approval_of_a_hold_rejected_on_the_platform_is_a_409_at_once_and_stores_nothing(
    client, samples, alice, platform_state
):
    hold = samples["h_12"]
    reject_on_the_platform(platform_state, hold, "carol@example.com")

    answer = client.post(
        f"/api/v1/holds/{hold.pk}/decision",
        json.dumps(approve_every_item(hold)),
        content_type="application/json",
        **bearer(token_of(alice)),
    )

    assert answer.status_code == 409 and answer["Content-Type"] == "application/problem+json"
    assert "decided by carol@example.com" in answer.json()["detail"]
    assert not Decision.objects.exists() and decision_posts(platform_state) == []
    assert Hold.objects.get(pk=hold.pk).status == "decided"


def test_a_slack_press_on_a_hold_rejected_on_the_platform_answers_already_decided_and_stores_nothing(
    samples, alice, platform_state, slack_app
):
    hold = samples["h_12"]
    linked(alice, "U0ALICE")
    value = action_links.make(hold, "approve", channel=DecisionChannel.SLACK)
    press = payloads.read(json.dumps(button_press(value, "approve", slack_app.response_url())))
    reject_on_the_platform(platform_state, hold, "carol@example.com")

    answer = pressing.handle(press)

    assert "This hold was decided by carol@example.com" in answer and "Nothing was sent" in answer
    assert slack_app.texts(press.response_url)[0] == answer
    assert not Decision.objects.exists() and decision_posts(platform_state) == []
