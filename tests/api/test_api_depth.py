"""Agent JSON of any depth: a body nested deeper than the API reads is a 400 problem document, and a stored hold or
decision nested deeper than the API shows is answered with its deeper part replaced by a marker, never a 500."""

import json

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from holds.mirror import sync
from holds.models import Decision, DecisionItem, Hold
from reviewqueue.showing import MAX_NESTING, TOO_DEEP
from tests.helpers.api import bearer, token_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]

PROBLEM = "application/problem+json"


def nested(depth: int, leaf="deep"):
    """``leaf`` inside ``depth`` arrays, one inside another."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def depth_of(value) -> int:
    """How many arrays the marker or leaf is inside, following each array's first element."""
    depth = 0
    while isinstance(value, list):
        value, depth = value[0], depth + 1
    return depth


def post(client, secret, path, body):
    return client.post(path, json.dumps(body), content_type="application/json", **bearer(secret))


def test_a_decision_whose_data_nests_256_levels_is_a_400_problem_and_stores_nothing(client, samples, alice):
    hold, secret = samples["h_12"], token_of(alice)
    body = {"items": [{"id": "A-1001", "action": "edit", "data": nested(256)}]}

    answer = post(client, secret, f"/api/v1/holds/{hold.pk}/decision", body)

    assert len(json.dumps(body)) < 2000
    assert answer.status_code == 400 and answer["Content-Type"] == PROBLEM
    assert answer.json()["errors"] == [
        {"field": "body", "message": f"the JSON nests arrays and objects more than {MAX_NESTING} levels deep"}
    ]
    assert not Decision.objects.exists()


def test_every_body_the_api_reads_stops_at_the_same_depth(client, samples, alice):
    hold, secret = samples["h_12"], token_of(alice)
    at_the_limit = {"text": "looked", "x": nested(MAX_NESTING - 1)}  # the body's own object is the first level
    too_deep = {"text": "looked", "x": nested(MAX_NESTING)}

    kept = post(client, secret, f"/api/v1/holds/{hold.pk}/notes", at_the_limit)
    refused = post(client, secret, f"/api/v1/holds/{hold.pk}/notes", too_deep)
    assigned = post(client, secret, f"/api/v1/holds/{hold.pk}/assignment", {"user": "alice", "x": nested(5000)})

    assert kept.status_code == 201
    assert refused.status_code == assigned.status_code == 400
    assert refused.json()["errors"][0]["field"] == assigned.json()["errors"][0]["field"] == "body"


def test_a_body_past_the_upload_limit_is_a_413_problem(client, samples, alice):
    body = {"text": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)}

    answer = post(client, token_of(alice), f"/api/v1/holds/{samples['h_12'].pk}/notes", body)

    assert answer.status_code == 413 and answer["Content-Type"] == PROBLEM


def test_a_run_whose_input_nests_300_levels_is_shown_cut_with_a_marker_on_the_api_and_the_page(
    client, platform_state, platform_client, alice
):
    platform_state.add_hold("default", {"hold_id": "h_deep_run", "customer_message": nested(300)})
    sync.sync_env(platform_client, "default")
    hold = Hold.objects.get(hold_id="h_deep_run")

    answer = client.get(f"/api/v1/holds/{hold.pk}", **bearer(token_of(alice)))
    client.force_login(alice)
    page, panel = client.get(reverse("hold", args=[hold.pk])), client.get(reverse("run-context", args=[hold.pk]))

    assert answer.status_code == 200, answer.content
    message = answer.json()["run"]["input"]["message"]
    assert depth_of(message) == MAX_NESTING - 2  # the run and its input are the first two levels
    assert json.dumps(message).endswith(json.dumps(TOO_DEEP) + "]" * (MAX_NESTING - 2))
    assert page.status_code == panel.status_code == 200
    assert b"The platform has no details for this run" not in panel.content and b"run-status" in panel.content


def test_a_stored_run_or_edit_nested_deeper_than_the_api_shows_is_answered_with_the_marker(
    client, samples, alice, settings
):
    """As kept before the API's depth, or as the hold page's form may store an edit: hundreds of levels deep."""
    settings.UNDO_SECONDS = 30
    hold, secret = samples["h_12"], token_of(alice)
    made = post(client, secret, f"/api/v1/holds/{hold.pk}/decision", {"items": [{"id": "A-1001", "action": "reject"}]})
    DecisionItem.objects.filter(decision_id=made.json()["decision"]["id"]).update(data={"note": nested(400)})
    deep_run = {"run_id": hold.run_id, "input": nested(600)}
    Hold.objects.filter(pk=hold.pk).update(run_snapshot=deep_run, run_fetched_at=timezone.now())

    read = client.get(f"/api/v1/holds/{hold.pk}", **bearer(secret))
    decision = client.get(made["Location"], **bearer(secret))

    assert read.status_code == decision.status_code == 200
    assert depth_of(read.json()["run"]["input"]) == MAX_NESTING - 1
    assert depth_of(decision.json()["items"][0]["data"]["note"]) == MAX_NESTING - 1
    assert read.json()["decision"]["items"] == decision.json()["items"]
