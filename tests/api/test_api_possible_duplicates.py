"""The API refuses to approve a possible duplicate with 409 ``possible-duplicate``, naming the ids the token's user
may see and counting the rest, until the request's ``duplicates_checked`` lists every one it named; a reject needs
none. The A-1001 sample holds, mirrored by a real sync from the simulator over HTTP."""

import json

import pytest

from audit.models import AuditEvent, EventKind
from holds.models import Decision
from reviewqueue import roles
from tests.helpers.api import bearer, token_of
from tests.helpers.users import make_user, scoped_group

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def approving(hold) -> dict:
    """Every item approved, no duplicates_checked."""
    return {"items": [{"id": item.item_id, "action": "approve"} for item in hold.items.all()]}


def decide(client, secret, hold, body):
    return client.post(
        f"/api/v1/holds/{hold.pk}/decision", json.dumps(body), content_type="application/json", **bearer(secret)
    )


def test_the_api_answers_409_possible_duplicate_then_201_with_duplicates_checked(client, samples, alice):
    hold, secret = samples["h_12"], token_of(alice)

    refused = decide(client, secret, hold, approving(hold))

    assert refused.status_code == 409 and refused["Content-Type"] == "application/problem+json"
    problem = refused.json()
    assert problem["type"] == "urn:reviewqueue:problem:possible-duplicate"
    assert sorted(problem["duplicates"]) == ["h_13", "h_14", "h_15"] and problem["more_duplicates"] == 0
    assert not Decision.objects.filter(hold=hold).exists()

    partly = decide(client, secret, hold, {**approving(hold), "duplicates_checked": ["h_13"]})
    assert partly.status_code == 409

    answer = decide(client, secret, hold, {**approving(hold), "duplicates_checked": problem["duplicates"]})
    assert answer.status_code == 201, answer.content
    event = AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED, hold_id="h_12")
    assert event.payload["channel"] == "api" and sorted(event.payload["duplicates_checked"]["holds"]) == [
        "h_13",
        "h_14",
        "h_15",
    ]


def test_a_token_out_of_scope_of_the_others_gets_a_count_never_their_ids(client, samples):
    scoped_group("LlamaIndex team", agent="llamaindex-*")
    erin = make_user("erin", roles.REVIEWERS, "LlamaIndex team")
    hold, secret = samples["h_12"], token_of(erin)

    problem = decide(client, secret, hold, approving(hold)).json()

    assert problem["duplicates"] == [] and problem["more_duplicates"] == 3
    assert "h_13" not in json.dumps(problem) and "h_14" not in json.dumps(problem)
    answer = decide(client, secret, hold, {**approving(hold), "duplicates_checked": []})
    assert answer.status_code == 201, answer.content


def test_a_reject_of_a_possible_duplicate_needs_no_check(client, samples, alice):
    hold = samples["h_15"]
    body = {"items": [{"id": item.item_id, "action": "reject"} for item in hold.items.all()]}
    assert decide(client, token_of(alice), hold, body).status_code == 201
